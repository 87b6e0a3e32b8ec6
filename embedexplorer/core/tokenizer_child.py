"""The child side of the tokenizer process: load one tokenizer, then encode until stdin closes.

It lives apart from ``tokenizer_process`` (the parent's side) so that the parent never
imports the tokenizer code and the two modules do not import each other.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import IO

from .tokenizer_process import error_message, receive_message, send_message
from .vocabulary import describe_tokenizer, encode_with, load_tokenizer


def serve(folder: str) -> int:
    """The child's whole life: load the tokenizer, describe it, then encode until stdin closes."""
    # The protocol owns the real stdout; anything a library prints goes to stderr instead.
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout = sys.stderr
    try:
        _answer_requests(Path(folder), sys.stdin.buffer, answers)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the parent is gone; so is the reason to live
    return 0


def _answer_requests(folder: Path, requests: IO[bytes], answers: IO[bytes]) -> None:
    try:
        tokenizer = load_tokenizer(folder)
        send_message(answers, {"facts": describe_tokenizer(tokenizer).as_dict()})
    except (BrokenPipeError, ConnectionResetError):
        raise
    except Exception as exc:  # noqa: BLE001 - the parent turns it into the same error
        send_message(answers, error_message(exc))
        return
    while (request := receive_message(requests)) is not None:
        try:
            ids = encode_with(tokenizer, str(request["encode"]))
        except Exception as exc:  # noqa: BLE001 - one bad text must not end the child
            send_message(answers, error_message(exc))
        else:
            send_message(answers, {"ids": ids})


if __name__ == "__main__":
    sys.exit(serve(sys.argv[1]))
