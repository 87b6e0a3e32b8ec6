"""GPT-2 small's ids, shapes and counts, as the chapter quotes them, on the offline fixture."""

from __future__ import annotations

import numpy as np
import pytest

from embedexplorer import open_table
from embedexplorer.core.common.errors import QueryError
from tests.gpt2_fixture import build_gpt2_folder


def test_chapter_sentence_ids(gpt2_table) -> None:
    tokens = gpt2_table.encode("The capital of France is")
    assert [t.id for t in tokens] == [464, 3139, 286, 4881, 318]
    assert [t.token for t in tokens] == ["The", "_capital", "_of", "_France", "_is"]


@pytest.mark.parametrize(("word", "token_id"), [(" Paris", 6342), (" France", 4881), (" banana", 25996)])
def test_chapter_word_ids(gpt2_table, word: str, token_id: int) -> None:
    assert [t.id for t in gpt2_table.encode(word)] == [token_id]
    assert gpt2_table.encode(word)[0].token == "_" + word.strip()


def test_table_facts_match_chapter(gpt2_table) -> None:
    facts = gpt2_table.facts()
    assert (facts.rows, facts.width) == (50_257, 768)
    assert facts.table_weights == 38_597_376
    assert facts.model_weights == 124_439_808
    assert f"{facts.share:.1%}" == "31.0%"
    assert facts.position_rows == 1_024
    assert gpt2_table.positions.shape == (1_024, 768)


def test_neighbours_equal_brute_force_numpy(gpt2_table, gpt2_folder) -> None:
    from safetensors.numpy import load_file

    raw = load_file(str(gpt2_folder / "model.safetensors"))["transformer.wte.weight"]
    unit = raw / np.linalg.norm(raw, axis=1, keepdims=True)
    for word in (" Paris", " Monday", " cat", " doctor"):
        query = gpt2_table.query(word).id
        scores = unit @ unit[query]
        scores[query] = -np.inf
        expected = np.argsort(-scores, kind="stable")[:10]
        got = gpt2_table.neighbours(word, k=10).neighbours
        assert [n.id for n in got] == expected.tolist()
        np.testing.assert_allclose([n.cosine for n in got], scores[expected], atol=1e-5)
        assert query not in [n.id for n in got]


def test_cosine_is_symmetric_and_matches_rows(gpt2_table) -> None:
    a, b = gpt2_table.row(6342), gpt2_table.row(4881)
    expected = float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))
    assert gpt2_table.cosine(" Paris", " France") == pytest.approx(expected, abs=1e-6)
    assert gpt2_table.cosine(" France", " Paris") == pytest.approx(expected, abs=1e-6)
    assert gpt2_table.cosine(" Paris", " Paris") == pytest.approx(1.0, abs=1e-6)


def test_gpt2model_naming_loads(tmp_path) -> None:
    """Saved as GPT2Model the table is 'wte.weight' rather than 'transformer.wte.weight'."""
    folder = build_gpt2_folder(tmp_path / "bare", head=False)
    table = open_table(str(folder))
    facts = table.facts()
    assert (facts.rows, facts.width, facts.model_weights) == (50_257, 768, 124_439_808)
    assert [t.id for t in table.encode("The capital of France is")] == [464, 3139, 286, 4881, 318]


def test_sharded_checkpoint_loads(tmp_path, gpt2_table) -> None:
    folder = build_gpt2_folder(tmp_path / "sharded", max_shard_size="100MB")
    assert (folder / "model.safetensors.index.json").is_file()
    assert len(list(folder.glob("model-*.safetensors"))) > 1
    table = open_table(str(folder))
    assert table.facts().model_weights == 124_439_808
    # Same seed, same weights: the sharded copy answers exactly as the single file does.
    assert [n.id for n in table.neighbours(" Paris").neighbours] == [
        n.id for n in gpt2_table.neighbours(" Paris").neighbours
    ]


def test_byte_level_tokens_are_visible(gpt2_table) -> None:
    tokens = gpt2_table.encode("a\nb\t c")
    shown = [t.token for t in tokens]
    assert "\\n" in shown
    assert all(t.strip() for t in shown), shown


def test_multi_token_word_says_which_piece_answers(gpt2_table) -> None:
    query = gpt2_table.query(" Copenhagenesque")
    assert len(query.pieces) > 1
    assert query.id == query.pieces[0].id
    assert "first" in query.note


def test_analogy_leaves_inputs_out(gpt2_table) -> None:
    result = gpt2_table.analogy(" king", " man", " woman", k=20)
    ids = {gpt2_table.query(w).id for w in (" king", " man", " woman")}
    assert ids.isdisjoint(n.id for n in result.neighbours)
    assert len(result.neighbours) == 20


def test_many_vectors_at_once_answer_as_one_at_a_time(gpt2_table) -> None:
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((6, 768)).astype(np.float32)
    vectors[1] = gpt2_table.row(6342) * 40.0  # a row itself, far from length 1
    vectors[4] = 0.0  # no direction at all
    together = gpt2_table.neighbours_of_vectors(vectors, k=9)
    alone = [gpt2_table.neighbours_of_vector(v, k=9) for v in vectors]
    assert [[n.id for n in r.neighbours] for r in together] == [[n.id for n in r.neighbours] for r in alone]
    for a, b in zip(together, alone, strict=True):
        np.testing.assert_allclose([n.cosine for n in a.neighbours], [n.cosine for n in b.neighbours], atol=1e-6)
    assert together[1].neighbours[0].id == 6342
    with pytest.raises(QueryError):
        gpt2_table.neighbours_of_vectors(vectors[:, :10])
