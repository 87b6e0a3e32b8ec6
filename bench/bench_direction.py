"""One direction over a Qwen2-7B-sized bfloat16 table, against one plain read of the table's bytes.

The baseline is one plain read of the table's bytes from the page cache (16 MB ``readinto``
calls), timed in turns with what it is compared to, in the same process:

- one direction: he->she, king->queen, man->woman made from the stored rows, every one of
  152,064 rows scored (the C scan over the bfloat16 rows as stored, no float32 copy), the 20
  at each end, three words' percentiles, the spread, the 100 random directions' separation
  and the best single number. Goal: at most 1.2x the plain read.
- once per table (kept afterwards, the coordinates' spread on disk too): scoring the 100
  random directions, and each coordinate's spread over the vocabulary. No goal; printed so
  the first question's wait is known.

    python -m bench.bench_direction
"""

from __future__ import annotations

import random
import sys
import tempfile
import time

from bench.common import Row, emit, median

ROUNDS = 9
GOAL = 1.2


def plain_read(file: str, start: int, size: int) -> float:
    buffer = memoryview(bytearray(16 << 20))
    began = time.perf_counter()
    with open(file, "rb", buffering=0) as handle:
        handle.seek(start)
        left = size
        while left > 0:
            got = handle.readinto(buffer[: min(len(buffer), left)])
            if not got:
                break
            left -= got
    return time.perf_counter() - began


def main() -> int:
    import os

    os.environ.setdefault("EMBEDEXPLORER_CACHE_DIR", tempfile.mkdtemp(prefix="ee-bench-direction-"))
    from bench.large_fixture import qwen_folder
    from embedexplorer import open_table
    from embedexplorer.core.directions.baseline import RandomScores
    from embedexplorer.core.directions.coordinates import CoordinateSpread
    from embedexplorer.core.directions.direction import DEFAULT_PAIRS, DirectionSpec
    from embedexplorer.core.directions.report import direction_report
    from embedexplorer.core.search.stored_rows import StoredRows

    table = open_table(str(qwen_folder()))
    rows = table.rows
    assert isinstance(rows, StoredRows) and rows.storage == "BF16"
    raw = rows.raw
    file, offset, size = str(raw.filename), int(raw.offset), int(raw.nbytes)  # type: ignore[attr-defined]
    spec = DirectionSpec(pairs=DEFAULT_PAIRS)
    words = ("nurse", "doctor", "actress")
    plain_read(file, offset, size)  # the page cache holds the table from here on

    began = time.perf_counter()
    RandomScores.for_table(table)
    random_once = time.perf_counter() - began
    first_read = plain_read(file, offset, size)
    began = time.perf_counter()
    CoordinateSpread.for_table(table)
    coordinates_once = time.perf_counter() - began

    reads, directions = [first_read], []
    for _ in range(ROUNDS):
        turns = ["read", "direction"]
        random.shuffle(turns)
        for name in turns:
            if name == "read":
                reads.append(plain_read(file, offset, size))
            else:
                began = time.perf_counter()
                report = direction_report(table, spec, words)
                directions.append(time.perf_counter() - began)
    read = median(reads)
    ratio = median(directions) / read
    rows_out = [
        Row(
            "one direction over 152,064 x 3,584 bfloat16 (ends, percentiles, baseline, best number)",
            median(directions),
            "s",
            read,
            f"one plain read of the table's {size / 1e9:.2f} GB",
            ratio,
            f"<= {GOAL}x",
            ratio <= GOAL,
        ),
        Row("once per table: 100 random directions scored", random_once, "s", read, "plain read", random_once / read),
        Row(
            "once per table: each coordinate's spread",
            coordinates_once,
            "s",
            read,
            "plain read",
            coordinates_once / read,
        ),
    ]
    emit(rows_out, sys.argv[1:])
    top = ", ".join(t.token for t in report.top[:5])
    print(f"(last answer's highest five: {top}; {table.search_method()})", file=sys.stderr)
    table.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
