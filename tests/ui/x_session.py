"""A virtual screen with a window manager (Xvfb, openbox, xprop: .ci/setup) for tests needing a frame and a pointer."""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager

# Xvfb and openbox start in well under a second alone; a busy machine gets two minutes each.
START_TIMEOUT_S = 120
# Once (of some 1,900 tests, with other X servers starting beside it) an Xvfb never named its display:
# one that has not within this time is ended and another started, three in all.
XVFB_TRIES = 3


@contextmanager
def x_session(width: int, height: int) -> Iterator[dict[str, str]]:
    """An X display of ``width`` x ``height`` with openbox on it; yields the environment to run the app in.

    Xvfb picks a free display itself (``-displayfd``), so the test never lands on another's screen.
    """
    with tempfile.TemporaryFile() as number:
        screen, display = _start_xvfb(number, width, height)
        try:
            env = {**os.environ, "DISPLAY": f":{display}", "QT_QPA_PLATFORM": "xcb"}
            manager = subprocess.Popen(["openbox"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                _wait_for_manager(env)
                yield env
            finally:
                manager.terminate()
                manager.wait(60)  # generous: a busy machine may be slow to end it
        finally:
            screen.terminate()
            screen.wait(60)


def _start_xvfb(number, width: int, height: int) -> tuple[subprocess.Popen, str]:  # type: ignore[no-untyped-def, type-arg]
    """A running Xvfb and the display it named, in at most ``XVFB_TRIES`` tries."""
    for attempt in range(XVFB_TRIES):
        number.seek(0)
        number.truncate()
        screen = subprocess.Popen(
            ["Xvfb", "-displayfd", str(number.fileno()), "-screen", "0", f"{width}x{height}x24", "-nolisten", "tcp"],
            pass_fds=(number.fileno(),), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        try:
            return screen, _read_display(number, screen, START_TIMEOUT_S / XVFB_TRIES)
        except RuntimeError:
            screen.terminate()
            screen.wait(60)
            if attempt == XVFB_TRIES - 1:
                raise
    raise AssertionError("unreachable")


def _read_display(number, screen: subprocess.Popen, timeout_s: float) -> str:  # type: ignore[no-untyped-def, type-arg]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        number.seek(0)
        text = number.read().decode().strip()
        if text:
            return text
        if screen.poll() is not None:
            raise RuntimeError("Xvfb did not start")
        time.sleep(0.05)
    raise RuntimeError("Xvfb named no display")


def _wait_for_manager(env: dict[str, str]) -> None:
    """Until a window manager owns the screen (the root names its check window), so windows get a frame."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        found = subprocess.run(
            ["xprop", "-root", "_NET_SUPPORTING_WM_CHECK"], env=env, capture_output=True, text=True, check=False
        )
        if "window id" in found.stdout:
            return
        time.sleep(0.05)
    raise RuntimeError("openbox did not take the screen")
