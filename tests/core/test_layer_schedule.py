"""When the layers streaming in from the model are compared with the table: gather a few, never run into the end."""

from __future__ import annotations

from embedexplorer.core.layers.layer_schedule import SearchSchedule


class Clock:
    """Seconds that move only when the test says (the schedule reads the time, nothing else)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def streamed(layers: int, every: float, pass_cost: float) -> tuple[list[list[int]], float]:
    """A model that sends a layer every ``every`` seconds, a search that costs ``pass_cost`` per pass plus a
    tenth of it per layer; returns the passes (the layers in each) and when the last pass ended."""
    clock = Clock()
    schedule = SearchSchedule(layers, clock=clock)
    arrivals = [0.001] + [0.001 + every * i for i in range(1, layers)]
    passes: list[list[int]] = []
    pending: list[int] = []
    busy_until = 0.0
    next_layer = 0
    while next_layer < layers or pending:
        # Whatever arrived while the search ran comes in one batch, as the model's process hands it over.
        clock.now = max(busy_until, arrivals[next_layer] if next_layer < layers else busy_until)
        batch = [i for i in range(next_layer, layers) if arrivals[i] <= clock.now]
        next_layer += len(batch)
        pending += batch
        schedule.arrived(len(batch))
        if schedule.search_now(len(pending)):
            seconds = pass_cost * (1 + 0.1 * len(pending))
            busy_until = clock.now + seconds
            schedule.searched(len(pending), seconds)
            passes.append(pending)
            pending = []
        elif next_layer == layers and not pending:
            break
    return passes, busy_until


def test_nothing_is_searched_before_anything_arrived() -> None:
    assert not SearchSchedule(13).search_now(0)


def test_the_first_pass_gathers_a_few_layers() -> None:
    clock = Clock()
    schedule = SearchSchedule(13, together=4, clock=clock)
    for count in range(1, 4):
        clock.now += 0.01
        schedule.arrived(1)
        assert not schedule.search_now(count)
    schedule.arrived(1)
    assert schedule.search_now(4)


def test_once_every_layer_has_arrived_the_rest_is_searched_at_once() -> None:
    schedule = SearchSchedule(3, together=100, clock=Clock())
    schedule.arrived(3)
    assert schedule.search_now(1)


def test_every_layer_is_searched_once_and_in_order() -> None:
    for every, cost in ((0.012, 0.015), (0.001, 0.02), (0.5, 0.01), (0.012, 0.05)):
        passes, _ = streamed(13, every, cost)
        assert [layer for batch in passes for layer in batch] == list(range(13))


def test_a_pass_that_would_run_into_the_last_layer_waits_for_it() -> None:
    # GPT-2 small on two cores: a layer every 12 ms, a pass of the table about 9 ms plus a little per layer.
    passes, ended = streamed(13, 0.012, 0.009)
    last_arrival = 0.001 + 0.012 * 12
    tail = 0.009 * (1 + 0.1 * len(passes[-1]))
    # No pass was still running when the last layer came: the answer waited for one pass only.
    assert ended <= last_arrival + tail + 1e-9
    assert len(passes[-1]) <= 3
    assert all(len(batch) >= 2 for batch in passes[:-1])  # each pass while the model ran served several


def test_a_slow_model_gets_each_layer_searched_soon_after_it_arrives() -> None:
    # A large model: seconds per layer, a pass of milliseconds; the answer never waits for many layers.
    passes, ended = streamed(33, 0.5, 0.01)
    assert max(len(batch) for batch in passes) <= 4
    assert ended <= 0.001 + 0.5 * 32 + 0.01 * 1.4 + 1e-9


def test_a_fast_model_is_searched_in_one_pass_at_the_end() -> None:
    # A tiny model whose layers come faster than a pass: searching early would only make the answer wait.
    passes, _ = streamed(7, 0.001, 0.02)
    assert len(passes) <= 2
