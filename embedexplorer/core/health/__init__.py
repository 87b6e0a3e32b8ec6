"""Vocabulary health: which rows of a token table look untrained, and why."""
