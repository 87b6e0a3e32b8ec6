"""Fixtures shared by the tests of the quantised scans: each build of ``_quants`` this CPU can run."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

# The builds without AVX-512 VNNI's byte products, so without the scans of rows sixteen at a time: the
# portable C, AVX2, the AVX-512 build's float scan and its 16-bit integer scan.
BUILDS_WITHOUT_VNNI = ["plain", "avx2", "avx512f-float", "avx512f-int16"]


def _using(name: str) -> Iterator[str]:
    quants = pytest.importorskip("embedexplorer.core.search._quants", reason="the quantised scan was not built here")
    used = quants.use_build(name)
    if used != name:
        quants.use_build("best")
        pytest.skip(f"this CPU does not run the {name} build")
    yield used
    quants.use_build("best")


@pytest.fixture(params=[*BUILDS_WITHOUT_VNNI, "avx512f"])
def build(request: pytest.FixtureRequest) -> Iterator[str]:
    """Each build of the scan this CPU can run (the others are skipped); "avx512f" is the best, with VNNI's
    byte products where the CPU has them."""
    yield from _using(request.param)


@pytest.fixture(params=BUILDS_WITHOUT_VNNI)
def other_build(request: pytest.FixtureRequest) -> Iterator[str]:
    """Each build without VNNI's grouped scans that this CPU can run (the others are skipped)."""
    yield from _using(request.param)
