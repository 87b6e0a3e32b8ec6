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


def test_engine_modules_never_import_each_other_in_a_circle() -> None:
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph("embedexplorer")
    # The package itself is left out: grimp reads "from . import _scan" (a C module) as importing it.
    graph.remove_module("embedexplorer.core")
    modules = sorted(m for m in graph.modules if m.startswith("embedexplorer.core."))
    circles = [
        (a, b)
        for i, a in enumerate(modules)
        for b in modules[i + 1 :]
        if graph.chain_exists(importer=a, imported=b) and graph.chain_exists(importer=b, imported=a)
    ]
    assert circles == []


def test_every_request_kind_is_registered_once_and_plain() -> None:
    import embedexplorer.jobs as jobs_package
    from embedexplorer.jobs.base import Kind
    from embedexplorer.jobs.registry import KINDS

    names = [kind.name for kind in KINDS]
    assert len(names) == len(set(names))
    # Every Kind declared in a module of jobs/ is in the registry.
    import importlib
    import pkgutil

    declared = set()
    for info in pkgutil.iter_modules(jobs_package.__path__):
        module = importlib.import_module(f"embedexplorer.jobs.{info.name}")
        declared |= {value.name for value in vars(module).values() if isinstance(value, Kind)}
    assert declared == set(names)
