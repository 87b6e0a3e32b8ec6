"""``embedexplorer``: a subcommand runs the command line, no subcommand opens the window.

The window's tokenizer process and its model process are this same entry point with a
flag, so the frozen app (which has no ``python -m``) can start them too.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .cli.early import COMMAND_NAMES, start_tokenizer_soon
from .core.text.tokenizer_protocol import CHILD_FLAG

_CLI_FLAGS = {"-h", "--help", "--version"}
# Not in --help: the packaging checks use it to prove torch runs forward in the frozen app.
FORWARD_CHECK_FLAG = "--self-test-forward"


def _layer_child_flag() -> str:
    from .core.layers.layer_process import CHILD_FLAG as LAYER_CHILD_FLAG  # it loads numpy: only for a flag

    return LAYER_CHILD_FLAG


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) in (2, 3) and args[0] == CHILD_FLAG:
        from .core.text.tokenizer_child import serve

        return serve(*args[1:])
    if len(args) == 2 and args[0].startswith("--") and args[0] == _layer_child_flag():
        from .core.layers.layer_child import serve as serve_layers

        return serve_layers(args[1])
    if args == [FORWARD_CHECK_FLAG]:
        from .core.layers.forward_check import main as forward_check

        return forward_check()
    if args and (args[0] in COMMAND_NAMES or args[0] in _CLI_FLAGS):
        start_tokenizer_soon(args)  # before the parser and the commands import
        from .cli import main as cli_main

        return cli_main(args)
    from .app import main as app_main

    return app_main(args)


if __name__ == "__main__":
    sys.exit(main())
