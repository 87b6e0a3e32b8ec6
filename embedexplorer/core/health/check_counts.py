"""How many tokens the repeat check asks the model about: numbers the command line's parser needs
without importing the check (numpy and the model's head)."""

DEFAULT_CANDIDATES = 20
MAX_CANDIDATES = 200  # each candidate is one forward pass of the whole model
