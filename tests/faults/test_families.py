"""A broken families file gives a message and the chapter's families stay; saving is atomic."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from embedexplorer.core.common.errors import FamiliesError
from embedexplorer.core.maps.family_map import load_families, save_families

from .helpers import assert_one_line_error, run_cli

ORIGINAL = {"days": [" Monday", " Tuesday"], "cities": [" Paris", " Tokyo"]}
REPLACEMENT = {"colours": [" red", " green", " blue"] * 2000}  # large enough to take several writes


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ('{"families": {"days": [" Monday",]}}', "is not valid JSON: Expecting value: line 1 column 34"),
        ('{"families": {"days": [" Monday"', "is not valid JSON"),
        ("", "is not valid JSON: Expecting value: line 1 column 1 (char 0)"),
        ('["days"]', "must hold an object of family names and word lists"),
        ('{"families": {"days": " Monday"}}', "Family 'days' in custom.json must be a list of non-empty words"),
        ('{"families": {"days": []}}', "must be a list of non-empty words"),
        ('{"families": {}}', "custom.json has no families"),
    ],
)
def test_malformed_file_gives_a_message_and_stays_as_it_was(tmp_path: Path, content: str, words: str) -> None:
    bad = tmp_path / "custom.json"
    bad.write_text(content, encoding="utf-8")
    with pytest.raises(FamiliesError) as caught:
        load_families(bad)
    assert words in str(caught.value)
    assert bad.read_text(encoding="utf-8") == content  # never "repaired" behind the user's back


def test_undecodable_bytes_and_a_byte_order_mark(tmp_path: Path) -> None:
    latin = tmp_path / "latin.json"
    latin.write_bytes('{"families": {"cafés": [" café"]}}'.encode("latin-1"))
    with pytest.raises(FamiliesError, match="latin.json is not valid JSON"):
        load_families(latin)
    bom = tmp_path / "bom.json"
    bom.write_bytes(b"\xef\xbb\xbf" + json.dumps({"families": ORIGINAL}).encode("utf-8"))
    assert load_families(bom) == ORIGINAL


def test_no_custom_file_means_the_chapters_families() -> None:
    families = load_families(None)
    assert len(families) == 8 and sum(len(w) for w in families.values()) == 63


def test_a_failed_write_leaves_the_original_intact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "families.json"
    save_families(ORIGINAL, target)
    before = target.read_bytes()

    def disk_full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)  # fails after the temporary file is written
    with pytest.raises(FamiliesError) as caught:
        save_families(REPLACEMENT, target)
    assert str(caught.value) == (
        f"Cannot save the families to {target}: No space left on device. The file there is unchanged."
    )
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["families.json"]  # no temporary left over


def test_a_crash_mid_write_leaves_the_original_intact(tmp_path: Path) -> None:
    target = tmp_path / "families.json"
    save_families(ORIGINAL, target)
    before = target.read_bytes()
    # A process that dies (no cleanup, no exception handlers) between writing the new
    # bytes and putting them in place: as a power cut or a kill -9 would.
    script = (
        "import os, sys\n"
        "from embedexplorer.core.maps.family_map import save_families\n"
        "os.fsync = lambda fd: os._exit(9)\n"
        "save_families({'colours': [' red', ' green', ' blue'] * 2000}, sys.argv[1])\n"
    )
    result = subprocess.run([sys.executable, "-c", script, str(target)], timeout=60)
    assert result.returncode == 9  # it really died inside the write
    assert target.read_bytes() == before
    assert load_families(target) == ORIGINAL
    leftovers = [p for p in tmp_path.iterdir() if p != target]
    # the half-done write is a hidden temporary beside it, never the file itself
    assert leftovers and all(p.name.startswith(".families.json.") and p.suffix == ".tmp" for p in leftovers)


def test_families_that_could_not_be_read_back_are_not_saved(tmp_path: Path) -> None:
    target = tmp_path / "families.json"
    save_families(ORIGINAL, target)
    with pytest.raises(FamiliesError, match="must be a list of non-empty words"):
        save_families({"days": []}, target)
    assert load_families(target) == ORIGINAL


def test_saving_into_a_missing_folder_says_so(tmp_path: Path) -> None:
    with pytest.raises(FamiliesError, match="Cannot save the families to .*: No such file or directory"):
        save_families(ORIGINAL, tmp_path / "gone" / "families.json")


def test_cli_map_with_a_malformed_file(tmp_path: Path) -> None:
    bad = tmp_path / "custom.json"
    bad.write_text('{"families": ', encoding="utf-8")
    result = run_cli("map", "--model", "bundled", "--families", str(bad))
    assert_one_line_error(result, "The families file custom.json is not valid JSON")
