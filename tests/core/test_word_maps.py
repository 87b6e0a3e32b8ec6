"""Big maps: word sets, PCA and t-SNE of any rows, the on-disk cache, cancelling."""

from __future__ import annotations

import os
import re
import sys
import time

import numpy as np
import pytest

from embedexplorer.core.common.errors import Interrupted, QueryError
from embedexplorer.core.maps import word_sets
from embedexplorer.core.maps.family_map import load_families, pca_2d
from embedexplorer.core.maps.map_cache import MapCache
from embedexplorer.core.maps.projections import project, tsne_bare
from embedexplorer.core.maps.word_maps import NO_FAMILY, word_map

DAYS = r"^(mon|tues|wednes|thurs|fri|satur|sun)day$"
# About 120 rows of MiniLM: enough for t-SNE (perplexity 30 needs more than 91), quick to compute.
SMALL = r"^(mon|tues|wednes|thurs|fri|satur|sun)day$|^[a-c][a-z]{5}s$"


def test_regex_picks_the_rows_whose_text_matches(minilm_table) -> None:
    chosen = word_sets.matching(minilm_table, DAYS)
    texts = sorted(minilm_table.vocabulary.text_of(int(i)) for i in chosen.ids)
    expected = sorted(
        t for t in (minilm_table.vocabulary.text_of(i) for i in range(minilm_table.vocabulary.size))
        if re.search(DAYS, t)
    )
    assert texts == expected and len(texts) == 7


def test_regex_that_matches_nothing_or_is_invalid_says_so(minilm_table) -> None:
    with pytest.raises(QueryError, match="No token .* matches"):
        word_sets.matching(minilm_table, r"^zzqqxx$")
    with pytest.raises(QueryError, match="not a valid regular expression"):
        word_sets.matching(minilm_table, r"(unclosed")
    with pytest.raises(QueryError, match="empty"):
        word_sets.matching(minilm_table, "")


def test_a_list_keeps_single_tokens_and_averages_or_skips_the_rest(minilm_table, tmp_path) -> None:
    listing = tmp_path / "words.txt"
    listing.write_text("monday\n\ntuesday\nmonday\nzxqvbnmw\n", encoding="utf-8")
    averaged = word_sets.choose(minilm_table, f"@{listing}")
    skipped = word_sets.from_file(minilm_table, listing, "skip")
    monday, tuesday = (minilm_table.encode(w)[0].id for w in ("monday", "tuesday"))
    assert averaged.ids.tolist() == [monday, tuesday] and skipped.ids.tolist() == [monday, tuesday]
    assert [w for w, _ in averaged.extras] == ["zxqvbnmw"] and not skipped.extras
    assert averaged.extras[0][1] == tuple(t.id for t in minilm_table.encode("zxqvbnmw"))
    with pytest.raises(QueryError, match="Cannot read"):
        word_sets.choose(minilm_table, f"@{tmp_path / 'absent.txt'}")


def test_whole_vocabulary_pca_uses_every_row(gpt2_table) -> None:
    everything = word_sets.choose(gpt2_table, "all")
    result = word_map(gpt2_table, everything, load_families())
    assert len(result) == 50_257 == result.coords.shape[0]
    rows = np.array(gpt2_table.rows)  # an in-memory float32 copy: the same PCA, step for step
    assert np.allclose(result.coords, pca_2d(rows).apply(rows), atol=1e-9)
    # float32 products added up in float64 stay close to the PCA done wholly in float64.
    wide = rows.astype(np.float64)
    assert np.allclose(result.coords, pca_2d(wide).apply(wide), atol=1e-6)
    # The 63 family words are single GPT-2 tokens, so all of them are coloured.
    assert sum(result.family_counts().values()) == 63
    paris = gpt2_table.encode(" Paris")[0].id
    assert result.families[result.family_of[paris]] == "cities"
    assert (result.family_of == NO_FAMILY).sum() == 50_257 - 63


def test_extras_sit_at_their_averaged_row(minilm_table) -> None:
    chosen = word_sets.from_list(minilm_table, "monday\ntuesday\nfriday\nzxqvbnmw")
    result = word_map(minilm_table, chosen)
    pieces = [t.id for t in minilm_table.encode("zxqvbnmw")]
    averaged = np.asarray(minilm_table.rows[pieces], dtype=np.float64).mean(axis=0)
    assert np.allclose(result.coords[-1], result.layout.pca.apply(averaged)[0])
    assert result.labels[-1] == " ".join(minilm_table.tokens[i] for i in pieces)


@pytest.fixture(scope="module")
def small_tsne(minilm_table, tmp_path_factory):  # type: ignore[no-untyped-def]
    """One t-SNE map of about 150 MiniLM rows, kept in a cache folder of its own, and its progress."""
    cache = MapCache(tmp_path_factory.mktemp("maps"))
    chosen = word_sets.matching(minilm_table, SMALL)
    ticks: list[tuple[int, int]] = []
    result = word_map(
        minilm_table, chosen, None, "tsne", seed=7, cache=cache,
        progress=lambda done, total, _m: ticks.append((done, total)),
    )
    return chosen, cache, result, ticks


def test_tsne_is_deterministic_and_matches_opentsne_bare(minilm_table, small_tsne) -> None:
    chosen, _cache, first, ticks = small_tsne
    rows = np.asarray(minilm_table.rows[chosen.ids], dtype=np.float32)
    again = project(rows, "tsne", seed=7)
    assert np.array_equal(first.coords, again.coords)
    # Driving openTSNE from here changes nothing: openTSNE alone gives the same map.
    assert np.array_equal(first.coords, tsne_bare(rows, seed=7))
    assert ticks[-1][0] == ticks[-1][1] and len(ticks) > 10
    assert all(b[0] >= a[0] for a, b in zip(ticks, ticks[1:], strict=False))  # progress only goes forward


def test_the_stepped_neighbour_search_is_openTSNEs_own(minilm_table) -> None:  # noqa: N802
    """Above 1,000 rows the Annoy neighbours are found in blocks: the same neighbours openTSNE finds."""
    from openTSNE.nearest_neighbors import Annoy

    from embedexplorer.core.maps.projections import _stepped_annoy_class

    rows = np.ascontiguousarray(minilm_table.rows[:1500], dtype=np.float32)
    seen: list[int] = []
    ours = _stepped_annoy_class()(
        rows, 90, metric="cosine", n_jobs=2, random_state=3,
        progress=lambda done, _t, _m: seen.append(done), should_stop=lambda: False,
    ).build()
    # One thread builds the trees (as ours does: several threads give another index each run).
    theirs = Annoy(rows, 90, metric="cosine", n_jobs=1, random_state=3).build()
    assert np.array_equal(ours[0], theirs[0]) and np.array_equal(ours[1], theirs[1])
    assert len(seen) >= 3
    with pytest.raises(Interrupted):
        _stepped_annoy_class()(
            rows, 90, metric="cosine", n_jobs=1, random_state=3,
            progress=lambda *_a: None, should_stop=lambda: True,
        ).build()


def test_cancelling_a_projection_raises_and_stores_nothing(minilm_table, tmp_path) -> None:
    chosen = word_sets.matching(minilm_table, SMALL)
    cache = MapCache(tmp_path / "maps")
    seen: list[str] = []

    def stop_when_arranging() -> bool:
        return any("arranging" in m for m in seen)

    with pytest.raises(Interrupted):
        word_map(
            minilm_table, chosen, None, "tsne", cache=cache,
            progress=lambda _d, _t, message: seen.append(message), should_stop=stop_when_arranging,
        )
    assert not (tmp_path / "maps").exists() or not any((tmp_path / "maps").iterdir())


def test_cache_returns_the_map_and_is_invalidated_by_model_or_words(minilm_table, gpt2_table, small_tsne) -> None:
    chosen, cache, computed, _ticks = small_tsne
    assert not computed.from_cache and len(list(cache.folder.iterdir())) == 1
    reopened = word_map(minilm_table, chosen, None, "tsne", seed=7, cache=cache)
    assert reopened.from_cache and np.array_equal(reopened.coords, computed.coords)
    key = cache.key(minilm_table, chosen, "tsne", 7)
    # One row fewer is another word set; another model is another table; another seed another map.
    fewer = word_sets.WordSet(chosen.ids[:-1], (), "fewer")
    assert cache.key(minilm_table, fewer, "tsne", 7) != key
    assert cache.load(cache.key(minilm_table, fewer, "tsne", 7), len(fewer)) is None
    assert cache.key(gpt2_table, word_sets.WordSet(chosen.ids, (), "same ids"), "tsne", 7) != key
    assert cache.key(minilm_table, chosen, "tsne", 8) != key
    # A damaged file is not trusted.
    cache.path(key).write_bytes(b"not an array")
    assert cache.load(key, len(chosen)) is None


def test_tsne_needs_enough_rows_and_unknown_projections_are_named(minilm_table) -> None:
    few = word_sets.matching(minilm_table, DAYS)
    with pytest.raises(QueryError, match="needs at least 10 rows; this map has 7"):
        word_map(minilm_table, few, None, "tsne")
    with pytest.raises(QueryError, match="Unknown projection"):
        word_map(minilm_table, few, None, "mds")


def test_the_family_words_tsne_runs_with_the_perplexity_its_63_rows_allow(minilm_table) -> None:
    """Perplexity 30 wants more than 90 rows: the family map's 63 get 62 / 3, exactly as openTSNE runs it alone."""
    from openTSNE import TSNE

    families = load_families()
    chosen = word_sets.family_words(minilm_table, families)
    assert chosen.description == "63 words in 8 families" and len(chosen) == 63
    result = word_map(minilm_table, chosen, families, "tsne", seed=7)
    assert result.family_counts() == {name: len(words) for name, words in families.items()}
    assert "perplexity 20.7, lowered from 30 for 63 rows" in result.layout.keeps
    rows = np.asarray(minilm_table.rows[chosen.ids], dtype=np.float32)
    bare = TSNE(perplexity=62 / 3, metric="cosine", n_jobs=2, random_state=7).fit(rows)
    assert np.array_equal(result.coords, np.asarray(bare))


def test_a_small_umap_map_lowers_its_neighbours_to_the_rows_it_has(minilm_table) -> None:
    # Optional: umap-learn is not installed everywhere (an uninstall can leave an empty "umap" folder behind).
    umap = pytest.importorskip("umap")
    if not hasattr(umap, "UMAP"):
        pytest.skip("umap-learn is not installed")

    twelve = word_sets.from_list(minilm_table, "\n".join(["apple", "banana", "cherry", "grape", "lemon", "hammer",
                                                          "saw", "drill", "axe", "knife", "iron", "copper"]))
    result = word_map(minilm_table, twelve, None, "umap", seed=3)
    assert "11 nearest neighbours by cosine (lowered from 15 for 12 rows)" in result.layout.keeps
    rows = np.asarray(minilm_table.rows[twelve.ids], dtype=np.float32)
    alone = umap.UMAP(n_neighbors=11, metric="cosine", random_state=3).fit_transform(rows)
    assert np.allclose(result.coords, alone)


def test_locate_places_rows_on_pca_and_finds_them_on_tsne(minilm_table, small_tsne) -> None:
    chosen, _cache, tsne_map, _ticks = small_tsne
    pca_map = word_map(minilm_table, chosen)
    inside, outside = int(chosen.ids[0]), minilm_table.encode("paris")[0].id
    assert pca_map.locate(minilm_table, [inside])[0] == pytest.approx(tuple(pca_map.coords[0]))
    assert pca_map.locate(minilm_table, [outside])[0] is not None
    assert tsne_map.locate(minilm_table, [inside, outside]) == [tuple(tsne_map.coords[0]), None]


def test_tsne_in_a_child_process_gives_the_same_map_and_stops_when_asked(minilm_table, small_tsne) -> None:
    chosen, _cache, in_process, _ticks = small_tsne
    rows = np.asarray(minilm_table.rows[chosen.ids], dtype=np.float32)
    messages: list[str] = []
    child = project(rows, "tsne", seed=7, separate_process=True, progress=lambda _d, _t, m: messages.append(m))
    assert np.array_equal(child.coords, in_process.coords) and "t-SNE: done" in messages
    with pytest.raises(Interrupted):
        project(
            rows, "tsne", seed=7, separate_process=True,
            progress=lambda _d, _t, m: messages.append(m), should_stop=lambda: "arranging" in messages[-1],
        )


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the child's niceness in /proc")
def test_the_tsne_child_steps_back_for_the_cores(minilm_table, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Outside the tests (which set 0) the child runs at nice 10, whatever the parent's is."""
    import multiprocessing

    monkeypatch.delenv("EMBEDEXPLORER_TSNE_NICE")  # the child is spawned with this environment
    rows = np.asarray(minilm_table.rows[:200], dtype=np.float32)
    niceness: list[int] = []

    def look(_done: int, _total: int, message: str) -> None:
        kids = [k for k in multiprocessing.active_children() if k.name == "embedexplorer-tsne"]
        if not niceness and kids and "starting" not in message:  # the child has spoken: it is niced
            with open(f"/proc/{kids[0].pid}/stat", encoding="ascii") as stat:
                niceness.append(int(stat.read().rsplit(")", 1)[1].split()[16]))

    with pytest.raises(Interrupted):
        project(rows, "tsne", seed=7, separate_process=True, progress=look, should_stop=lambda: bool(niceness))
    assert niceness == [min(19, os.getpriority(os.PRIO_PROCESS, 0) + 10)]


def test_a_long_silent_step_still_reports_progress() -> None:
    from embedexplorer.core.maps import projections
    seen: list[tuple[int, str]] = []
    with projections._ticking(lambda done, _t, message: seen.append((done, message)), 100, 50, 300, 2.0, "trees"):
        time.sleep(2.6)
    assert len(seen) >= 2 and all(message.startswith("trees (") for _, message in seen)
    shares = [done for done, _ in seen]
    assert shares == sorted(shares) and 100 < shares[-1] <= 100 + 50 * 0.95


def test_a_stop_during_the_tree_building_is_heard_at_once(minilm_table) -> None:
    # The whole MiniLM table: Annoy builds its trees for several seconds in one call, and the
    # child cannot hear a stop inside that call: the parent must not wait for it (bench times it).
    rows = np.asarray(minilm_table.rows, dtype=np.float32)
    messages: list[str] = []
    asked: list[int] = []

    def stop() -> bool:
        if "building" in messages[-1] and not asked:
            asked.append(len(messages))
        return bool(asked)

    with pytest.raises(Interrupted):
        project(rows, "tsne", seed=7, separate_process=True,
                progress=lambda _d, _t, m: messages.append(m), should_stop=stop)
    # Heard at once: not one word from the child came after the stop (it was still building).
    assert asked and len(messages) == asked[0] and "building" in messages[-1], messages[-3:]
