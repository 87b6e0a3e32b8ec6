"""Big maps in the long lane: any set of rows, by PCA, t-SNE or UMAP, with progress and a disk cache."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from ..core.common.constants import SEED
from .base import JobContext, Kind, Lane

if TYPE_CHECKING:  # the engine loads with the first job, after the window shows
    from ..core.directions.direction import DirectionSpec
    from ..core.maps.family_map import Families
    from ..core.maps.word_maps import WordMap
    from ..core.maps.word_sets import WordSet

WORDS_KINDS = ("all", "regex", "list", "file", "families")


@dataclass(frozen=True)
class WordMapRequest:
    """``words``: "all", "regex" (``text`` is the pattern), "list" (``text`` has one word a line),
    "file" (``text`` names a file of one word a line: the command line's ``--words @FILE``) or
    "families" (the families' own words: the family map by t-SNE, UMAP or on two directions)."""

    words: str = "all"
    text: str = ""
    families: str | Families | None = None  # a file, the families themselves, or None for the chapter's
    method: str = "pca"
    multi_token: str = "average"
    seed: int = SEED
    cache_dir: str | None = None  # None: the per-user cache folder
    axes: tuple[DirectionSpec, DirectionSpec] | None = None  # x and y directions instead of a projection


def chosen_words(ctx: JobContext, request: WordMapRequest, families: Families) -> WordSet:
    from ..core.maps.word_sets import family_words, from_file, from_list, matching, whole_vocabulary

    table = ctx.session.table
    if request.words == "families":
        return family_words(table, families, request.multi_token)
    if request.words == "all":
        return whole_vocabulary(table)
    if request.words == "regex":
        return matching(table, request.text, ctx.stopped)
    if request.words == "file":
        return from_file(table, request.text, request.multi_token)
    return from_list(table, request.text, request.multi_token, source="the pasted list")


def draw_word_map(ctx: JobContext, request: WordMapRequest) -> WordMap:
    from ..core.directions.direction import make_direction
    from ..core.maps.direction_axes import direction_layout
    from ..core.maps.family_map import load_families
    from ..core.maps.map_cache import MapCache
    from ..core.maps.map_origin import with_provenance
    from ..core.maps.word_maps import word_map

    table = ctx.session.table
    families = request.families if isinstance(request.families, dict) else load_families(request.families)
    words = chosen_words(ctx, request, families)
    layout_of = None
    if request.axes is not None:
        x, y = (make_direction(table, spec) for spec in request.axes)
        layout_of = partial(direction_layout, x=x, y=y)
    ctx.check()
    answer = word_map(
        table,
        words,
        families,
        request.method,
        seed=request.seed,
        cache=MapCache(request.cache_dir),
        progress=ctx.progress,
        should_stop=ctx.stopped,
        separate_process=True,  # the window's threads never wait on openTSNE's hold of the lock
        layout_of=layout_of,
    )
    answer = with_provenance(answer, table, request.multi_token, ctx.check, ctx.progress)
    return answer


WORD_MAP = Kind("word_map", Lane.LONG, draw_word_map)
