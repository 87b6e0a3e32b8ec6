"""This process's memory as Linux counts it (mapped file pages included), for the benchmarks' child processes.

Standard library only: a child imports it before taking its baseline without adding to it.
"""

from __future__ import annotations


def _status_bytes(field: str) -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"/proc/self/status has no {field}")


def resident_bytes() -> int:
    """The resident set now (VmRSS)."""
    return _status_bytes("VmRSS")


def peak_bytes() -> int:
    """The largest resident set so far (VmHWM)."""
    return _status_bytes("VmHWM")
