"""Rows to 2-D points: the exact PCA, or t-SNE (openTSNE) and UMAP (umap-learn), never on a sample.

t-SNE runs openTSNE's own pipeline with its own defaults; only the nearest-neighbour
step is driven from here, in blocks, so that a long map reports progress and can
stop between blocks. A small map (the family map's 63 words) lowers t-SNE's perplexity
and UMAP's neighbour count to what its rows allow, and its caption says so. UMAP is
optional: it needs umap-learn (and numba), which the packaged app leaves out for their size.
"""

from __future__ import annotations

import importlib.util
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from ..common.constants import MAX_SEED, METHOD_NAMES, METHODS, SEED  # here too: the window names them first
from ..common.errors import Interrupted, QueryError
from ..search.stored_rows import StoredRows
from .family_map import Projection, pca_2d

PERPLEXITY = 30
# How many rows a block of neighbour look-ups covers between progress reports.
_KNN_BLOCK = 2048
# Rows per block of neighbour searches: each takes about a second for 768 numbers a row, so
# the progress bar moves and a stop is heard that often.
_SEARCH_BLOCK = 256
# While one long call runs (Annoy builds its trees in one go), progress is told this often.
_TICK_S = 1.0
# Below this many rows openTSNE finds neighbours exactly (scikit-learn), above it with Annoy.
_OPENTSNE_EXACT_BELOW = 1000
# t-SNE's iterations between progress reports (and chances to stop).
_TSNE_REPORT_EVERY = 10

# umap-learn's own number of neighbours a row keeps.
UMAP_NEIGHBOURS = 15
# Fewer rows make no neighbourhood worth keeping: t-SNE's perplexity would fall under 3, and
# umap-learn's first layout fails on three rows. PCA maps them.
MIN_NEIGHBOUR_ROWS = 10


def neighbourhood(method: str, rows: int) -> float:
    """t-SNE's perplexity or UMAP's neighbour count on a map of ``rows`` rows.

    The libraries' defaults, lowered on a small map (the family map's 63 words): openTSNE looks at
    3 x perplexity neighbours a row and UMAP at n_neighbors, and a row has only ``rows - 1``.
    The same row count gives the same value, so the window and the command line agree.
    """
    if method == "tsne":
        return PERPLEXITY if rows - 1 >= 3 * PERPLEXITY else (rows - 1) / 3
    return min(UMAP_NEIGHBOURS, rows - 1)


def keeps(method: str, rows: int) -> str:
    """What a t-SNE or UMAP map of ``rows`` rows keeps of them, for its caption (a lowered setting says so)."""
    size = neighbourhood(method, rows)
    if method == "tsne":
        shown = f"{size:.1f}, lowered from {PERPLEXITY} for {rows:,} rows" if size < PERPLEXITY else f"{PERPLEXITY}"
        return (
            f"each row's nearest neighbours by cosine (perplexity {shown}); "
            "distances between clusters and cluster sizes mean little"
        )
    lowered = f" (lowered from {UMAP_NEIGHBOURS} for {rows:,} rows)" if size < UMAP_NEIGHBOURS else ""
    return f"each row's {size:.0f} nearest neighbours by cosine{lowered}; distances between clusters mean little"

Progress = Callable[[int, int, str], None]
ShouldStop = Callable[[], bool]


@dataclass(frozen=True)
class Layout:
    """Where each row sits on the map, and what the projection keeps of the rows."""

    coords: np.ndarray  # (rows, 2) float64
    method: str
    pca: Projection | None  # PCA only: it places any further row (a selected token) too
    keeps: str  # one sentence for the caption
    # The axes' own titles (a map on two directions names their pairs); None: "direction 1 of the ... map".
    axis_titles: tuple[str, str] | None = None

    @property
    def name(self) -> str:
        return METHOD_NAMES[self.method]

    def axis_title(self, axis: int) -> str:
        """The title of the x (0) or y (1) axis."""
        if self.axis_titles is not None:
            return self.axis_titles[axis]
        return f"direction {axis + 1} of the {self.name} map"


def available(method: str) -> bool:
    """True when the library for ``method`` is installed here."""
    if method == "pca":
        return True
    # A real module, not a namespace left behind by an uninstall (an empty folder of that name).
    spec = importlib.util.find_spec({"umap": "umap", "tsne": "openTSNE"}.get(method, method))
    return spec is not None and spec.origin is not None


def check_method(method: str) -> None:
    """A QueryError in words when ``method`` is unknown or its library is missing."""
    if method not in METHODS:
        raise QueryError(f"Unknown projection {method!r}: choose one of {', '.join(METHODS)}.")
    if not available(method):
        package = {"tsne": "openTSNE", "umap": "umap-learn"}[method]
        raise QueryError(
            f"{METHOD_NAMES[method]} needs the {package} package, which is not installed here "
            f"(pip install {package}). PCA works without it."
        )


def project(
    rows: np.ndarray | StoredRows,
    method: str = "pca",
    *,
    seed: int = SEED,
    progress: Progress | None = None,
    should_stop: ShouldStop | None = None,
    threads: int = 2,
    separate_process: bool = False,
) -> Layout:
    """Place every row of ``rows`` on a 2-D map with ``method``; the same seed gives the same map.

    ``should_stop`` is asked between blocks; when it says yes, ``Interrupted`` is raised
    and nothing is returned. ``separate_process`` runs t-SNE in a child process: openTSNE's
    compiled loops hold Python's lock for up to hundreds of milliseconds, which would freeze
    a window whose worker thread runs them.
    """
    check_method(method)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed <= MAX_SEED:
        raise QueryError(f"The seed of a map must be a whole number from 0 to {MAX_SEED:,}, not {seed!r}.")
    if rows.ndim != 2 or rows.shape[0] < 2:
        raise QueryError("A map needs at least two rows.")
    report = progress or (lambda done, total, message: None)
    stop = should_stop or (lambda: False)
    if method == "pca":
        projection = pca_2d(rows)
        return Layout(
            projection.apply(rows),
            "pca",
            projection,
            f"the two directions in which the rows differ most; it keeps {projection.explained_variance:.1%} "
            "of the spread",
        )
    count = int(rows.shape[0])
    if count < MIN_NEIGHBOUR_ROWS:
        raise QueryError(
            f"{METHOD_NAMES[method]} needs at least {MIN_NEIGHBOUR_ROWS} rows; this map has {count}. "
            "Use PCA for small maps."
        )
    size = neighbourhood(method, count)
    data = np.ascontiguousarray(rows, dtype=np.float32)
    if method == "tsne" and separate_process:
        coords = _tsne_in_child(data, seed, report, stop, threads)
    elif method == "tsne":
        coords = _tsne(data, seed, report, stop, threads)
    else:
        coords = _umap(data, seed, report, stop, int(size))
    return neighbour_layout(np.asarray(coords, dtype=np.float64), method)


def neighbour_layout(coords: np.ndarray, method: str) -> Layout:
    """A t-SNE or UMAP map's layout (just computed, or read from the cache), with its setting and caption."""
    return Layout(coords, method, None, keeps(method, int(coords.shape[0])))


def tsne_bare(rows: np.ndarray, seed: int = SEED, threads: int = 2) -> np.ndarray:
    """openTSNE called as its documentation shows, with the settings ``project`` uses: the baseline."""
    from openTSNE import TSNE

    data = np.ascontiguousarray(rows, dtype=np.float32)
    return np.asarray(
        TSNE(perplexity=PERPLEXITY, metric="cosine", n_jobs=threads, random_state=seed).fit(data)
    )


def _tsne(data: np.ndarray, seed: int, report: Progress, stop: ShouldStop, threads: int) -> np.ndarray:
    from openTSNE import TSNE, affinity

    perplexity = neighbourhood("tsne", data.shape[0])  # as the caption says, in this process or a child
    tsne = TSNE(perplexity=perplexity, metric="cosine", n_jobs=threads, random_state=seed)
    total_iterations = tsne.early_exaggeration_iter + tsne.n_iter
    # The neighbour step and the optimisation each take about half of the time.
    scale = 1000
    knn_share = scale // 2

    def knn_progress(done: int, total: int, message: str) -> None:
        report(done * knn_share // max(total, 1), scale, message)

    if data.shape[0] < _OPENTSNE_EXACT_BELOW:
        # openTSNE's own choice for few rows: an exact neighbour search, quick enough to need no steps.
        report(0, scale, "t-SNE: finding each row's neighbours")
        affinities = affinity.PerplexityBasedNN(
            data, perplexity=perplexity, metric="cosine", n_jobs=threads, random_state=seed
        )
    else:
        k = min(data.shape[0] - 1, 3 * PERPLEXITY)  # a thousand rows or more: never lowered
        index = _stepped_annoy_class()(
            data, k, metric="cosine", n_jobs=threads, random_state=seed, progress=knn_progress, should_stop=stop
        )
        affinities = affinity.PerplexityBasedNN(
            perplexity=perplexity, metric="cosine", n_jobs=threads, random_state=seed, knn_index=index
        )
    if stop():
        raise Interrupted("The t-SNE map was stopped.")
    iteration_base = [0]
    stopped = [False]

    def callback(iteration: int, error: float, embedding: np.ndarray) -> bool:
        # openTSNE counts iterations from 1 in each of its two phases.
        done = iteration_base[0] + iteration
        report(knn_share + done * (scale - knn_share) // total_iterations, scale, "t-SNE: arranging the points")
        if stop():
            stopped[0] = True
            return True
        return False

    tsne.callbacks = [callback]
    tsne.callbacks_every_iters = _TSNE_REPORT_EVERY
    report(knn_share, scale, "t-SNE: arranging the points")
    embedding = tsne.prepare_initial(data, affinities)
    from openTSNE.tsne import OptimizationInterrupt

    try:
        embedding.optimize(
            n_iter=tsne.early_exaggeration_iter,
            exaggeration=tsne.early_exaggeration,
            momentum=tsne.initial_momentum,
            inplace=True,
            propagate_exception=True,
        )
        iteration_base[0] = tsne.early_exaggeration_iter
        embedding.optimize(
            n_iter=tsne.n_iter,
            exaggeration=tsne.exaggeration,
            momentum=tsne.final_momentum,
            inplace=True,
            propagate_exception=True,
        )
    except OptimizationInterrupt:
        stopped[0] = True
    if stopped[0]:
        raise Interrupted("The t-SNE map was stopped.")
    report(scale, scale, "t-SNE: done")
    return np.asarray(embedding)


def _tsne_in_child(data: np.ndarray, seed: int, report: Progress, stop: ShouldStop, threads: int) -> np.ndarray:
    """``_tsne`` in a child process; its progress comes back on a queue, a stop goes out as an event."""
    import multiprocessing
    import queue

    report(0, 0, "t-SNE: starting its process")  # the child needs a few seconds before its first word
    context = multiprocessing.get_context("spawn")
    messages = context.Queue()
    stop_event = context.Event()
    child = context.Process(
        target=_tsne_child, args=(data, seed, threads, messages, stop_event), name="embedexplorer-tsne", daemon=True
    )
    child.start()
    finished = False
    try:
        while True:
            if stop():
                # Not a request to the child: it may be inside one long call (Annoy builds its
                # trees in one go, 50 s for a whole vocabulary) and would hear it only after.
                raise Interrupted("The t-SNE map was stopped.")
            try:
                kind, *rest = messages.get(timeout=0.1)
            except queue.Empty:
                if not child.is_alive():
                    raise QueryError(
                        f"The t-SNE process ended without an answer (exit code {child.exitcode})."
                    ) from None
                continue
            if kind == "progress":
                report(*rest)
            elif kind == "done":
                finished = True
                return np.asarray(rest[0])
            elif kind == "stopped":
                raise Interrupted("The t-SNE map was stopped.")
            else:
                raise QueryError(f"The t-SNE map could not be computed: {rest[0]}")
    finally:
        stop_event.set()
        if finished:
            child.join(timeout=5)  # it has answered and is leaving on its own
        if child.is_alive():
            # Stopped, or failed: the child holds nothing worth saving, so it ends now.
            child.terminate()
            child.join(timeout=5)
        messages.close()


# How far the t-SNE child steps back for the cores (os.nice): the window's process goes first.
# EMBEDEXPLORER_TSNE_NICE overrides it, 0 to 19. The tests set 0: they wait on the child, and on a
# busy machine a child at 10 gets about a tenth of the share of each process at 0 (minutes, not seconds).
TSNE_NICE_ENV = "EMBEDEXPLORER_TSNE_NICE"
DEFAULT_TSNE_NICE = 10


def tsne_nice() -> int:
    try:
        return min(19, max(0, int(os.environ.get(TSNE_NICE_ENV, DEFAULT_TSNE_NICE))))
    except ValueError:
        return DEFAULT_TSNE_NICE


def _tsne_child(data: np.ndarray, seed: int, threads: int, messages: object, stop_event: object) -> None:
    """The child's side: the same ``_tsne``, reporting on ``messages`` and stopping on ``stop_event``."""
    from ..common.children import die_with_parent

    die_with_parent()  # Ctrl-C or a crash of the parent must not leave t-SNE running on its own
    import warnings

    # A small map's exact neighbour search (scikit-learn) finds it runs in a child and uses one thread,
    # which is its whole work here: said on the terminal of every t-SNE map under 1,000 rows, it is noise.
    warnings.filterwarnings("ignore", message="Loky-backed parallel loops cannot be called in a multiprocessing")

    def report(done: int, total: int, message: str) -> None:
        messages.put(("progress", done, total, message))  # type: ignore[attr-defined]

    if hasattr(os, "nice") and tsne_nice():  # a background job: the window's process goes first for the cores
        os.nice(tsne_nice())

    try:
        coords = _tsne(data, seed, report, stop_event.is_set, threads)  # type: ignore[attr-defined]
    except Interrupted:
        messages.put(("stopped",))  # type: ignore[attr-defined]
    except Exception as exc:  # noqa: BLE001 - the parent turns it into one message
        messages.put(("error", f"{type(exc).__name__}: {exc}"))  # type: ignore[attr-defined]
    else:
        messages.put(("done", coords))  # type: ignore[attr-defined]


_STEPPED_ANNOY: type | None = None


def _stepped_annoy_class() -> type:
    """openTSNE's Annoy neighbour index, with the same calls made in blocks (built once, on first use)."""
    global _STEPPED_ANNOY
    if _STEPPED_ANNOY is not None:
        return _STEPPED_ANNOY
    from openTSNE.nearest_neighbors import Annoy
    from sklearn.utils import check_random_state

    class SteppedAnnoy(Annoy):  # type: ignore[misc, valid-type]
        """Annoy.build exactly, but reporting progress and asking to stop between blocks of rows."""

        def __init__(self, *args: object, progress: Progress, should_stop: ShouldStop, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)
            self._progress = progress
            self._should_stop = should_stop

        def build(self) -> tuple[np.ndarray, np.ndarray]:
            from openTSNE.dependencies.annoy import AnnoyIndex

            data, k = self.data, self.k
            count = data.shape[0]
            # Adding, building the trees, then one look-up per row: weighted by their rough cost.
            total = 3 * count
            started = time.perf_counter()
            self.index = AnnoyIndex(data.shape[1], "angular")
            random_state = check_random_state(self.random_state)
            self.index.set_seed(random_state.randint(np.iinfo(np.int32).max))
            for start in range(0, count, _KNN_BLOCK):
                self._check()
                for i in range(start, min(start + _KNN_BLOCK, count)):
                    self.index.add_item(i, data[i])
                self._progress(min(start + _KNN_BLOCK, count) // 2, total, "t-SNE: indexing the rows")
            indexing_s = time.perf_counter() - started
            self._progress(count // 2, total, "t-SNE: building the neighbour trees")
            # 50 trees: openTSNE's (and FIt-SNE's) default. Built by one thread: Annoy's threads
            # add their trees in whatever order they finish, so two threads give a different map
            # on every run; the trees take a few percent of the neighbour step's time.
            with _ticking(self._progress, count // 2, count // 2, total, 3 * indexing_s,
                          "t-SNE: building the neighbour trees"):
                self.index.build(n_jobs=1, n_trees=50)
            distances = np.zeros((count, k))
            indices = np.zeros((count, k), dtype=int)

            def neighbours_of(i: int) -> None:
                # Annoy returns the row itself first.
                found, far = self.index.get_nns_by_item(i, k + 1, include_distances=True)
                indices[i] = found[1:]
                distances[i] = far[1:]

            # Threads, not joblib: Annoy releases the GIL in its searches, and nothing here is pickled.
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(max_workers=max(1, self.n_jobs)) as pool:
                for start in range(0, count, _SEARCH_BLOCK):
                    self._check()
                    block = range(start, min(start + _SEARCH_BLOCK, count))
                    if self.n_jobs == 1:
                        for i in block:
                            neighbours_of(i)
                    else:
                        list(pool.map(neighbours_of, block))
                    self._progress(count + 2 * block.stop, total, "t-SNE: finding each row's neighbours")
            return indices, distances

        def _check(self) -> None:
            if self._should_stop():
                raise Interrupted("The t-SNE map was stopped.")

    _STEPPED_ANNOY = SteppedAnnoy
    return SteppedAnnoy


@contextmanager
def _ticking(
    report: Progress, start: int, span: int, total: int, expected_s: float, message: str
) -> Iterator[None]:
    """Report progress every ``_TICK_S`` while a call that reports nothing runs.

    The bar moves from ``start`` towards ``start + span`` as the elapsed time nears
    ``expected_s`` (an estimate), stopping short of the end until the call returns; the
    message counts the seconds, so a long step never looks like a hang.
    """
    done = threading.Event()
    began = time.perf_counter()

    def tick() -> None:
        while not done.wait(_TICK_S):
            elapsed = time.perf_counter() - began
            share = min(0.95, elapsed / expected_s) if expected_s > 0 else 0.5
            report(start + int(span * share), total, f"{message} ({elapsed:.0f} s)")

    ticker = threading.Thread(target=tick, name="t-SNE progress", daemon=True)
    ticker.start()
    try:
        yield
    finally:
        done.set()
        ticker.join()


def _umap(data: np.ndarray, seed: int, report: Progress, stop: ShouldStop, neighbours: int) -> np.ndarray:
    import umap

    report(0, 0, "UMAP: finding each row's neighbours (one step, no progress inside)")
    if stop():
        raise Interrupted("The UMAP map was stopped.")
    ticks = re.compile(r"(\d+)/(\d+)")

    class _Epochs:
        """umap-learn reports its epochs through tqdm; this file takes the ticks instead of printing."""

        def write(self, text: str) -> None:
            found = ticks.search(text)
            if found:
                report(int(found.group(1)), int(found.group(2)), "UMAP: arranging the points")
            if stop():
                raise Interrupted("The UMAP map was stopped.")

        def flush(self) -> None:
            pass

    reducer = umap.UMAP(
        n_neighbors=neighbours,
        metric="cosine",
        random_state=seed,
        verbose=False,
        tqdm_kwds={"file": _Epochs(), "bar_format": "{n}/{total}", "mininterval": 0.2, "disable": False},
    )
    started = time.perf_counter()
    coords = reducer.fit_transform(data)
    report(1, 1, f"UMAP: done in {time.perf_counter() - started:.0f} s")
    return np.asarray(coords)
