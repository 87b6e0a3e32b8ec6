"""One module per command: its arguments and its run, declared as ``COMMAND`` and listed in ``cli/table.py``."""
