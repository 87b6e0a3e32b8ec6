"""What every part of the engine shares: errors, names and bounds, defensive file reads and writes, caches."""
