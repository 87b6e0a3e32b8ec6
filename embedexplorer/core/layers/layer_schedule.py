"""When to compare the layers streaming in from the model with the table.

The model runs a text forward in its own process and sends each layer's vector as soon
as it exists; meanwhile the worker compares the layers that have arrived with every row
of the table. Each such pass reads the whole table (a fixed cost) and then costs a little
more per layer in it, and it shares the memory with the forward pass beside it. So the
passes gather several layers, and the one thing to avoid is a pass still running when
the last layer arrives: every millisecond after that adds to the answer's time. The
schedule measures how fast layers arrive and what a pass costs, and holds layers back
for the final pass when a pass now would not end in time.
"""

from __future__ import annotations

import time
from collections.abc import Callable

# Layers gathered for one pass while the model runs, when there is time for it.
SEARCH_TOGETHER = 4
# A pass reads the whole table once, which costs about as much as scoring this many layers.
_PASS_IN_LAYERS = 5.0
# A pass must end this share of a layer's time before the last layer is expected.
_SAFETY = 0.5


class SearchSchedule:
    """Tells, each time layers arrive, whether to search the ones waiting now.

    ``expected`` is how many layers the text will send (the input and every layer).
    """

    def __init__(
        self, expected: int, together: int = SEARCH_TOGETHER, clock: Callable[[], float] = time.perf_counter
    ) -> None:
        self.expected = expected
        self.together = max(1, together)
        self.clock = clock
        self.arrivals: list[float] = []
        self._pass: tuple[int, float] | None = None  # the last pass: layers in it, seconds

    def arrived(self, count: int) -> None:
        """``count`` layers have just arrived."""
        now = self.clock()
        self.arrivals += [now] * count

    def searched(self, layers: int, seconds: float) -> None:
        """A pass over ``layers`` layers took ``seconds``."""
        if layers > 0:
            self._pass = (layers, seconds)

    def search_now(self, pending: int) -> bool:
        """Whether to search the ``pending`` layers that arrived and wait now, or to wait for more."""
        if pending <= 0:
            return False
        still_to_come = self.expected - len(self.arrivals)
        if still_to_come <= 0:
            return True  # the model is done: nothing to wait for
        cadence = self._cadence()
        if cadence is None or self._pass is None:
            # Nothing measured yet (the first pass): gather a few, there is time at the start.
            return pending >= self.together and still_to_come > 1
        now = self.clock()
        deadline = now + still_to_come * cadence - _SAFETY * cadence
        if now + self._cost(pending) > deadline:
            return False  # it would still run when the last layer comes: search these with it
        # It fits: go when enough have gathered, or when one more layer would no longer fit.
        return pending >= self.together or now + cadence + self._cost(pending + 1) > deadline

    def _cadence(self) -> float | None:
        """Seconds between two layers, from the first and the latest arrival."""
        times = self.arrivals
        # The first layer (the input) comes at once; the layers after it take their time.
        if len(times) < 3 or times[-1] <= times[1]:
            return None
        return (times[-1] - times[1]) / (len(times) - 2)

    def _cost(self, layers: int) -> float:
        """A pass's seconds for ``layers`` layers, scaled from the last pass measured."""
        assert self._pass is not None
        measured, seconds = self._pass
        return seconds * (_PASS_IN_LAYERS + layers) / (_PASS_IN_LAYERS + measured)
