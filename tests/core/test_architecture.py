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
        "import embedexplorer.core.maps.family_map, embedexplorer.core.tables.embedding_table\n"
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


def import_circles(package: str) -> list[list[str]]:
    """Every group of modules of ``package`` that import one another in a circle (Tarjan's components)."""
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph(package)
    modules = sorted(m for m in graph.modules if m == package or m.startswith(package + "."))
    imports = {m: sorted(graph.find_modules_directly_imported_by(m) & set(modules)) for m in modules}
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(module: str) -> None:
        order[module] = low[module] = len(order)
        stack.append(module)
        on_stack.add(module)
        for other in imports[module]:
            if other not in order:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in on_stack:
                low[module] = min(low[module], order[other])
        if low[module] == order[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                circles.append(sorted(group))

    for module in modules:
        if module not in order:
            visit(module)
    return circles


def test_no_module_of_the_package_imports_another_in_a_circle() -> None:
    assert import_circles("embedexplorer") == []


def test_the_circle_check_finds_a_planted_circle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "planted_circle"
    (package / "inner").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "inner" / "__init__.py").write_text("")
    (package / "first.py").write_text("from .inner import second\n")
    (package / "inner" / "second.py").write_text("from .. import third\n")
    (package / "third.py").write_text("def f():\n    from . import first\n")
    (package / "alone.py").write_text("from . import first\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert import_circles("planted_circle") == [
        ["planted_circle.first", "planted_circle.inner.second", "planted_circle.third"]
    ]


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
