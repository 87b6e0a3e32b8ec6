"""Cycles are collected in the GUI thread only, however much a worker's thread allocates."""

from __future__ import annotations

import gc
import threading
import weakref

from embedexplorer.app import collect_in_gui_thread


class _Node:
    """An object in a cycle with itself: only the collector frees it."""

    def __init__(self) -> None:
        self.me = self


def test_a_workers_garbage_in_cycles_is_collected_by_the_gui_threads_timer(qtbot) -> None:  # type: ignore[no-untyped-def]
    collecting_threads: list[str] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collecting_threads.append(threading.current_thread().name)

    gc.callbacks.append(seen)
    timer = collect_in_gui_thread(None)
    try:
        watched: list[weakref.ref[_Node]] = []

        def make_cycles() -> None:  # far past the youngest generation's threshold, many times over
            for i in range(50 * gc.get_threshold()[0]):
                node = _Node()
                if i % 1000 == 0:
                    watched.append(weakref.ref(node))

        worker = threading.Thread(target=make_cycles, name="cycle-maker")
        worker.start()
        worker.join()
        assert watched and all(ref() is not None for ref in watched)  # nothing collected them yet
        assert "cycle-maker" not in collecting_threads
        qtbot.waitUntil(lambda: all(ref() is None for ref in watched), timeout=10_000)
        assert collecting_threads and set(collecting_threads) == {threading.main_thread().name}
    finally:
        gc.callbacks.remove(seen)
        timer.stop()
        gc.enable()
