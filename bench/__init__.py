"""Benchmarks: each prints its figures beside a baseline timed in the same run."""

# The package first: it sets OpenBLAS's thread spin as the app has it, which only counts
# before numpy loads (see embedexplorer/__init__.py).
import embedexplorer  # noqa: F401
