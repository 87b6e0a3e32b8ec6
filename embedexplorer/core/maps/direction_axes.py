"""A map whose two axes are directions made from examples: each point at its cosines with them.

Unlike PCA or t-SNE, nothing is fitted to the points: the x axis is the cosine with one
direction (he -> she), the y axis with another (king -> queen), so a word's place reads as
two scores, the same ones the Directions pane gives.
"""

from __future__ import annotations

import numpy as np

from ..directions.direction import Direction
from ..search.stored_rows import StoredRows
from .projections import Layout

_BLOCK_ROWS = 8192


def direction_layout(rows: np.ndarray | StoredRows, x: Direction, y: Direction) -> Layout:
    """Each row's cosine with the x and the y direction (rows pointing nowhere sit at 0, 0)."""
    axes = np.stack([x.vector, y.vector]).astype(np.float64)
    coords = np.empty((rows.shape[0], 2), dtype=np.float64)
    for start in range(0, rows.shape[0], _BLOCK_ROWS):
        block = np.asarray(rows[start : start + _BLOCK_ROWS], dtype=np.float64)
        lengths = np.linalg.norm(block, axis=1)
        live = np.isfinite(lengths) & (lengths > 0)
        products = np.where(live[:, None], np.nan_to_num(block) @ axes.T, 0.0)
        coords[start : start + _BLOCK_ROWS] = products / np.where(live, lengths, 1.0)[:, None]
    angle = float(np.degrees(np.arccos(np.clip(x.vector @ y.vector, -1.0, 1.0))))
    keeps = (
        f"each word's cosine with two directions made from examples (x: {x.label}; y: {y.label}); "
        f"the two directions are {angle:.0f} degrees apart"
    )
    return Layout(coords, "directions", None, keeps, (f"cosine with {x.label}", f"cosine with {y.label}"))
