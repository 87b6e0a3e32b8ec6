"""Issue 37, rule 5: rows holding NaN or infinity, and all-zero rows, point nowhere.

One rule: they are named once when the table opens and left out of every computation they
would poison (compare, directions, maps, t-SNE, the baseline), with a line saying so.  The
tables are the bundled MiniLM with a few rows damaged (float32, read as the file stores
it) and a half-precision GGUF (its lengths come from the first pass in C).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from gguf import GGMLQuantizationType as Q

from embedexplorer import open_table
from embedexplorer.core.common.errors import QueryError, TokenizerMismatchError
from embedexplorer.core.compare.comparison import compare_tables
from embedexplorer.core.directions.direction import DirectionSpec, make_direction
from embedexplorer.core.maps.projections import Layout, project
from embedexplorer.core.maps.word_maps import word_map
from embedexplorer.core.maps.word_sets import choose, whole_vocabulary
from embedexplorer.core.sources.resolve import bundled_model_dir
from tests.gguf_fixture import small_vocabulary, write_gguf

from .helpers import run_cli

NAN_IDS = (1000, 1001, 5000, 9000)  # '"', '#', and two words
INF_IDS = (7000,)  # "licensed"
ZERO_IDS = (3000, 3001)  # "paris", "systems"


def damaged_copy(folder: Path, nan: tuple[int, ...], inf: tuple[int, ...], zero: tuple[int, ...]) -> Path:
    """The bundled model with some rows set to NaN, infinity or zero (the other files linked)."""
    from safetensors.numpy import load_file, save_file

    source = bundled_model_dir()
    folder.mkdir(parents=True)
    for file in source.iterdir():
        if file.is_file() and file.name != "model.safetensors":
            (folder / file.name).symlink_to(file)
    tensors = load_file(str(source / "model.safetensors"))
    name = next(key for key in tensors if "word_embeddings" in key)
    rows = tensors[name].copy()
    rows[list(nan)] = np.nan
    rows[list(inf)] = np.inf
    rows[list(zero)] = 0.0
    save_file({name: rows}, str(folder / "model.safetensors"))
    return folder


@pytest.fixture(scope="module")
def damaged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return damaged_copy(tmp_path_factory.mktemp("nowhere") / "damaged", NAN_IDS, INF_IDS, ZERO_IDS)


@pytest.fixture(scope="module")
def zero_only(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return damaged_copy(tmp_path_factory.mktemp("zeros") / "zeros", (), (), (3000, 3001, 4000))


@pytest.fixture(scope="module")
def half_gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rows = np.random.default_rng(0).standard_normal((3000, 32)).astype(np.float16)
    rows[[10, 2500]] = np.nan
    rows[[20]] = 0
    return write_gguf(tmp_path_factory.mktemp("half") / "half.gguf", rows, Q.F16, tokens=small_vocabulary(3000))


def test_the_rows_are_named_once_when_the_table_opens(damaged: Path, half_gguf: Path) -> None:
    table = open_table(str(damaged))
    nowhere = table.pointing_nowhere
    assert nowhere.non_finite.tolist() == sorted(NAN_IDS + INF_IDS)
    assert nowhere.zero.tolist() == list(ZERO_IDS)
    # The oracle: numpy's own test of every number of every row.
    stored = np.asarray(table.rows[:])
    assert np.flatnonzero(~np.isfinite(stored).all(axis=1)).tolist() == nowhere.non_finite.tolist()
    assert np.flatnonzero(~stored.any(axis=1)).tolist() == nowhere.zero.tolist()
    assert table.facts().pointing_nowhere == nowhere.sentence()
    half = open_table(str(half_gguf)).pointing_nowhere  # from the C pass's lengths
    assert (half.non_finite.tolist(), half.zero.tolist()) == ([10, 2500], [20])
    result = run_cli("info", "--model", str(damaged))
    assert result.returncode == 0, result.stderr
    notes = [line for line in result.stderr.splitlines() if "point nowhere" in line]
    assert notes == [
        "embedexplorer: note: 5 of 30,522 rows (ids 1,000, 1,001, 5,000, 7,000, 9,000) hold NaN or infinity and "
        "2 of 30,522 rows (ids 3,000, 3,001) are all zero: they point nowhere, so they are left out of comparisons, "
        "directions, maps and averages, and have no neighbours."
    ]
    assert "point nowhere" not in result.stdout  # once, not again in the facts
    # The baseline is the mean over rows that point somewhere: as the undamaged table's, nearly.
    assert abs(table.baseline_cosine - open_table("bundled").baseline_cosine) < 0.005


@pytest.mark.parametrize("order", ["damaged-first", "damaged-second"])
def test_compare_leaves_them_out_with_a_line(damaged: Path, order: str) -> None:
    bundled, broken = open_table("bundled"), open_table(str(damaged))
    a, b = (broken, bundled) if order == "damaged-first" else (bundled, broken)
    # Asked about 400 tokens, the damaged ones among them; every row of both tables is a candidate
    # neighbour (the damaged rows spread over many blocks of the search).
    words = np.concatenate([np.arange(4000, 4393), NAN_IDS, INF_IDS, ZERO_IDS])
    result = compare_tables(a, b, 10, words=words)
    side = "A" if order == "damaged-first" else "B"
    assert (
        f"7 rows (ids 1,000, 1,001, 3,000, 3,001, 5,000, ...) of {side}'s matched rows point nowhere "
        "(NaN, infinity or all zero): left out." in result.notes
    )
    assert len(result) == 393
    assert not np.isin(result.ids_a, NAN_IDS + INF_IDS + ZERO_IDS).any()
    assert not np.isin(result.near_a, NAN_IDS + INF_IDS + ZERO_IDS).any()
    # Every other row is unchanged: every overlap is k, every row cosine 1.
    assert (result.overlap == 10).all()
    assert result.row_cosine is not None and result.row_cosine.min() > 0.99999


def test_identical_zero_rows_are_not_the_most_changed(zero_only: Path) -> None:
    table = open_table(str(zero_only))
    words = np.arange(2900, 3300)  # around the zero rows 3,000 and 3,001
    result = compare_tables(table, open_table(str(zero_only)), 10, words=words)
    assert len(result) == 398
    summary = result.summary()
    assert summary["mean_row_cosine"] > 0.99999
    assert all(entry["row_cosine"] > 0.99999 for entry in summary["most_changed"])  # type: ignore[attr-defined]
    assert {entry["token"] for entry in summary["most_changed"]}.isdisjoint({"paris", "systems"})  # type: ignore[attr-defined]


def test_a_k_too_large_says_k() -> None:
    table = open_table("bundled")
    with pytest.raises(QueryError, match=r"^The number of neighbours must be a whole number from 1 to 30,521 "):
        compare_tables(table, table, 10**12)
    result = run_cli("compare", "bundled", "bundled", "-k", str(10**12))
    assert result.returncode != 0
    assert "The number of neighbours must be a whole number from 1 to 30,521" in result.stderr
    assert "not one vocabulary" not in result.stderr


@pytest.mark.parametrize(
    ("pair", "why"),
    [
        (("paris", "london"), "The row of paris (id 3,000) is all zero in the model file"),
        (("london", "licensed"), "The row of licensed (id 7,000) holds 384 of 384 numbers that are not finite"),
    ],
)
def test_a_direction_whose_example_points_nowhere_says_so(damaged: Path, pair: tuple[str, str], why: str) -> None:
    table = open_table(str(damaged))
    with pytest.raises(QueryError) as caught:
        make_direction(table, DirectionSpec(pairs=(pair,)))
    assert str(caught.value).startswith(why)
    assert "so it points nowhere and cannot be an example of a direction" in str(caught.value)


def test_neighbours_of_a_zero_row_say_why(damaged: Path) -> None:
    with pytest.raises(QueryError, match=r"^The row of paris \(id 3,000\) is all zero in the model file, so it "):
        open_table(str(damaged)).neighbours("paris")


def test_a_map_of_every_row_leaves_them_out(damaged: Path, half_gguf: Path) -> None:
    for path, gone in ((damaged, 7), (half_gguf, 3)):
        table = open_table(str(path))
        drawn = word_map(table, whole_vocabulary(table))
        assert len(drawn) == table.rows.shape[0] - gone
        assert np.isfinite(drawn.coords).all()
        assert "nan" not in drawn.layout.keeps and "% of the spread" in drawn.layout.keeps
        assert any("point nowhere (NaN, infinity or all zero): left out." in note for note in drawn.notes)
    result = run_cli("map", "--model", str(damaged), "--words", "all")
    assert result.returncode == 0, result.stderr
    assert " nan" not in result.stdout and "nan%" not in result.stdout
    assert "30,515 pointing somewhere" in result.stdout


def test_every_projection_gets_only_rows_pointing_somewhere(damaged: Path, tmp_path: Path) -> None:
    # t-SNE gave ValueError on NaN rows. The rows are left out in word_map, before any projection
    # (PCA, t-SNE, UMAP, direction axes) is chosen: what a projection receives is checked here, since
    # a real t-SNE run takes half a minute on a busy machine (the CLI map above runs PCA end to end).
    table = open_table(str(damaged))
    words = tmp_path / "words.txt"
    plain = [t for t in (table.tokens[i] for i in range(2000, 3000)) if t.isalpha()][:120]
    words.write_text("\n".join([*plain, "paris", "licensed"]), encoding="utf-8")
    asked = choose(table, f"@{words}")
    received: list[np.ndarray] = []

    def layout(matrix: np.ndarray) -> Layout:
        received.append(np.array(matrix))
        return project(np.array(matrix), "pca")

    drawn = word_map(table, asked, method="tsne", layout_of=layout)
    assert len(asked) == 122 and len(drawn) == 120
    assert received[0].shape == (120, 384) and np.isfinite(received[0]).all() and received[0].any(axis=1).all()
    assert "paris" not in drawn.labels and "licensed" not in drawn.labels


def test_a_t5_normaliser_of_seven_bytes_is_one_sentence(tmp_path: Path) -> None:
    import gguf

    rows = np.random.default_rng(0).standard_normal((300, 32)).astype(np.float16)
    path = tmp_path / "t5.gguf"
    writer = gguf.GGUFWriter(str(path), "t5")
    writer.add_tokenizer_model("t5")
    writer.add_token_list(["<pad>", "</s>", "<unk>", *small_vocabulary(297)])
    writer.add_token_scores([0.0] * 300)
    writer.add_array("tokenizer.ggml.precompiled_charsmap", [200, 0, 0, 0, 1, 2, 3])
    writer.add_tensor("token_embd.weight", rows)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    for separate in (False, True):
        with pytest.raises(TokenizerMismatchError) as caught:
            open_table(str(path), separate_tokenizer=separate)
        assert str(caught.value) == (
            "t5.gguf has a T5 normaliser (tokenizer.ggml.precompiled_charsmap) of 7 bytes that does not hold the "
            "table its first bytes announce; the file is damaged, so its tokenizer was not built."
        )


def test_a_model_whose_weights_are_nan_names_the_layer_not_a_vector(tmp_path: Path, llama_folder: Path) -> None:
    # The user gave no vector: the model's own numbers went NaN after a layer whose weights hold NaN.
    from safetensors.numpy import load_file, save_file

    folder = tmp_path / "nan-llama"
    folder.mkdir()
    for file in llama_folder.iterdir():
        if file.is_file() and file.name != "model.safetensors":
            (folder / file.name).symlink_to(file)
    tensors = load_file(str(llama_folder / "model.safetensors"))
    tensors["model.layers.1.mlp.down_proj.weight"][:] = np.nan
    save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})
    result = run_cli("layers", "The river bank was steep", "--place", "3", "-k", "4", "--model", str(folder))
    assert result.returncode != 0
    assert "must hold only finite numbers" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        "embedexplorer: The model's own numbers are not finite (NaN or infinity) in the output of layer 2: its "
        "weights hold such numbers or overflow there, so its layers cannot be compared with the table. The model "
        "file may be damaged."
    ]


def test_cosine_of_a_row_that_points_nowhere_names_that_row_in_one_line(damaged: Path) -> None:
    # The command line names the rows pointing nowhere only for answers that read many rows;
    # a cosine reads its two, and a zero one among them is named by the answer itself.
    table = open_table(str(damaged))
    word = table.query(ZERO_IDS[0]).token
    assert table.query(word).id == ZERO_IDS[0]
    result = run_cli("cosine", word, "king", "--model", str(damaged), "--json")
    assert result.returncode == 2 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "nowhere" in lines[0] and f"{ZERO_IDS[0]:,}" in lines[0], lines


def test_a_direction_leaves_them_out_of_its_ends_and_percentiles(damaged: Path) -> None:
    """Their 0 is no cosine: no end holds them, and a word's percentile is among the other rows
    (scipy's percentileofscore over the intact model's scores of those rows is the oracle)."""
    from scipy.stats import percentileofscore

    from embedexplorer.core.directions.direction import DEFAULT_PAIRS
    from embedexplorer.core.directions.report import direction_report

    spec = DirectionSpec(pairs=DEFAULT_PAIRS)
    broken, intact = open_table(str(damaged)), open_table("bundled")
    report = direction_report(broken, spec, ("nurse", "doctor"), 40, baseline=False, coordinates=False)
    whole = direction_report(intact, spec, ("nurse", "doctor"), 40, baseline=False, coordinates=False)
    gone = set(NAN_IDS + INF_IDS + ZERO_IDS)
    assert not gone & {t.id for t in report.top + report.bottom}
    assert any("7 rows" in note and "left out" in note for note in report.notes), report.notes
    # The other rows' scores are the intact model's: the same direction from the same examples.
    from embedexplorer.core.directions.scores import direction_scores

    scores = direction_scores(intact, whole.direction.vector).astype(np.float64)
    kept = np.setdiff1d(np.arange(scores.shape[0]), sorted(gone))
    for place in report.words:
        expected = percentileofscore(scores[kept], np.float32(place.score), kind="strict")
        assert place.percentile == pytest.approx(expected, abs=1e-9)
