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


class TokenizerFailedError(EmbedExplorerError):
    """The tokenizer failed inside, ran out of memory or took too long on a text; it was stopped."""


class QueryError(EmbedExplorerError):
    """A request about the table cannot be answered (empty text, unknown id, ...)."""


class FamiliesError(EmbedExplorerError):
    """A families file cannot be read or has the wrong shape."""


class FileChangedError(EmbedExplorerError):
    """A memory-mapped model file changed on disk after it was opened: its rows can no longer be read."""


class Interrupted(EmbedExplorerError):
    """A long job stopped because a newer request of its kind, or closing the window, asked it to."""


class UnsupportedModelError(EmbedExplorerError):
    """transformers has no class of its own for this architecture (and we never run a model's code)."""


class IncompleteModelError(ModelNotFoundError):
    """The folder has the embedding table but not every weight the whole model needs.

    ``model_bytes`` is the size of the whole model's weights when known, for a Download offer.
    """

    def __init__(self, message: str, model_bytes: int | None = None, model_weights: int | None = None) -> None:
        super().__init__(message)
        self.model_bytes = model_bytes
        self.model_weights = model_weights


class TextTooLongError(QueryError):
    """A text has more tokens than the model has positions for."""


class PlaceError(QueryError):
    """A token place outside the text (places count from 1, as the chapter does)."""
