"""The mean cosines within and between families, for any subset of the families, against every pair by hand."""

from __future__ import annotations

import itertools

import numpy as np

from embedexplorer.core.maps.family_map import family_sums


def pair_means(rows: np.ndarray, labels: list[str]) -> tuple[float, float]:
    """Every pair's cosine, one by one, as a reader would check it."""
    within, between = [], []
    for i, j in itertools.combinations(range(len(rows)), 2):
        cosine = rows[i] @ rows[j] / np.linalg.norm(rows[i]) / np.linalg.norm(rows[j])
        (within if labels[i] == labels[j] else between).append(cosine)
    return float(np.mean(within)), float(np.mean(between))


def test_any_subset_of_families_has_its_own_means() -> None:
    generator = np.random.default_rng(7)
    rows = generator.normal(size=(40, 16))
    labels = [f"f{i % 5}" for i in range(40)]
    rows[labels.index("f2")] += 3.0  # families unlike each other, so hiding one changes the figures
    sums = family_sums(rows, labels)
    assert np.allclose(sums.cosines(sums.names), pair_means(rows, labels))
    for shown in (["f0", "f1"], ["f1", "f3", "f4"], ["f0", "f1", "f2", "f3"]):
        keep = [i for i, label in enumerate(labels) if label in shown]
        expected = pair_means(rows[keep], [labels[i] for i in keep])
        assert np.allclose(sums.cosines(shown), expected), shown
    within, between = sums.cosines(["f0"])  # one family: no pair between families
    assert np.isfinite(within) and np.isnan(between)
