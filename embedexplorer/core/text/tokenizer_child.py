"""The child side of the tokenizer process: load one tokenizer, then encode until stdin closes.

It lives apart from ``tokenizer_process`` (the parent's side) so that the parent never
imports the tokenizer code and the two modules do not import each other. It imports the
protocol and the library calls alone (``tokenizer_protocol``, ``tokenizer_library``): every
command that reads a model folder waits for this process to load its tokenizer.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from functools import partial
from typing import IO, TYPE_CHECKING, Any, NoReturn

from .tokenizer_library import encode_with, list_tokens, load_tokenizer, read_summary
from .tokenizer_protocol import (
    CHILD_MEMORY_LIMIT,
    LISTED_WITH_IDS,
    ROWS_LATER,
    error_message,
    receive_message,
    send_message,
)

if TYPE_CHECKING:  # the round trip loads when the health pane asks for it: opening never does
    from .round_trip import RoundTripper


def serve(folder: str, max_rows: str | None = None) -> NoReturn:
    """The child's whole life: load the tokenizer, describe it, then encode until stdin closes."""
    _forget_working_folder()
    _limit_memory()
    # The protocol owns the real stdout; anything a library prints goes to stderr instead.
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout = sys.stderr
    try:
        # First word: the child runs. A child that dies after this was killed by its tokenizer,
        # not by this machine, and the parent must not retry the same tokenizer in its own process.
        send_message(answers, {"started": True})
        _answer_requests(folder, sys.stdin.buffer, answers, _rows(max_rows))
    except (BrokenPipeError, ConnectionResetError):
        pass  # the parent is gone; so is the reason to live
    # Every answer is flushed; ending here skips freeing the tokenizer and the interpreter's
    # modules one by one, which the parent, waiting to reap this process, would sit through.
    sys.stderr.flush()
    os._exit(0)


def _rows(max_rows: str | None) -> int | str | None:
    if not max_rows:
        return None
    return ROWS_LATER if max_rows == ROWS_LATER else int(max_rows)


def _forget_working_folder() -> None:
    """Drop the working folder and relative entries from sys.path (the frozen app's child has no -I)."""
    here = os.path.realpath(os.getcwd())
    sys.path[:] = [p for p in sys.path if p and os.path.isabs(p) and os.path.realpath(p) != here]


def _limit_memory() -> None:
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if soft == resource.RLIM_INFINITY or soft > CHILD_MEMORY_LIMIT:
            ceiling = CHILD_MEMORY_LIMIT if hard == resource.RLIM_INFINITY else min(hard, CHILD_MEMORY_LIMIT)
            resource.setrlimit(resource.RLIMIT_AS, (ceiling, hard))
    except (ImportError, ValueError, OSError):
        pass  # Windows has no rlimits; macOS may refuse RLIMIT_AS: the time limits still hold


def _answer_requests(
    folder: str, requests: IO[bytes], answers: IO[bytes], max_rows: int | str | None = None
) -> None:
    try:
        if os.path.isfile(folder):  # a model file (GGUF) carries its tokenizer in its header
            # Imported here: it brings numpy and the GGUF reader, which a folder's tokenizer never needs.
            from pathlib import Path

            from .gguf_tokenizer import load_gguf_tokenizer

            gguf_tokenizer, facts = load_gguf_tokenizer(Path(folder))
            summary: dict[str, Any] = facts.summary().as_dict()
            encode: Callable[[str], list[int]] = gguf_tokenizer.encode
            make_round_trip: Callable[[], RoundTripper] = partial(_round_tripper, "gguf", gguf_tokenizer)
            listing: Callable[[list[int] | None], list[str]] = partial(_listed, facts.raw_tokens)
        else:
            tokenizer = load_tokenizer(folder)
            if max_rows == ROWS_LATER:  # started early: the table's row count comes once the parent has it
                first = receive_message(requests)
                if first is None:
                    return
                max_rows = first.get("max_rows")
            # The tokens are listed when the parent asks for them: an answer shows a few.
            summary = read_summary(tokenizer, None if max_rows is None else int(max_rows))
            encode = partial(encode_with, tokenizer)
            make_round_trip = partial(_round_tripper, "hf", tokenizer)
            listing = partial(list_tokens, tokenizer, int(summary["top_id"]))
        send_message(answers, {"facts": summary})
    except (BrokenPipeError, ConnectionResetError):
        raise
    except Exception as exc:  # noqa: BLE001 - the parent turns it into the same error
        send_message(answers, error_message(exc))
        return
    round_trip: RoundTripper | None = None
    while (request := receive_message(requests)) is not None:
        try:
            if "round_trip" in request:  # a batch of tokens: decode each, encode it again
                from .round_trip import ROUND_TRIP_BATCH

                round_trip = round_trip or make_round_trip()
                start, stop = (int(n) for n in request["round_trip"])
                answer: dict[str, Any] = {"round_trip": round_trip.check(start, min(stop, start + ROUND_TRIP_BATCH))}
            elif "tokens" in request:  # tokens by id as stored (None: every one)
                ids = request["tokens"]
                answer = {"tokens": listing(None if ids is None else [int(i) for i in ids])}
            else:
                ids = encode(str(request["encode"]))
                # The tokens the answer will show come along: the parent need not ask again.
                answer = {"ids": ids, "tokens": listing(ids[:LISTED_WITH_IDS])}
        except Exception as exc:  # noqa: BLE001 - one bad text must not end the child
            send_message(answers, error_message(exc))
        else:
            send_message(answers, answer)


def _round_tripper(kind: str, tokenizer: Any) -> RoundTripper:
    from .round_trip import gguf_round_trip, hf_round_trip

    return gguf_round_trip(tokenizer) if kind == "gguf" else hf_round_trip(tokenizer)


def _listed(raw_tokens: list[str], ids: list[int] | None) -> list[str]:
    if ids is None:
        return raw_tokens
    return [raw_tokens[i] if 0 <= i < len(raw_tokens) else "" for i in ids]


if __name__ == "__main__":
    sys.exit(serve(*sys.argv[1:]))
