"""The engine and the command line work without Qt."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_engine_and_cli_never_load_qt() -> None:
    code = (
        "import sys\n"
        "from embedexplorer.cli import main\n"
        "import embedexplorer.core.maps, embedexplorer.core.tables\n"
        "assert main(['neighbours', 'monday', '--model', 'bundled', '--json']) == 0\n"
        "loaded = [m for m in sys.modules if m.startswith(('PySide6', 'pyqtgraph'))]\n"
        "assert not loaded, loaded\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def test_import_contracts_hold() -> None:
    lint = shutil.which("lint-imports")
    if lint is None:
        pytest.skip("import-linter is not installed")
    result = subprocess.run([lint], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
