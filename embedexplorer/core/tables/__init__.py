"""The embedding table of one model and the questions asked of it (ranks, spelling)."""
