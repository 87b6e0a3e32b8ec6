"""Errors the engine raises: each carries a message a person can act on."""


class EmbedExplorerError(Exception):
    """Base of every error the engine reports to the user in plain words."""


class ModelNotFoundError(EmbedExplorerError):
    """The path or Hub id names no model we can open."""


class OfflineError(ModelNotFoundError):
    """A Hub id is not in the local cache and we may not (or cannot) download it."""


class UnsafeCheckpointError(EmbedExplorerError):
    """The folder only has pickled weights, which we refuse to load."""


class CorruptWeightsError(EmbedExplorerError):
    """A safetensors file is truncated or its header is malformed."""


class TableNotFoundError(EmbedExplorerError):
    """No tensor in the weights looks like a token embedding table."""


class TokenizerMismatchError(EmbedExplorerError):
    """The tokenizer produces ids that the embedding table has no rows for."""


class TokenizerStartError(EmbedExplorerError):
    """A tokenizer process stopped before it said anything: it cannot run on this machine."""


class QueryError(EmbedExplorerError):
    """A request about the table cannot be answered (empty text, unknown id, ...)."""


class FamiliesError(EmbedExplorerError):
    """A families file cannot be read or has the wrong shape."""


class Interrupted(EmbedExplorerError):
    """A long job stopped because a newer request of its kind, or closing the window, asked it to."""
