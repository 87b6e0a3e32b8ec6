"""The whole model run forward: every layer of one token compared with the table."""
