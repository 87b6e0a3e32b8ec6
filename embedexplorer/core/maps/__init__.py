"""Flat maps of rows: the family words, any word set, PCA, t-SNE and UMAP, and their cache."""
