"""Issue 35, item 7: presentation gives the map more room than normal mode, under a window manager's title bar.

At 1024x640, 1366x768 and 1600x1000 (maximised with a double-click on the title bar), on an
X screen with openbox: the bundled model opens, the person clicks into the Text box, types a
word, then turns presentation on with Ctrl+Shift+P. The map's plot is measured in both modes
(presentation's must be at least as large), the Model box must hold its whole name in both,
and the Row's plot must be a plot, not a strip, in both (the issue saw it 20 pixels tall at
1600x1000): looked at above the neighbours, or on its tab beside the map (Alt+R), and presentation's
at least as tall as normal mode's.
"""

from __future__ import annotations

import subprocess
import time

import pytest

from embedexplorer.ui.panes.row_view import MIN_ROW_PLOT_HEIGHT
from tests.ui.test_under_a_window_manager import start_probe, wait_for
from tests.ui.x_session import x_session

WORD = "nurse"


def xdotool(env: dict[str, str], *args: str) -> None:
    subprocess.run(["xdotool", *args], env=env, check=True)


LAID_OUT = ("frame", "plot", "row_plot", "model_box")


def settled(out, probe, check=lambda f: True) -> dict:  # type: ignore[no-untyped-def, type-arg]
    """The report once ``check`` holds and the window's layout has stopped changing (on a busy machine a
    window manager's frame and a moved pane may take a while): the same sizes in two reports a second apart."""
    facts = wait_for(out, check, probe)
    for _ in range(30):
        time.sleep(1)
        again = wait_for(out, check, probe)
        if all(again.get(key) == facts.get(key) for key in LAID_OUT):
            return again
        facts = again
    return facts


def area(facts: dict) -> float:  # type: ignore[type-arg]
    width, height = facts["plot"]
    return float(width * height)


def assert_whole_name(facts: dict, mode: str) -> None:  # type: ignore[type-arg]
    name, room, need = facts["model_box"]
    assert name == "all-MiniLM-L6-v2 (bundled)"
    assert need <= room, f"{mode}: the Model box gives {room} px to a name that needs {need}"


def row_plot_height(env, out, probe) -> float:  # type: ignore[no-untyped-def]
    """The Row plot's drawing height where the person sees it: above the neighbours, or on its tab (Alt+R)."""
    facts = settled(out, probe)
    if facts["row_plot"] is None:
        xdotool(env, "key", "alt+r")
        facts = settled(out, probe, lambda f: f["row_plot"] is not None)
    return float(facts["row_plot"][1])


def show_map(env, out, probe) -> None:  # type: ignore[no-untyped-def]
    """A click on the map's tab, the pointer resting first (Alt+M is the Map menu's too)."""
    x, y = settled(out, probe)["map_tab"]
    xdotool(env, "mousemove", str(x), str(y))
    time.sleep(0.5)
    xdotool(env, "click", "1")


def maximise(env, out, probe, facts, width: int, height: int) -> dict:  # type: ignore[no-untyped-def, type-arg]
    """A double-click on the title bar, as a person maximises; again if a busy machine took it for two clicks."""
    for _ in range(3):
        x, y, w, _h = facts["frame"]
        xdotool(env, "mousemove", str(x + w // 2), str(y + 8))
        time.sleep(0.5)
        xdotool(env, "click", "--repeat", "2", "--delay", "60", "1")
        for _ in range(20):
            time.sleep(0.5)
            facts = wait_for(out, lambda f: True, probe)
            if facts["frame"][2:] == [width, height]:
                return settled(out, probe)
    raise AssertionError(f"the window was not maximised: {facts['frame']}")


@pytest.mark.parametrize("size", [(1024, 640), (1366, 768), (1600, 1000)])
def test_presentation_draws_the_map_at_least_as_large_as_normal_mode(tmp_path, size) -> None:  # type: ignore[no-untyped-def]
    width, height = size
    with x_session(width, height) as env:
        probe, out = start_probe(env, tmp_path, WORD)
        try:
            facts = settled(out, probe, lambda f: "dot" in f)
            if width >= 1600:
                facts = maximise(env, out, probe, facts, width, height)
            x, y = facts["text_box"]
            xdotool(env, "mousemove", str(x), str(y))
            time.sleep(0.5)
            xdotool(env, "click", "1")
            xdotool(env, "key", "ctrl+a")
            xdotool(env, "type", "--delay", "60", WORD)
            normal = settled(out, probe, lambda f: f["text"] == WORD)
            assert_whole_name(normal, "normal")
            if width >= 1600:
                assert normal["row_plot"] is not None, "the row sits above the neighbours on a tall window"
            normal_row = row_plot_height(env, out, probe)
            assert normal_row >= MIN_ROW_PLOT_HEIGHT, (size, "normal", normal_row)
            show_map(env, out, probe)
            xdotool(env, "key", "ctrl+shift+p")
            presenting = settled(out, probe, lambda f: f["presentation"])
            assert area(presenting) >= area(normal), (size, normal["plot"], presenting["plot"])
            assert presenting["plot"][1] >= 0.9 * normal["plot"][1], (size, normal["plot"], presenting["plot"])
            assert_whole_name(presenting, "presentation")
            presenting_row = row_plot_height(env, out, probe)
            assert presenting_row >= max(MIN_ROW_PLOT_HEIGHT, normal_row), (size, normal_row, presenting_row)
        finally:
            probe.terminate()
            probe.wait(20)
