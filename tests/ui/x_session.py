"""A virtual screen with a window manager (Xvfb, openbox, xprop: .ci/setup) for tests needing a frame and a pointer."""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

# Xvfb and openbox start in well under a second alone; a busy machine gets two minutes each.
START_TIMEOUT_S = 120
# Once (of some 1,900 tests, with other X servers starting beside it) an Xvfb never named its display;
# once (of some 2,400, with the clean-root check beside them) openbox never took its screen. Each is
# ended and started again, three times in all, and the last failure says what each process printed.
TRIES = 3


class XSessionError(RuntimeError):
    """The screen or its window manager did not start, after every try."""


@contextmanager
def x_session(width: int, height: int) -> Iterator[dict[str, str]]:
    """An X display of ``width`` x ``height`` with openbox on it; yields the environment to run the app in.

    Xvfb picks a free display itself (``-displayfd``), so the test never lands on another's screen.
    If openbox ends before it takes the screen, it is started again; if it still has not, a new
    screen is made for it.
    """
    failures: list[str] = []
    for _ in range(TRIES):
        with ExitStack() as started:
            try:
                env = _screen_with_manager(started, width, height)
            except XSessionError as failure:
                failures.append(str(failure))
                continue
            yield env
            return
    raise XSessionError("; ".join(failures))


def _screen_with_manager(started: ExitStack, width: int, height: int) -> dict[str, str]:
    """Xvfb and openbox, each ended by ``started``; the environment that reaches the display."""
    number = started.enter_context(tempfile.TemporaryFile())
    log = started.enter_context(tempfile.TemporaryFile())
    screen = subprocess.Popen(
        ["Xvfb", "-displayfd", str(number.fileno()), "-screen", "0", f"{width}x{height}x24", "-nolisten", "tcp"],
        pass_fds=(number.fileno(),), stdout=subprocess.DEVNULL, stderr=log,
    )
    started.callback(_end, screen)
    display = _read_display(number, screen, log, START_TIMEOUT_S / TRIES)
    env = {**os.environ, "DISPLAY": f":{display}", "QT_QPA_PLATFORM": "xcb"}
    _start_manager(started, env, screen, log)
    return env


def _start_manager(started: ExitStack, env: dict[str, str], screen: subprocess.Popen, log) -> None:  # type: ignore[no-untyped-def, type-arg]
    """openbox on the display, started again if it ends before it owns the screen."""
    deadline = time.monotonic() + START_TIMEOUT_S / TRIES
    while True:
        manager = subprocess.Popen(["openbox"], env=env, stdout=subprocess.DEVNULL, stderr=log)
        started.callback(_end, manager)
        while manager.poll() is None:
            if _manager_owns_screen(env):
                return
            if screen.poll() is not None:
                raise XSessionError(f"Xvfb on {env['DISPLAY']} ended (exit {screen.returncode}): {_tail(log)}")
            if time.monotonic() > deadline:
                raise XSessionError(f"openbox did not take {env['DISPLAY']} in time: {_tail(log)}")
            time.sleep(0.05)
        if time.monotonic() > deadline:
            raise XSessionError(f"openbox ended on {env['DISPLAY']} (exit {manager.returncode}): {_tail(log)}")
        time.sleep(0.5)


def _manager_owns_screen(env: dict[str, str]) -> bool:
    """A window manager owns the screen once the root names its check window, so windows get a frame."""
    found = subprocess.run(
        ["xprop", "-root", "_NET_SUPPORTING_WM_CHECK"], env=env, capture_output=True, text=True, check=False
    )
    return "window id" in found.stdout


def _read_display(number, screen: subprocess.Popen, log, timeout_s: float) -> str:  # type: ignore[no-untyped-def, type-arg]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        number.seek(0)
        text = number.read().decode().strip()
        if text:
            return text
        if screen.poll() is not None:
            raise XSessionError(f"Xvfb did not start (exit {screen.returncode}): {_tail(log)}")
        time.sleep(0.05)
    raise XSessionError(f"Xvfb named no display in {timeout_s:.0f} s: {_tail(log)}")


def _end(process: subprocess.Popen) -> None:  # type: ignore[type-arg]
    process.terminate()
    try:
        process.wait(60)  # generous: a busy machine may be slow to end it
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _tail(log) -> str:  # type: ignore[no-untyped-def]
    """The last lines Xvfb and openbox printed, on one line, for the failure's message."""
    log.seek(0)
    lines = log.read().decode(errors="replace").strip().splitlines()
    return " | ".join(lines[-6:]) or "(nothing printed)"
