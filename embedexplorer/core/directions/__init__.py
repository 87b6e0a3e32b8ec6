"""Directions: a meaning made from example words, scored on every row, read against chance and single numbers."""
