"""A health report as CSV or JSON, each file opening with where it came from (model, table file, rule, date).

CSV: the facts as ``# key: value`` lines, then a header and one row per token, most
suspicious first; text cells are neutralised against formula injection
(``csv_cells.csv_cell``; the provenance lines through ``csv_comment``) and quoted, numbers
are not. JSON: ``{"provenance": ...}`` followed by the command line's ``--json`` shape with every token.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from ..common.csv_cells import csv_cell, csv_comment
from ..common.files import atomic_write_bytes
from ..maps.provenance import DATE_KEY, export_date
from .repeat_check import RepeatCheck
from .report import INDICATOR_NAMES, HealthReport


def health_facts(report: HealthReport, date: str | None = None) -> dict[str, object]:
    """The report's provenance, then the export's date last (so two exports differ only in it)."""
    facts = dict(report.provenance)
    facts.update({"threshold": report.threshold, "rule": report.summary()["rule"]})
    facts[DATE_KEY] = date or export_date()
    return facts


def health_csv(report: HealthReport, date: str | None = None, repeat: RepeatCheck | None = None) -> str:
    """With ``repeat`` (the check with the model), a last column of its probabilities (empty where not asked)."""
    out = io.StringIO()
    out.write("# EmbedExplorer vocabulary health\n")
    for key, value in health_facts(report, date).items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        out.write(csv_comment(f"# {key}: {' '.join(str(text).split())}") + "\n")
    writer = csv.writer(out, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n")
    names = [n for n in INDICATOR_NAMES if n in report.indicators]
    asked = None if repeat is None or repeat.unavailable is not None else repeat.by_id
    writer.writerow(["rank", "id", "token", "score", "reasons", *names, *(["repeat_probability"] if asked else [])])
    for rank, token_id in enumerate(report.order.tolist(), start=1):
        entry = report.token_entry(token_id)
        indicators = entry["indicators"]
        assert isinstance(indicators, dict)
        values = ["" if indicators.get(n) is None else indicators[n] for n in names]
        score = "" if entry["score"] is None else entry["score"]
        reasons = " ".join(entry["reasons"])  # type: ignore[arg-type]
        repeated = [] if asked is None else [asked.get(token_id, "")]
        writer.writerow([rank, token_id, csv_cell(str(entry["token"])), score, csv_cell(reasons), *values, *repeated])
    return out.getvalue()


def health_json(report: HealthReport, date: str | None = None, repeat: RepeatCheck | None = None) -> dict[str, object]:
    return {"provenance": health_facts(report, date), **report.as_json(report.size, repeat)}


def write_health(
    path: str | Path, report: HealthReport, date: str | None = None, repeat: RepeatCheck | None = None
) -> None:
    """CSV for a ``.csv`` name, JSON otherwise; written atomically. ``repeat``: the check with the model, if asked."""
    if str(path).lower().endswith(".csv"):
        text = health_csv(report, date, repeat)
    else:
        text = json.dumps(health_json(report, date, repeat), ensure_ascii=False, indent=1) + "\n"
    atomic_write_bytes(path, text.encode("utf-8", "replace"), through_link=True)
