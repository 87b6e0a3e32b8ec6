"""Entry point of the frozen app: the same main() as the ``embedexplorer`` command."""

import multiprocessing
import sys

from embedexplorer.__main__ import main

if __name__ == "__main__":
    multiprocessing.freeze_support()  # harmless when nothing spawns; required if anything ever does
    sys.exit(main())
