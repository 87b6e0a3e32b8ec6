"""Searching the rows: cosine, nearest neighbours, the bfloat16 first pass and its C loop."""
