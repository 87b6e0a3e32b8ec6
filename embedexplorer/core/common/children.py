"""Child processes that never outlive the program that started them.

A child left running after the window closed or Ctrl-C ended the command line would
keep two cores busy for minutes (a whole-vocabulary t-SNE) with nobody to answer.
"""

from __future__ import annotations

import os
import signal
import sys
import threading

# prctl(2): ask the kernel to send a signal when the parent dies.
_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """Call first thing in a child: it ends when its parent does, however the parent ends.

    On Linux the kernel kills it (``PR_SET_PDEATHSIG``), even while it is inside compiled
    code that holds Python's lock; elsewhere a thread waits on the parent and ends the child.
    """
    parent = os.getppid()
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent died before the request above took hold
        os._exit(1)
    threading.Thread(target=_wait_for_parent, name="parent-watch", daemon=True).start()


def _wait_for_parent() -> None:
    import multiprocessing

    parent = multiprocessing.parent_process()
    if parent is None:
        return
    parent.join()  # returns when the parent process has ended
    os._exit(1)
