"""One token through the layers on the GPT-2-shaped fixture: answer, first load, and the window meanwhile.

The window runs the model in a child process (``core/layers/layer_process.py``) that sends each
layer's vector as soon as it is computed; the worker searches the table meanwhile.

1. One layers answer for a 12-token text, as the window gets it: the long lane's job
   (``run_layers``) through the child (a forward pass, then the input and 12 layers
   compared with the table: lengths, cosines, 8 nearest rows each, and the model's own
   8 guesses from its output head), against the same work done plainly in this process:
   a bare ``model(ids, output_hidden_states=True)`` plus the head (final norm, ``lm_head``,
   softmax, top 8) applied to every layer's vector, timed in turns, with the same torch
   threads (every core but one, as the child runs it). The child's memory of texts is
   emptied before each answer, so every answer runs the model forward.
2. First use: the model's load through the child against a bare ``AutoModel.from_pretrained(...,
   use_safetensors=True)`` with torch and transformers imported before the clock starts,
   each in a fresh process, taking turns. Two figures: the child started ahead (the window
   starts it when the Layers pane is first shown, so torch is imported before the first
   question, and reads the model's design: its weight count on a model built without
   memory, and the special tokens), and the child started cold (its start, ``import torch``
   and that reading on the clock).
   The child's resident memory is stated: once it has imported torch, and with the model
   loaded after a first answer.
3. A neighbour query in the quick lane while the long lane runs layers answers, against
   the same query with the long lane idle, through the real worker (``WorkerClient``).
4. The GUI thread's longest stall (10 ms heartbeat) while the window starts the child,
   loads the model and answers three layers questions (the heartbeat starts once the
   window has drawn the map of the model it opened).
"""

from __future__ import annotations

import sys
from dataclasses import replace

from bench.common import Row, alternating, emit, gpt2_folder, interleaved, median, paired_ratio, run_python

TEXT = " The river bank was steep and the water ran fast below it"  # 12 tokens in GPT-2's vocabulary
PLACE = 3  # " bank"
ROUNDS = 15
LOAD_ROUNDS = 3
LANE_ROUNDS = 12


def _rss(pid: int) -> int:
    """Resident memory of a process, in bytes (Linux)."""
    import os

    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def answer_rows(rounds: int = ROUNDS) -> list[Row]:
    import torch

    from embedexplorer import open_table
    from embedexplorer.core.layers.layer_model import default_threads
    from embedexplorer.core.layers.loading import load_layer_model
    from embedexplorer.core.layers.trace import trace
    from embedexplorer.jobs.base import JobContext, Session
    from embedexplorer.jobs.layer_jobs import LayersRequest, model_process, run_layers

    folder = gpt2_folder()
    table = open_table(str(folder))
    _ = table.unit, table.screen, table.tokens  # paid once when the window opens a table
    session = Session()
    session.replace_table(table)
    ctx = JobContext(session)
    request = LayersRequest(TEXT, PLACE, k=8)
    first = run_layers(ctx, request)  # starts the child and loads the model
    assert first.answer is not None and len(first.answer.steps) == 13
    process = model_process(session)

    # The bare forward pass and the command line's in-process answer, here, as many threads as the child.
    torch.set_num_threads(default_threads())
    model = load_layer_model(folder)
    assert len(table.encode(TEXT)) == 12, len(table.encode(TEXT))
    text_ids = [t.id for t in table.encode(TEXT)]
    ids = torch.tensor([model.model_input(text_ids)[0]])

    def bare() -> object:
        with torch.inference_mode():
            return model.model(ids, output_hidden_states=True)

    # The plain way to the same guesses: transformers' own model with its head, no EmbedExplorer.
    from transformers import AutoModelForCausalLM

    full = AutoModelForCausalLM.from_pretrained(str(folder), use_safetensors=True).eval()
    position = model.model_input(text_ids)[1][PLACE - 1]

    def plain() -> object:
        with torch.inference_mode():
            states = full.transformer(ids, output_hidden_states=True).hidden_states
            vectors = torch.stack([h[0, position] for h in states])
            # transformers' last hidden state is already after the final norm; the others are not.
            normed = torch.cat([full.transformer.ln_f(vectors[:-1]), vectors[-1:]])
            return torch.topk(torch.softmax(full.lm_head(normed), dim=-1), 8)

    def answer() -> object:
        process.forget()  # run forward every time
        return run_layers(ctx, request)

    def in_process() -> object:
        model.forget()
        return trace(table, model, TEXT, PLACE, k=8)

    def neighbours_only() -> object:
        vectors = model.for_table(model.hidden_states(model.model_input(text_ids)[0])[:, 2, :])
        return table.neighbours_of_vectors(vectors, 8)

    times = interleaved(
        {"bare": bare, "plain": plain, "answer": answer, "in process": in_process, "neighbours": neighbours_only},
        rounds,
    )
    ratio = paired_ratio(times, "answer", "plain")
    in_process_ratio = paired_ratio(times, "in process", "plain")
    threads = torch.get_num_threads()
    session.replace_table(None)  # ends the child
    return [
        Row(
            what="layers answer, 12-token text, GPT-2 shape (13 x 8 nearest rows and 8 guesses), window's job "
            "via the child",
            figure=median(times["answer"]) * 1000,
            unit="ms",
            baseline=median(times["plain"]) * 1000,
            baseline_what="plain: bare model(ids, output_hidden_states=True) + the head on each layer's normed vector",
            ratio=ratio,
            goal="<= 1.2x",
            met=ratio <= 1.2,
            note=f"torch threads {threads}; the forward pass alone {median(times['bare']) * 1000:.0f} ms; "
            f"the 13 nearest-row searches alone take "
            f"{median(times['neighbours']) * 1000:.0f} ms; the same answer in one process (the command line's): "
            f"{median(times['in process']) * 1000:.0f} ms ({in_process_ratio:.2f}x)",
        )
    ]


LOAD_CHILD = """
import json, os, sys, time

def rss(pid="self"):
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

folder, which = sys.argv[1], sys.argv[2]
ids = [464, 3139, 286, 4881, 318, 257, 1295, 286, 262, 995, 13, 383]
if which == "bare":
    import torch, transformers  # imported before the clock, as far as the child started ahead imports them
    import transformers.modeling_utils
    from transformers import AutoConfig, AutoModel
    torch.set_num_threads(max(1, (os.cpu_count() or 1) - 1))
    before = rss()
    start = time.perf_counter()
    model = AutoModel.from_pretrained(folder, use_safetensors=True)
    seconds = time.perf_counter() - start
    # Weights may stay in the mapped file until used: memory is stated after a first forward pass.
    with torch.inference_mode():
        model(torch.tensor([ids]), output_hidden_states=True)
    print(json.dumps({"seconds": seconds, "added": rss() - before}))
    raise SystemExit
from embedexplorer.core.layers.layer_process import LayerProcess
from embedexplorer.core.layers.answers import LayerRun
start = time.perf_counter()
process = LayerProcess(prepare=folder)
warm = None
if which == "warm":  # started ahead of need: the clock starts once the child is ready for a load
    process.prepared.wait(600)
    warm = rss(process.pid)
    start = time.perf_counter()
model = process.load(folder)
seconds = time.perf_counter() - start
list(model.layer_runs([LayerRun(tuple(ids), 2, ids[2])], None))
print(json.dumps({"seconds": seconds, "warm": warm, "added": rss(process.pid), "parent": rss()}))
process.close()
"""


def load_rows(rounds: int = LOAD_ROUNDS) -> list[Row]:
    folder = str(gpt2_folder())
    memory: dict[str, list[int]] = {"warm": [], "cold": [], "bare": []}
    warm_memory: list[int] = []

    def launch(which: str) -> float:
        import json
        import subprocess

        done = subprocess.run(
            [sys.executable, "-c", LOAD_CHILD, folder, which], capture_output=True, text=True, timeout=600
        )
        if done.returncode != 0:
            raise RuntimeError(done.stderr[-2000:])
        out = json.loads(done.stdout.strip().splitlines()[-1])
        memory[which].append(int(out["added"]))
        if out.get("warm"):
            warm_memory.append(int(out["warm"]))
        return float(out["seconds"])

    times = alternating(
        {"warm": lambda: launch("warm"), "cold": lambda: launch("cold"), "bare": lambda: launch("bare")}, rounds
    )
    ratio = paired_ratio(times, "warm", "bare")
    cold_ratio = paired_ratio(times, "cold", "bare")

    def mib(values: list[int]) -> float:
        return median([float(v) for v in values]) / 2**20

    warm = Row(
        what="first load of the whole model, GPT-2 shape, child started ahead (when the Layers pane is shown)",
        figure=median(times["warm"]),
        unit="s",
        baseline=median(times["bare"]),
        baseline_what="bare AutoModel.from_pretrained(use_safetensors=True), torch imported before",
        ratio=ratio,
        goal="<= 1.5x",
        met=ratio <= 1.5,
        note=f"the child started ahead holds {mib(warm_memory):.0f} MiB before any model loads; "
        f"with the model and a first answer {mib(memory['warm']):.0f} MiB (bare process: model and a "
        f"first pass add {mib(memory['bare']):.0f} MiB); the window's own process gains nothing",
    )
    # The same bare load is the baseline of both.
    cold = replace(
        warm,
        what="first load of the whole model, GPT-2 shape, child started cold (start and import torch timed)",
        figure=median(times["cold"]),
        ratio=cold_ratio,
        goal="",
        met=None,
        note="what a first question costs when it comes before the child has imported torch",
    )
    return [warm, cold]


LANE_CHILD = """
import json, os, sys, time
from PySide6.QtCore import QCoreApplication, QEventLoop, QTimer
from embedexplorer.jobs.layer_jobs import LAYERS, LayersRequest
from embedexplorer.jobs.table_jobs import LOAD, NEIGHBOURS, LoadRequest, NeighboursRequest
from embedexplorer.worker import WorkerClient

folder, rounds = os.environ["EE_BENCH_FOLDER"], int(os.environ["EE_BENCH_ROUNDS"])
app = QCoreApplication([])
client = WorkerClient()

def wait(kind, request, timeout=600):
    loop = QEventLoop()
    got = {}
    def ready(answer):
        got["answer"] = answer
        loop.quit()
    def failed(failure):
        got["failure"] = failure.message
        loop.quit()
    channel = client.channel(kind, "bench")
    channel.ready.connect(ready)
    channel.failed.connect(failed)
    QTimer.singleShot(timeout * 1000, loop.quit)
    start = time.perf_counter()
    client.ask(kind, request, "bench")
    loop.exec()
    seconds = time.perf_counter() - start
    channel.ready.disconnect(ready)
    channel.failed.disconnect(failed)
    if "answer" not in got:
        raise SystemExit(f"{kind.name}: {got.get('failure', 'timed out')}")
    return seconds, got["answer"]

wait(LOAD, LoadRequest(folder))
words = [" Paris", " Monday", " cat", " doctor", " happy", " France"]
wait(LAYERS, LayersRequest(" warm up the model", 2))  # the first answer loads the model
idle, busy, overlapped = [], [], 0
for i in range(rounds):
    word = words[i % len(words)]
    idle.append(wait(NEIGHBOURS, NeighboursRequest(word, 8))[0])
    # A new text each time, so the long lane really runs the model forward.
    text = f" The river bank number {i} was steep and the water ran fast"
    layers_done = {}
    channel = client.channel(LAYERS, "bench")
    def mark(answer):
        layers_done["at"] = time.perf_counter()
    channel.ready.connect(mark)
    client.ask(LAYERS, LayersRequest(text, 3), "bench")
    start = time.perf_counter()
    busy.append(wait(NEIGHBOURS, NeighboursRequest(word, 8))[0])
    finished = time.perf_counter()
    loop = QEventLoop()
    channel.ready.connect(loop.quit)
    if "at" not in layers_done:
        overlapped += 1
        loop.exec()
    channel.ready.disconnect(loop.quit)
    channel.ready.disconnect(mark)
client.shutdown()
print(json.dumps({"idle": idle, "busy": busy, "overlapped": overlapped}))
"""


def lane_rows(rounds: int = LANE_ROUNDS) -> list[Row]:
    env = {"QT_QPA_PLATFORM": "offscreen", "EE_BENCH_FOLDER": str(gpt2_folder()), "EE_BENCH_ROUNDS": str(rounds)}
    out = run_python(LANE_CHILD, env=env)
    idle = [float(x) for x in out["idle"]]  # type: ignore[union-attr]
    busy = [float(x) for x in out["busy"]]  # type: ignore[union-attr]
    ratio = median([b / a for a, b in zip(idle, busy, strict=True)])
    return [
        Row(
            what="neighbour query (quick lane) while a layers answer runs (long lane)",
            figure=median(busy) * 1000,
            unit="ms",
            baseline=median(idle) * 1000,
            baseline_what="the same query, long lane idle",
            ratio=ratio,
            goal="<= 2x",
            met=ratio <= 2.0,
            note=f"{out['overlapped']} of {rounds} queries answered while the forward pass was still running",
        )
    ]


STALL_CHILD = """
import json, os, sys, time
from PySide6.QtCore import QEventLoop, Qt, QTimer
from embedexplorer.app import create_app, create_window
from embedexplorer.jobs.layer_jobs import LAYERS, LayersRequest
from embedexplorer.jobs.table_jobs import LOAD, MAP

app = create_app()
window = create_window(os.environ["EE_BENCH_SETTINGS"])
window.show()
channel = window.client.channel
loop = QEventLoop()
channel(MAP, window.panes.map).ready.connect(loop.quit)
window.open_model(os.environ["EE_BENCH_FOLDER"])
loop.exec()
# The window draws the map it just got; the clock starts once it is idle again.
QTimer.singleShot(1000, loop.quit)
loop.exec()
ticks = []
heartbeat = QTimer()
heartbeat.setTimerType(Qt.TimerType.PreciseTimer)
heartbeat.setInterval(10)
heartbeat.timeout.connect(lambda: ticks.append(time.perf_counter()))
heartbeat.start()
answers = []
def ready(reply):
    answers.append(reply)
    if len(answers) < 3:
        text = f" The river bank number {len(answers)} was steep"
        window.client.ask(LAYERS, LayersRequest(text, 3, " my bank", 2), window.panes.layers_pane)
    else:
        loop.quit()
channel(LAYERS, window.panes.layers_pane).ready.connect(ready)
def failed(failure):
    print(failure.message, file=sys.stderr)
    loop.quit()
channel(LAYERS, window.panes.layers_pane).failed.connect(failed)
# loads the model first
window.client.ask(LAYERS, LayersRequest(" The river bank was steep", 3, " my bank", 2), window.panes.layers_pane)
loop.exec()
heartbeat.stop()
gaps = sorted(b - a for a, b in zip(ticks, ticks[1:]))
print(json.dumps({"longest_ms": gaps[-1] * 1000, "p99_ms": gaps[int(0.99 * (len(gaps) - 1))] * 1000,
                  "answers": len(answers), "seconds": ticks[-1] - ticks[0]}))
window.close()
"""


def stall_rows(runs: int = 3) -> list[Row]:
    import tempfile

    from bench.bench_stall import _child_run
    from bench.common import qt_env

    longest, p99 = [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as settings:
            env = {**qt_env(), "EE_BENCH_FOLDER": str(gpt2_folder()), "EE_BENCH_SETTINGS": settings + "/s.ini"}
            out = run_python(STALL_CHILD, env=env)
        longest.append(float(out["longest_ms"]))  # type: ignore[arg-type]
        p99.append(float(out["p99_ms"]))  # type: ignore[arg-type]
    noise = _child_run("", "", noise=True)  # the same heartbeat in a bare app, in its own process
    figure = median(longest)
    return [
        Row(
            what="longest GUI-thread stall while the whole model loads and answers 3 layers questions",
            figure=figure,
            unit="ms",
            baseline=10.0,
            baseline_what=f"10 ms heartbeat (bare app on this machine: {float(noise.get('longest_ms', 0)):.0f} ms)",
            ratio=figure / 10.0,
            goal="<= 50 ms",
            met=figure <= 50,
            note=f"median of {runs} runs, worst {max(longest):.0f} ms, 99th percentile gap {median(p99):.0f} ms",
        )
    ]


def run() -> list[Row]:
    return answer_rows() + load_rows() + lane_rows() + stall_rows()


if __name__ == "__main__":
    emit(run(), sys.argv[1:])
