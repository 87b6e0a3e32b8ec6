"""The window on a real X screen with a window manager's frame (Xvfb and openbox), clicked with xdotool."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.ui.x_session import x_session

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 120
# New probe reports (one each 200 ms of the window's event loop) a place must keep to count as still.
STEADY_REPORTS = 5


def start_probe(  # type: ignore[type-arg]
    env: dict[str, str], tmp_path: Path, word: str = "", presentation: bool = False
) -> tuple[subprocess.Popen, Path]:
    out = tmp_path / "probe.json"
    probe = subprocess.Popen(
        [sys.executable, "-m", "tests.ui.window_probe", str(tmp_path / "settings.ini"), str(out), word,
         "1" if presentation else "0"],
        cwd=ROOT, env={**env, "PYTHONPATH": str(ROOT)}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    return probe, out


def wait_for(out: Path, ready, probe) -> dict:  # type: ignore[no-untyped-def, type-arg]
    """The probe's latest report once ``ready(report)`` holds (the window shown, framed, a map drawn...)."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        assert probe.poll() is None, "the window closed"
        try:
            facts = json.loads(out.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            facts = None
        if facts is not None and ready(facts):
            return facts
        time.sleep(0.2)
    raise AssertionError(f"never ready: {out.read_text(encoding='utf-8') if out.exists() else 'no report'}")


def wait_until_steady(out: Path, key: str, probe, reports: int = STEADY_REPORTS) -> dict:  # type: ignore[no-untyped-def, type-arg]
    """The probe's report once ``key`` has kept one value through ``reports`` new reports.

    A person aims at a dot they see. On a loaded machine the window may learn late where the
    window manager put it (a title bar's height, 22 px here) or a pane may still move, so a dot
    read before then is no longer under the pointer when it gets there: a CI run under load
    clicked 22 px below "tokyo" and looked up "madrid", which is drawn there. Reports are
    counted, not seconds: each is a turn of the window's own event loop, however slow it runs.
    """
    facts = wait_for(out, lambda f: key in f, probe)
    value, same = facts[key], 0
    while same < reports:
        last = facts["report"]
        facts = wait_for(out, lambda f, last=last: key in f and f["report"] > last, probe)
        same = same + 1 if facts[key] == value else 0
        value = facts[key]
    return facts


def inside(outer: list[int], inner: list[int]) -> bool:
    return (outer[0] <= inner[0] and outer[1] <= inner[1]
            and inner[0] + inner[2] <= outer[0] + outer[2] and inner[1] + inner[3] <= outer[1] + outer[3])


@pytest.mark.parametrize("presentation", [False, True])
@pytest.mark.parametrize("size", [(1366, 768), (1024, 640)])
def test_the_framed_window_and_its_status_bar_fit_a_laptops_screen(tmp_path, size, presentation) -> None:
    with x_session(*size) as env:
        probe, out = start_probe(env, tmp_path, "monday", presentation)
        try:
            # A model open and its map drawn: every pane has taken its place and its size.
            # A window manager's frame and a moved pane may still come: wait until nothing moves.
            facts = wait_until_steady(out, "frame", probe)
            facts = wait_until_steady(out, "dot", probe)
            assert facts["screen"][2:] == list(size)
            # Framed (the title bar is above the window's own top), and inside the screen with it.
            assert inside(facts["screen"], facts["frame"]), facts
            assert inside(facts["screen"], facts["status_bar"]), facts
        finally:
            probe.terminate()
            probe.wait(60)


def test_a_dot_the_pointer_rests_on_is_looked_up_when_clicked_with_xdotool(tmp_path) -> None:
    with x_session(1366, 768) as env:
        probe, out = start_probe(env, tmp_path, "tokyo")
        try:
            facts = wait_until_steady(out, "dot", probe)
            x, y = facts["dot"]
            subprocess.run(["xdotool", "mousemove", str(x), str(y)], env=env, check=True)
            time.sleep(0.5)  # a hand rests on the dot (it grows) before it clicks
            # The dot is still where the hand went, and the tip there names it first.
            rested = wait_for(out, lambda f: "dot" in f, probe)
            assert rested["dot"] == [x, y], rested
            assert rested["dot_targets"][:1] == ["tokyo"], rested
            subprocess.run(["xdotool", "click", "1"], env=env, check=True)
            wait_for(out, lambda f: f["text"] == " Tokyo", probe)
        finally:
            probe.terminate()
            probe.wait(60)
