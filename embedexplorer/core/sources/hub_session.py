"""What every Hub download shares: which files, the offline setting, bounded waits, one-sentence failures.

Every request goes through huggingface_hub's own session, endpoint, token and offline
settings; a repository with only pickled weights is refused before anything is fetched.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from fnmatch import fnmatch
from pathlib import Path

from ..common.constants import hub_offline
from ..common.errors import EmbedExplorerError, OfflineError, UnsafeCheckpointError
from ..formats.safetensors_io import PICKLE_FILES, PICKLE_PATTERNS, weight_files

# Only what an embedding table needs: never the pickled *.bin, never custom code.
DOWNLOAD_PATTERNS = [
    "config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.json",
    "vocab.txt",
    "merges.txt",
    "*.safetensors",
    "model.safetensors.index.json",
]


# Seconds a download waits on a Hub that accepted the connection but does not answer.
HUB_TIMEOUT_SECONDS = 20.0


@contextmanager
def quiet_hub() -> Iterator[None]:
    # A failure is reported once, by us, in one sentence: the hub's retry warnings stay quiet.
    hub_logger = logging.getLogger("huggingface_hub")
    level = hub_logger.level
    hub_logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        hub_logger.setLevel(level)


def refuse_without_safetensors(repo_id: str, names: set[str]) -> None:
    if any(n.endswith(".safetensors") and "/" not in n for n in names):
        return
    pickles = [n for n in PICKLE_FILES if n in names] or sorted(
        n for n in names if any(fnmatch(n, pattern) for pattern in PICKLE_PATTERNS)
    )
    if pickles:
        raise UnsafeCheckpointError(
            f"'{repo_id}' has no safetensors weights on the Hugging Face Hub, only pickled ones ({pickles[0]}). "
            "Loading a pickle can run arbitrary code, so EmbedExplorer does not download it."
        )
    raise OfflineError(f"'{repo_id}' has no weights on the Hugging Face Hub (no *.safetensors file).")


def refuse_if_offline(repo_id: str) -> None:
    """Say at once that a download cannot start when HF_HUB_OFFLINE is set."""
    if hub_offline():
        raise OfflineError(
            f"'{repo_id}' is not in the local Hugging Face cache and HF_HUB_OFFLINE is set. "
            "Open a local model folder instead, or unset HF_HUB_OFFLINE to download it."
        )


def bound_hub_waits() -> None:
    """Make every Hub request give up after HUB_TIMEOUT_SECONDS of silence.

    huggingface_hub asks for the repository's file list with no timeout at all, so a
    server that accepts the connection and never answers would hang the download
    forever. A request hook on its shared client fills in our limit wherever the
    request has none (file downloads keep their own).
    """
    from huggingface_hub import get_session

    session = get_session()
    hooks = session.event_hooks
    if _limit_request_wait not in hooks.get("request", []):
        hooks.setdefault("request", []).append(_limit_request_wait)
        session.event_hooks = hooks


def _limit_request_wait(request: object) -> None:
    extensions = getattr(request, "extensions", None)
    if not isinstance(extensions, dict):
        return
    limits = {"connect": None, "read": None, "write": None, "pool": None, **(extensions.get("timeout") or {})}
    extensions["timeout"] = {k: HUB_TIMEOUT_SECONDS if v is None else v for k, v in limits.items()}


def download_failure(repo_id: str, exc: BaseException) -> str:
    """One plain sentence for why a download failed: offline, no such model, or cut off."""
    names = {type(e).__name__ for e in _chain(exc)}
    logged_in = _has_token()
    if "GatedRepoError" in names:
        if logged_in:
            return (
                f"The Hugging Face Hub refused your token for '{repo_id}': the model is gated. "
                "Ask for access on its page on the Hub, or log in with a token that has it (hf auth login)."
            )
        return f"'{repo_id}' is gated on the Hugging Face Hub: it needs a login. {LOGIN_HINT}"
    if names & {"RepositoryNotFoundError", "HFValidationError"}:
        return (
            f"There is no model '{repo_id}' on the Hugging Face Hub that can be downloaded "
            + ("with your token." if logged_in else "without a login.")
            + " Check the id, or open a local model folder."
            + ("" if logged_in else f" If it is private: {LOGIN_HINT}")
        )
    if names & {"TimeoutException", "ReadTimeout", "WriteTimeout", "PoolTimeout", "TimeoutError"}:
        return (
            f"The Hugging Face Hub did not answer within {HUB_TIMEOUT_SECONDS:g} seconds while "
            f"downloading '{repo_id}'. Try again later, or open a local model folder."
        )
    if names & {"ConnectError", "ConnectTimeout", "ConnectionError", "OfflineModeIsEnabled"} or (
        "LocalEntryNotFoundError" in names and "connection" in str(exc).lower()
    ):
        return (
            f"Cannot reach the Hugging Face Hub to download '{repo_id}': you seem to be offline. "
            "Open a local model folder instead, or try again when you are online."
        )
    return (
        f"The download of '{repo_id}' stopped before it finished ({_short(exc)}). "
        "Nothing half-downloaded is kept as if complete; run the download again, "
        "or open a local model folder."
    )


LOGIN_HINT = (
    "Log in with 'hf auth login' (older versions: 'huggingface-cli login'), "
    "or set HF_TOKEN to an access token, then download again."
)


def _has_token() -> bool:
    """True when huggingface_hub has a token to send (HF_TOKEN or a saved login)."""
    try:
        from huggingface_hub import get_token

        return bool(get_token())
    except Exception:  # noqa: BLE001 - a broken token file is no token
        return False


def _chain(exc: BaseException | None) -> list[BaseException]:
    seen: list[BaseException] = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return seen


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


def snapshot_is_complete(folder: Path) -> bool:
    """True when a cached snapshot has a config and all its weights (an interrupted
    download leaves a snapshot folder with the small files but not the weights)."""
    if not (folder / "config.json").is_file():
        return False
    try:
        return bool(weight_files(folder))
    except EmbedExplorerError:  # a broken index, a missing shard, or no safetensors at all
        return False
