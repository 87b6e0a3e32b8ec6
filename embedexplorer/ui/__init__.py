"""The window's panes; each takes what it shows and never computes on the table."""
