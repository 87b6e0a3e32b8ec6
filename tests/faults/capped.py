"""Run a few lines of Python in a child with an address-space ceiling and a time bound.

For the hostile-input tests of issue 37: a case that once took gigabytes runs under a ceiling
the fixed code stays far below, so a regression fails as a MemoryError in the child (or
a timeout), never as gigabytes taken from the machine the tests share.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# numpy, the gguf package and the engine take about 0.6 GB of address space before any work.
MEMORY_CAP = 1536 * 1024**2


def run_capped_python(
    code: str, env: dict[str, str] | None = None, cap: int = MEMORY_CAP, timeout: float = 60
) -> dict[str, object]:
    """Run ``code`` in a child; it sets ``result`` (JSON-able), which comes back here.

    An exception in the child comes back as ``{"error": type, "message": text}``.
    """
    wrapper = (
        "import json, sys\n"
        "try:\n"
        + "".join(f"    {line}\n" for line in code.strip().splitlines())
        + "    out = {'result': result}\n"
        "except BaseException as exc:\n"
        "    out = {'error': type(exc).__name__, 'message': str(exc)}\n"
        "sys.stdout.write('\\nRESULT ' + json.dumps(out) + '\\n')\n"
    )

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    done = subprocess.run(
        [sys.executable, "-c", wrapper],
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=limit,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), "OPENBLAS_NUM_THREADS": "1", **(env or {})},
    )
    line = next((line for line in reversed(done.stdout.splitlines()) if line.startswith("RESULT ")), None)
    assert line is not None, f"the child printed no result: {done.stderr[-2000:]}"
    answer: dict[str, object] = json.loads(line.removeprefix("RESULT "))
    return answer
