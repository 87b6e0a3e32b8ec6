"""One token through the layers on the GPT-2-shaped fixture: answer, first load, and the quick lane meanwhile.

1. One layers answer for a 12-token text (a forward pass, then the input and 12 layers
   compared with the table: lengths, cosines, 8 nearest rows each) against a bare
   ``model(ids, output_hidden_states=True)`` on the same model, timed in turns in one
   process, with the same torch threads (every core but one, as the window runs it).
   The answer's own memory of texts is emptied before each call, so every answer runs
   the model forward.
2. First use: ``load_layer_model`` against a bare ``AutoModel.from_pretrained(...,
   use_safetensors=True)``, each in a fresh process (torch and transformers imported
   before the clock starts), taking turns; the resident memory each adds is stated.
3. A neighbour query in the quick lane while the long lane runs layers answers, against
   the same query with the long lane idle, through the real worker (``WorkerClient``).
"""

from __future__ import annotations

import sys

from bench.common import Row, alternating, emit, gpt2_folder, interleaved, median, paired_ratio, run_python

TEXT = " The river bank was steep and the water ran fast below it"  # 12 tokens in GPT-2's vocabulary
PLACE = 3  # " bank"
ROUNDS = 15
LOAD_ROUNDS = 3
LANE_ROUNDS = 12


def answer_rows(rounds: int = ROUNDS) -> list[Row]:
    import torch

    from embedexplorer import open_table
    from embedexplorer.core.layers import load_layer_model, trace

    folder = gpt2_folder()
    table = open_table(str(folder))
    _ = table.unit, table.screen, table.tokens  # paid once when the window opens a table
    model = load_layer_model(folder)
    assert len(table.encode(TEXT)) == 12, len(table.encode(TEXT))
    text_ids = [t.id for t in table.encode(TEXT)]
    ids = torch.tensor([model.model_input(text_ids)[0]])

    def bare() -> object:
        with torch.inference_mode():
            return model.model(ids, output_hidden_states=True)

    def answer() -> object:
        model._hidden.clear()  # run forward every time
        return trace(table, model, TEXT, PLACE, k=8)

    def neighbours_only() -> object:
        vectors = model.for_table(model.hidden_states(model.model_input(text_ids)[0])[:, 2, :])
        return table.neighbours_of_vectors(vectors, 8)

    times = interleaved({"bare": bare, "answer": answer, "neighbours": neighbours_only}, rounds)
    ratio = paired_ratio(times, "answer", "bare")
    threads = torch.get_num_threads()
    return [
        Row(
            what="layers answer, 12-token text, GPT-2 shape (13 x 8 nearest rows)",
            figure=median(times["answer"]) * 1000,
            unit="ms",
            baseline=median(times["bare"]) * 1000,
            baseline_what="bare model(ids, output_hidden_states=True)",
            ratio=ratio,
            goal="<= 1.2x",
            met=ratio <= 1.2,
            note=f"torch threads {threads}; the 13 nearest-row searches alone take "
            f"{median(times['neighbours']) * 1000:.0f} ms",
        )
    ]


LOAD_CHILD = """
import json, os, sys, time
import torch, transformers  # imported before the clock, for both
from transformers import AutoModel

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

folder, which = sys.argv[1], sys.argv[2]
before = rss()
start = time.perf_counter()
if which == "engine":
    from embedexplorer.core.layers import load_layer_model
    model = load_layer_model(folder)
else:
    model = AutoModel.from_pretrained(folder, use_safetensors=True)
seconds = time.perf_counter() - start
loaded = rss() - before
# Weights may stay in the mapped file until used: memory is stated after a first forward pass.
ids = [464, 3139, 286, 4881, 318, 257, 1295, 286, 262, 995, 13, 383]
if which == "engine":
    model.hidden_states(ids)
else:
    with torch.inference_mode():
        model(torch.tensor([ids]), output_hidden_states=True)
print(json.dumps({"seconds": seconds, "loaded": loaded, "added": rss() - before}))
"""


def load_rows(rounds: int = LOAD_ROUNDS) -> list[Row]:
    folder = str(gpt2_folder())
    memory: dict[str, list[int]] = {"engine": [], "bare": []}
    at_load: dict[str, list[int]] = {"engine": [], "bare": []}

    def launch(which: str) -> float:
        import subprocess

        done = subprocess.run(
            [sys.executable, "-c", LOAD_CHILD, folder, which], capture_output=True, text=True, timeout=600
        )
        if done.returncode != 0:
            raise RuntimeError(done.stderr[-2000:])
        import json

        out = json.loads(done.stdout.strip().splitlines()[-1])
        memory[which].append(int(out["added"]))
        at_load[which].append(int(out["loaded"]))
        return float(out["seconds"])

    times = alternating({"engine": lambda: launch("engine"), "bare": lambda: launch("bare")}, rounds)
    ratio = paired_ratio(times, "engine", "bare")
    mib = median([float(m) for m in memory["engine"]]) / 2**20
    bare_mib = median([float(m) for m in memory["bare"]]) / 2**20
    loaded_mib = median([float(m) for m in at_load["engine"]]) / 2**20
    bare_loaded_mib = median([float(m) for m in at_load["bare"]]) / 2**20
    return [
        Row(
            what="first load of the whole model, GPT-2 shape",
            figure=median(times["engine"]),
            unit="s",
            baseline=median(times["bare"]),
            baseline_what="bare AutoModel.from_pretrained(use_safetensors=True)",
            ratio=ratio,
            goal="<= 1.5x",
            met=ratio <= 1.5,
            note=f"resident memory added by the load and a first forward pass: {mib:.0f} MiB "
            f"(bare: {bare_mib:.0f} MiB; right after the load {loaded_mib:.0f} and {bare_loaded_mib:.0f} MiB)",
        )
    ]


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
    channel = client.channel(kind)
    channel.ready.connect(ready)
    channel.failed.connect(failed)
    QTimer.singleShot(timeout * 1000, loop.quit)
    start = time.perf_counter()
    client.submit(kind, request)
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
    channel = client.channel(LAYERS)
    def mark(answer):
        layers_done["at"] = time.perf_counter()
    channel.ready.connect(mark)
    client.submit(LAYERS, LayersRequest(text, 3))
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
channel(MAP).ready.connect(loop.quit)
window.open_model(os.environ["EE_BENCH_FOLDER"])
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
        window.client.submit(LAYERS, LayersRequest(text, 3, " my bank", 2))
    else:
        loop.quit()
channel(LAYERS).ready.connect(ready)
channel(LAYERS).failed.connect(lambda failure: (print(failure.message, file=sys.stderr), loop.quit()))
window.client.submit(LAYERS, LayersRequest(" The river bank was steep", 3, " my bank", 2))  # loads the model first
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
