"""Are two spamflow runs' outputs the same?  Stage by stage, table by table, floats within a
tolerance: the check that a stage gives the same results on every MapReduce runner (local
against Spark) and with either engine.

Run from the repository root::

    .venv/bin/python benchmarks/compare_runs.py RUN_A RUN_B            # two workdirs
    .venv/bin/python benchmarks/compare_runs.py RUN_A RUN_B --rel 1e-9 --abs 1e-12 --stage links

A run is a workdir: its stages are those of ``run.json`` (or, without one, every complete
``stages/<name>-<signature>/`` folder).  Every stage present in both runs is compared; one
line per stage says ``equal`` or ``DIFFERS``, followed by one indented line per difference
(file, column, how many rows, the first differing key, the two values).  Exit status 1 if
anything differs, 0 if all is equal, 2 if no stage was compared (an empty run, ``--stage``
naming none of the runs' stages), if run.json names a complete stage whose folder is not
there (the reason is printed), or on a usage error.  A workdir downloaded from S3 keeps its run.json, whose
folders are ``s3://`` URLs: a stage is then found under the workdir's own ``stages/`` by
its folder name.

What is compared, per stage:

* ``stage.json``: every field but the ignored ones below (params, outputs, host-table
  features, counts, bad records), numbers within the tolerance.  The fields that make the
  stage's identity (``signature``, ``version``, ``requires``: its upstream stages' signatures,
  ``spamflow_version``) are compared too, but a difference there is a note: a new version of a
  stage whose outputs are all equal is equal.
* Every file of a declared output (``stage.json`` ``outputs``; a directory output: every file
  under it):
  - Parquet (``part-*.parquet`` of one folder read as one table): the same columns with the
    same types, the same rows in any order.  Rows are matched on their key: all columns that
    are scalar and not floating point (occurrence number breaking ties); the other columns
    (floats, lists, structs) are compared row by row, floats within the tolerance.
  - ``.jsonl``, ``.tsv`` and other text: the same lines in any order (decimal numbers inside
    text compared within the tolerance); a line is its
    JSON value (``.jsonl``) or its tab-separated fields, each read as JSON when it is, so that
    numbers in text are compared within the tolerance.
  - ``.json``: the same value (order of lists matters), numbers within the tolerance; a
    stage's execution keys recorded under its top-level ``params`` (HSS's ``summary.json``)
    differing are a note, as in ``stage.json``.
  - ``.txt``: the same lines in the same order (spamflow's ``.txt`` outputs are the row and
    column indexes of the matrices beside them), fields compared as in ``.tsv``.
  - ``.npz``: the same arrays (names, shapes, dtypes), floats within the tolerance; a
    ``scipy.sparse`` matrix (``save_npz``) as a matrix: the same shape and cells, whatever the
    order of its stored entries.
  - ``.html`` (the report): the same lines in the same order once the workdir's path, times
    and the seconds column of the table of stages are masked (see ignored below).
  - ``.skops`` (the classifier's model): not compared, see below.
  - anything else (images): the same bytes.
* A file of a declared output present in one run only is a difference.
* Except under an output folder named ``work`` (quilt's and spin's): that is job scratch, the
  jobs' inputs and outputs, which legitimately differ between runners: which files exist
  depends on the engine (``engine: auto`` runs a stage's jobs on Spark and in-process on the
  local runner), and jobs pack records per map task (quilt's ``S``/``L`` records), so their
  lines depend on how the runner split the input.  Its files are compared all the same and
  what differs is printed as a ``note``, not counted; the stage's results are its other
  outputs.

Ignored, because they legitimately differ between two runs of the same stage:

* in ``stage.json``: the parameters the stage's class declares as execution keys
  (``Params.execution_keys``, e.g. ``engine``: a note when they differ, so that a run of a
  version before such a key compares with one after), ``run_id``, ``upstream_runs`` (fresh ids per run), ``seconds``,
  ``cpu_seconds`` and ``finished_at`` (timings), ``mapreduce_applications`` (jobs started),
  and the counts of what the engine did: ``mapreduce_jobs`` (links), ``engine_mapreduce_snapshots``
  and ``engine_direct_snapshots`` (spin);
* in ``run.json``: everything but the list of stages and their directories (``status``,
  ``config`` path, ``started_at``/``finished_at``, ``ran_now``, absolute ``directory`` and
  ``outputs`` paths); runner names and args are not in any stage's record (they are not
  part of a stage's identity);
* in JSON files, the workdir's path (a model's ``statistics.json`` records the workdir it was
  trained in, so that scoring that run itself uses its own statistics);
* in the report's HTML: the workdir's path, ISO times (``generated ...``), the stages'
  seconds, and in the stages' counts their order, the engine's own and those that are 0;
* a count that is 0 in one run and absent in the other (counts are counters; the MapReduce
  engine of spin leaves out ``same_immutable_pairs`` when it is 0): printed as a note;
* ``model.skops``: skops names the model's arrays by Python object id and stamps the zip
  with the time, so two equal models differ in bytes; what the model does is compared in
  ``scores.parquet`` and ``evaluation.json`` (training is in-process on every runner);
* files under a stage's folder that no output declares (e.g. ``content``'s ``work/`` on the
  MapReduce engine), which are listed as not compared;
* how a Parquet table is split into ``part-*.parquet`` files, the order of its rows and of
  the lines of a text file (but ``.txt``), the order of a sparse matrix's stored entries.

Floats ``a`` and ``b`` are equal when ``|a - b| <= max(rel * max(|a|, |b|), abs)``
(defaults rel 1e-9, abs 1e-12), or both are NaN, or both the same infinity.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

IGNORED_STAGE_FIELDS = frozenset({"run_id", "upstream_runs", "seconds", "cpu_seconds", "finished_at",
                                  "mapreduce_applications"})
IDENTITY_FIELDS = frozenset({"signature", "version", "requires", "spamflow_version"})
"""``stage.json`` fields that name the code and the inputs a stage ran with, not what it found: a
difference is a note (a version bump with equal outputs is not a difference in results)."""
IGNORED_COUNTS = frozenset({"mapreduce_jobs", "engine_mapreduce_snapshots", "engine_direct_snapshots"})  # what the engine did, not found
SCRATCH_OUTPUT = "work"
SHOWN = 80  # characters of a value shown in a difference


@dataclass(frozen=True)
class Tolerance:
    rel: float = 1e-9
    abs: float = 1e-12

    def close(self, a: float, b: float) -> bool:
        if a == b:
            return True
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        if math.isinf(a) or math.isinf(b):
            return False
        return abs(a - b) <= max(self.rel * max(abs(a), abs(b)), self.abs)

    def close_arrays(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Element-wise ``close`` of two float arrays of the same shape."""
        with np.errstate(invalid="ignore", over="ignore"):
            bound = np.maximum(self.rel * np.maximum(np.abs(a), np.abs(b)), self.abs)
            near = np.isfinite(a) & np.isfinite(b) & (np.abs(a - b) <= bound)
            return (a == b) | near | (np.isnan(a) & np.isnan(b))


def same_value(a: Any, b: Any, tol: Tolerance) -> bool:
    """JSON-like values (dicts, lists, tuples, numbers, strings, None) equal, floats within ``tol``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, float | int) and isinstance(b, float | int) and (isinstance(a, float) or isinstance(b, float)):
        return tol.close(float(a), float(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k], tol) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same_value(x, y, tol) for x, y in zip(a, b))
    if isinstance(a, str) and isinstance(b, str) and a != b:
        return same_text(a, b, tol)
    return a == b


DECIMAL = re.compile(r"(?<![\w.])-?\d+(?:\.\d+(?:[eE][-+]?\d+)?|[eE][-+]?\d+)(?![\w.])")  # not inside hex or words


def same_text(a: str, b: str, tol: Tolerance) -> bool:
    """Two texts equal once the decimal numbers in them are compared within ``tol`` (a
    report's ``"kappa": 0.0006041761366877285`` against ``...881726``)."""
    parts_a, parts_b = DECIMAL.split(a), DECIMAL.split(b)
    return parts_a == parts_b and all(tol.close(float(x), float(y))
                                      for x, y in zip(DECIMAL.findall(a), DECIMAL.findall(b)))


def shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= SHOWN else text[:SHOWN - 3] + "..."


@dataclass
class StageResult:
    name: str
    differences: list[str] = field(default_factory=list)
    compared: int = 0  # files (a table of parts counts once)
    rows: int = 0  # table rows and text lines compared
    not_compared: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # differences in job scratch (``work``)

    def line(self) -> str:
        status = "equal" if not self.differences else f"DIFFERS ({len(self.differences)})"
        extra = f"; not compared: {len(self.not_compared)} files ({', '.join(self.not_compared[:3])}" + \
            (", ..." if len(self.not_compared) > 3 else "") + ")" if self.not_compared else ""
        notes = f"; {len(self.notes)} notes" if self.notes else ""
        return f"{self.name:<10} {status:<12} {self.compared} files, {self.rows:,} rows/lines{notes}{extra}"


# ---------------------------------------------------------------- runs and stages


def run_stages(workdir: Path) -> dict[str, Path]:
    """Stage name -> its folder: from run.json, else the complete folders under ``stages/``.
    A stage run.json names at a path that is not there (a workdir copied or downloaded from
    S3: run.json records where the run wrote, ``s3://...`` or another machine's path) is
    looked for under this workdir's ``stages/`` by its folder name."""
    return _run_stages(workdir)[0]


def _run_stages(workdir: Path) -> tuple[dict[str, Path], dict[str, str]]:
    """``run_stages``, and the stages run.json names whose folder is not found (name -> where
    it was looked for), so that a comparison of nothing can say why."""
    manifest = workdir / "run.json"
    if manifest.is_file():
        stages = json.loads(manifest.read_text(encoding="utf-8")).get("stages", {})
        found, missing = {}, {}
        for name, rec in stages.items():
            directory = rec.get("directory")
            if not directory:
                continue
            here = workdir / "stages" / directory.rstrip("/").rsplit("/", 1)[-1]
            for folder in (Path(directory), here):
                if (folder / "stage.json").is_file():
                    found[name] = folder
                    break
            else:
                if rec.get("complete", True):
                    missing[name] = f"{directory} (nor {here})"
        return found, missing
    found_: dict[str, Path] = {}
    for record in sorted((workdir / "stages").glob("*/stage.json")):
        name = json.loads(record.read_text(encoding="utf-8"))["stage"]
        if name in found_:
            raise SystemExit(f"{workdir}: two complete folders of stage {name!r} ({found_[name].name}, "
                             f"{record.parent.name}) and no run.json to say which is the run's")
        found_[name] = record.parent
    return found_, {}


def stage_files(folder: Path, outputs: dict[str, str]) -> tuple[dict[str, list[Path]], set[str], list[str]]:
    """The comparable units of a stage's declared outputs: relative name -> files (several for
    the ``part-*.parquet`` of one table); the names under a ``work`` output; the files no output
    declares."""
    units: dict[str, list[Path]] = {}
    scratch: set[str] = set()
    declared: set[Path] = set()
    for rel in outputs.values():
        path = folder / rel
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path] if path.exists() else []
        for f in files:
            declared.add(f)
            name = str(f.relative_to(folder))
            if f.name.startswith("part-") and f.suffix == ".parquet":
                name = str(f.parent.relative_to(folder) / "part-*.parquet")
            units.setdefault(name, []).append(f)
            if path.is_dir() and path.name == SCRATCH_OUTPUT:
                scratch.add(name)
    undeclared = sorted(str(p.relative_to(folder)) for p in folder.rglob("*")
                        if p.is_file() and p not in declared and p.name != "stage.json")
    return units, scratch, undeclared


def execution_keys(record: dict) -> frozenset[str]:
    """The parameters a stage declares as execution knobs (its ``Params.execution_keys``, e.g.
    ``engine``: left out of its signature, they choose how it runs, never what it produces), so
    that a run of a version without such a key compares with one that has it; none if the
    stage's class cannot be imported here."""
    try:
        from spamflow.stage_runner import load_stage_class
        params = getattr(load_stage_class(record.get("stage_class", "")), "Params", None)
    except Exception:  # noqa: BLE001 (a plugin not installed here: compare every parameter)
        return frozenset()
    return frozenset(getattr(params, "execution_keys", ()))


def compare_stage(name: str, a: Path, b: Path, tol: Tolerance) -> StageResult:
    result = StageResult(name)
    rec_a = json.loads((a / "stage.json").read_text(encoding="utf-8"))
    rec_b = json.loads((b / "stage.json").read_text(encoding="utf-8"))
    for rec in (rec_a, rec_b):
        rec["counts"] = {k: v for k, v in (rec.get("counts") or {}).items() if k not in IGNORED_COUNTS}
    for k in sorted(rec_a["counts"].keys() ^ rec_b["counts"].keys()):  # counts are counters: absent is 0
        side, value = ("A", rec_a["counts"].get(k)) if k in rec_a["counts"] else ("B", rec_b["counts"].get(k))
        if value == 0:
            result.notes.append(f"stage.json counts.{k}: 0 in run {side}, absent in the other")
            rec_a["counts"].setdefault(k, 0)
            rec_b["counts"].setdefault(k, 0)
    knobs = execution_keys(rec_a) | execution_keys(rec_b)
    for key in sorted(knobs):
        values = [(rec.get("params") or {}).pop(key, "absent") for rec in (rec_a, rec_b)]
        if values[0] != values[1]:
            result.notes.append(f"stage.json params.{key}: {values[0]!r} in run A, {values[1]!r} in run B "
                                "(an execution key: how the stage ran, not what it found)")
    for key in sorted((rec_a.keys() | rec_b.keys()) & IDENTITY_FIELDS):
        result.notes.extend(f"stage.json {d} (the stage's identity; its outputs are compared)"
                            for d in value_differences(rec_a.get(key), rec_b.get(key), tol, key))
    for key in sorted((rec_a.keys() | rec_b.keys()) - IGNORED_STAGE_FIELDS - IDENTITY_FIELDS):
        result.differences.extend(f"stage.json {d}" for d in value_differences(rec_a.get(key), rec_b.get(key),
                                                                                tol, key))
    units_a, scratch_a, undeclared_a = stage_files(a, rec_a.get("outputs", {}))
    units_b, scratch_b, undeclared_b = stage_files(b, rec_b.get("outputs", {}))
    result.not_compared = sorted(set(undeclared_a) | set(undeclared_b))
    outputs = rec_a.get("outputs", {})
    keys = {outputs[n]: t["key"] for n, t in (rec_a.get("host_tables") or {}).items() if n in outputs}
    for unit in sorted(units_a.keys() | units_b.keys()):
        found = result.notes if unit in scratch_a | scratch_b else result.differences
        if unit not in units_b or unit not in units_a:
            found.append(f"{unit}: only in run {'A' if unit in units_a else 'B'}")
            continue
        if found is result.notes and units_a[unit][0].suffix in (".tsv", ".jsonl", ".txt"):
            diffs, rows = scratch_differences(units_a[unit][0], units_b[unit][0])
        else:
            diffs, rows = compare_files(units_a[unit], units_b[unit], tol, keys.get(unit),
                                        (a.parent.parent, b.parent.parent))
        result.compared += 1
        result.rows += rows
        if units_a[unit][0].suffix == ".json":  # a summary that records the stage's parameters
            noted = [d for d in diffs if d.startswith(tuple(f"$.params.{k}:" for k in knobs))]
            result.notes.extend(f"{unit}: {d} (an execution key)" for d in noted)
            diffs = [d for d in diffs if d not in noted]
        found.extend(f"{unit}: {d}" for d in diffs)
    return result


def scratch_differences(a: Path, b: Path) -> tuple[list[str], int]:
    """Job scratch as exact lines in any order: only a note, so not worth parsing (quilt's
    packed lines are megabytes)."""
    if a.read_bytes() == b.read_bytes():
        return [], _lines(a)
    lines_a = Counter(a.read_text(encoding="utf-8", errors="replace").splitlines())
    lines_b = Counter(b.read_text(encoding="utf-8", errors="replace").splitlines())
    out = []
    for side, only in (("A", lines_a - lines_b), ("B", lines_b - lines_a)):
        if only:
            out.append(f"{only.total():,} lines only in run {side}, first: {shown(min(only))}")
    return out, lines_a.total()


def value_differences(a: Any, b: Any, tol: Tolerance, where: str) -> list[str]:
    """Where two JSON values differ: one line per differing leaf (dict keys followed)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(a.keys() | b.keys(), key=str):
            if k not in a or k not in b:
                out.append(f"{where}.{k}: only in run {'A' if k in a else 'B'}")
            else:
                out.extend(value_differences(a[k], b[k], tol, f"{where}.{k}"))
        return out
    return [] if same_value(a, b, tol) else [f"{where}: {shown(a)} vs {shown(b)}"]


# ---------------------------------------------------------------- files


def compare_files(a: list[Path], b: list[Path], tol: Tolerance, key: list[str] | None,
                  workdirs: tuple[Path, Path] | None = None) -> tuple[list[str], int]:
    """Differences between two versions of one output (a file, or a table's parts) and the rows
    compared; ``workdirs``: the two runs' workdirs, masked in HTML."""
    suffix = a[0].suffix
    if suffix == ".html":
        lines_a = html_lines(a[0], workdirs[0] if workdirs else None)
        lines_b = html_lines(b[0], workdirs[1] if workdirs else None)
        return compare_lines_in_order(lines_a, lines_b, tol), len(lines_a)
    if suffix == ".parquet":
        return compare_tables(read_table(a), read_table(b), tol, key)
    if suffix == ".npz":
        return compare_npz(a[0], b[0], tol), 1
    if suffix == ".skops":
        return [], 0
    if a[0].read_bytes() == b[0].read_bytes():
        return [], _lines(a[0])
    if suffix == ".json":
        return value_differences(_load_json(a[0], workdirs[0] if workdirs else None),
                                 _load_json(b[0], workdirs[1] if workdirs else None), tol, "$"), 1
    try:
        lines_a = a[0].read_text(encoding="utf-8").splitlines()
        lines_b = b[0].read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        return [f"bytes differ ({a[0].stat().st_size:,} vs {b[0].stat().st_size:,} bytes)"], 0
    if suffix == ".txt":  # an index (vocabulary, hosts) of the matrices beside it: its order is its meaning
        return compare_lines_in_order(lines_a, lines_b, tol), len(lines_a)
    if sorted(lines_a) == sorted(lines_b):  # the same lines in another order: no need to parse them
        return [], len(lines_a)
    parse = json_line if suffix == ".jsonl" else tsv_line
    return compare_records([parse(x) for x in lines_a], [parse(x) for x in lines_b], tol), len(lines_a)


def _lines(path: Path) -> int:
    if path.suffix in (".parquet", ".npz", ".skops"):
        return 0
    with open(path, "rb") as fh:
        return sum(1 for _ in fh)


def _load_json(path: Path, workdir: Path | None = None) -> Any:
    """A JSON file, the workdir's path masked in it (a model's ``statistics.json`` names the
    workdir it was trained in)."""
    return json.loads(masked_workdir(path.read_text(encoding="utf-8"), workdir))


def masked_workdir(text: str, workdir: Path | None) -> str:
    """``text`` with the workdir's path, as given and resolved, replaced by ``<workdir>``."""
    if workdir is None:
        return text
    return text.replace(str(workdir.resolve()), "<workdir>").replace(str(workdir), "<workdir>")


def read_table(parts: list[Path]) -> pa.Table:
    tables = [pq.read_table(p) for p in parts]
    return pa.concat_tables(tables, promote_options="default") if len(tables) > 1 else tables[0]


def json_line(line: str) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return line


def tsv_line(line: str) -> list[Any]:
    """A text line as its tab-separated fields, each a JSON value when it reads as one (so
    ``0.30000000000000004`` and ``0.3`` compare within the tolerance)."""
    return [json_line(f) for f in line.split("\t")]


ISO_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:[+-]\d\d:\d\d|Z)?")
STAGE_SECONDS = re.compile(r"(<td>done</td>\n<td class=\"num\">)[0-9.]+(</td>)")
COUNTS_CELL = re.compile(r"<td class=\"counts\">(.*?)</td>")
COUNT = re.compile(r"<span>([^=<]+)=([^<]*)</span>")


def _counts_cell(match: re.Match) -> str:
    """A stage's counts in the report, sorted, without the engine's own and the zero ones
    (their order and presence differ between the engines; ``stage.json`` is compared)."""
    kept = sorted((k, v) for k, v in COUNT.findall(match.group(1)) if k not in IGNORED_COUNTS and v != "0")
    return '<td class="counts">' + " ".join(f"<span>{k}={v}</span>" for k, v in kept) + "</td>"


def html_lines(path: Path, workdir: Path | None) -> list[str]:
    """The report's HTML with what differs between two runs of the same results masked: the
    workdir's path, times (``generated ...``), the seconds column of the table of stages."""
    text = masked_workdir(path.read_text(encoding="utf-8", errors="replace"), workdir)
    text = COUNTS_CELL.sub(_counts_cell, ISO_TIME.sub("<time>", text))
    return STAGE_SECONDS.sub(r"\1<seconds>\2", text).splitlines()


def compare_lines_in_order(a: list[str], b: list[str], tol: Tolerance) -> list[str]:
    out = []
    if len(a) != len(b):
        out.append(f"{len(a):,} vs {len(b):,} lines")
    differ = [i for i, (x, y) in enumerate(zip(a, b)) if x != y and not same_text(x, y, tol)
              and not same_value(tsv_line(x), tsv_line(y), tol)]
    if differ:
        i = differ[0]
        out.append(f"{len(differ):,} of {min(len(a), len(b)):,} lines differ (in order), first line {i + 1}: "
                   f"{shown(a[i])} vs {shown(b[i])}")
    return out


def _skeleton(value: Any) -> Any:
    """The value with every float replaced by a marker: records are matched on it, then their
    floats compared."""
    if isinstance(value, float):
        return "<float>"
    if isinstance(value, str):
        return DECIMAL.sub("<float>", value)
    if isinstance(value, dict):
        return {k: _skeleton(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_skeleton(v) for v in value]
    return value


def _floats(value: Any) -> Iterable[float]:
    if isinstance(value, float):
        yield value
    elif isinstance(value, str):
        yield from (float(x) for x in DECIMAL.findall(value))
    elif isinstance(value, dict):
        for k in sorted(value):
            yield from _floats(value[k])
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _floats(v)


def _float_order(value: Any) -> tuple[tuple[bool, float], ...]:
    return tuple((math.isnan(f), 0.0 if math.isnan(f) else f) for f in _floats(value))


def compare_records(a: list[Any], b: list[Any], tol: Tolerance) -> list[str]:
    """Two multisets of records (lines), floats within ``tol``: records with the same
    non-float skeleton are paired in order of their floats."""
    groups_a: dict[str, list[Any]] = defaultdict(list)
    groups_b: dict[str, list[Any]] = defaultdict(list)
    for records, groups in ((a, groups_a), (b, groups_b)):
        for r in records:
            groups[json.dumps(_skeleton(r), sort_keys=True)].append(r)
    only = {"A": [], "B": []}
    differ: list[tuple[Any, Any]] = []
    for skel in sorted(groups_a.keys() | groups_b.keys()):
        ra = sorted(groups_a.get(skel, []), key=_float_order)
        rb = sorted(groups_b.get(skel, []), key=_float_order)
        for x, y in zip(ra, rb):
            if not same_value(x, y, tol):
                differ.append((x, y))
        only["A"].extend(ra[len(rb):])
        only["B"].extend(rb[len(ra):])
    out = []
    if differ:
        out.append(f"{len(differ)} of {len(a):,} lines differ beyond the tolerance, first: "
                   f"{shown(differ[0][0])} vs {shown(differ[0][1])}")
    for side, rows in only.items():
        if rows:
            out.append(f"{len(rows):,} lines only in run {side}, first: {shown(rows[0])}")
    return out


def compare_npz(a: Path, b: Path, tol: Tolerance) -> list[str]:
    with np.load(a, allow_pickle=False) as za:
        sparse = {"format", "indptr", "indices", "data", "shape"} <= set(za.files)
    if sparse:
        return compare_sparse(a, b, tol)
    with np.load(a, allow_pickle=False) as za, np.load(b, allow_pickle=False) as zb:
        out = [f"array {k!r} only in run {'A' if k in za.files else 'B'}"
               for k in sorted(set(za.files) ^ set(zb.files))]
        for k in sorted(set(za.files) & set(zb.files)):
            x, y = za[k], zb[k]
            if x.shape != y.shape or x.dtype != y.dtype:
                out.append(f"array {k!r}: shape/dtype {x.shape} {x.dtype} vs {y.shape} {y.dtype}")
                continue
            ok = tol.close_arrays(x, y) if np.issubdtype(x.dtype, np.floating) else (x == y)
            ok = np.asarray(ok)
            if not ok.all():
                first = np.unravel_index(int(np.argmin(ok.ravel())), x.shape) if x.ndim else ()
                out.append(f"array {k!r}: {int((~ok).sum()):,} of {x.size:,} values differ, first at "
                           f"{tuple(int(i) for i in first)}: {x[first]!r} vs {y[first]!r}")
    return out


def compare_sparse(a: Path, b: Path, tol: Tolerance) -> list[str]:
    """Two ``scipy.sparse.save_npz`` matrices as matrices: the order of the entries within a row
    and explicit zeros are storage, not content."""
    import scipy.sparse as sp

    x, y = sp.load_npz(a).tocsr(), sp.load_npz(b).tocsr()
    if x.shape != y.shape:
        return [f"matrix shape {x.shape} vs {y.shape}"]
    for m in (x, y):
        m.sum_duplicates()
        m.eliminate_zeros()
        m.sort_indices()
    xc, yc = x.tocoo(), y.tocoo()
    cells_a = dict(zip(zip(xc.row.tolist(), xc.col.tolist()), xc.data.tolist()))
    cells_b = dict(zip(zip(yc.row.tolist(), yc.col.tolist()), yc.data.tolist()))
    differ = sorted(c for c in cells_a.keys() | cells_b.keys()
                    if not same_value(cells_a.get(c, 0.0), cells_b.get(c, 0.0), tol))
    if not differ:
        return []
    first = differ[0]
    return [f"matrix: {len(differ):,} of {x.shape[0] * x.shape[1]:,} cells differ, first at {first}: "
            f"{cells_a.get(first, 0.0)!r} vs {cells_b.get(first, 0.0)!r}"]


# ---------------------------------------------------------------- tables


def _is_key_type(t: pa.DataType) -> bool:
    return not (pa.types.is_floating(t) or pa.types.is_nested(t) or pa.types.is_dictionary(t))


def compare_tables(a: pa.Table, b: pa.Table, tol: Tolerance, display_key: list[str] | None = None
                   ) -> tuple[list[str], int]:
    """Two tables as multisets of rows: rows matched on their key columns (scalar, not
    floating; an occurrence number breaks ties), the other columns compared row by row."""
    out = []
    names_a, names_b = a.schema.names, b.schema.names
    for side, cols in (("A", [n for n in names_a if n not in names_b]), ("B", [n for n in names_b if n not in names_a])):
        if cols:
            out.append(f"columns only in run {side}: {cols}")
    common = [n for n in names_a if n in names_b]
    for n in common:
        if a.schema.field(n).type != b.schema.field(n).type:
            out.append(f"column {n}: type {a.schema.field(n).type} vs {b.schema.field(n).type}")
    key = [n for n in common if _is_key_type(a.schema.field(n).type) and _is_key_type(b.schema.field(n).type)]
    shown_key = [k for k in (display_key or []) if k in key] or key[:3]
    floats = [n for n in common if n not in key and pa.types.is_floating(a.schema.field(n).type)]
    ia, keys_a = _ordered(a, key, floats)
    ib, keys_b = _ordered(b, key, floats)
    position_b = {k: j for j, k in zip(ib, keys_b)}
    pairs, only_a = [], []
    for i, k in zip(ia, keys_a):
        j = position_b.pop(k, None)
        if j is None:
            only_a.append(i)
        else:
            pairs.append((i, j))
    for side, table, missing in (("A", a, only_a), ("B", b, list(position_b.values()))):
        if missing:
            out.append(f"{len(missing):,} rows only in run {side}, first {_key_text(table, missing[0], shown_key)}")
    if not pairs:
        return out, max(a.num_rows, b.num_rows)
    ta = a.take(pa.array([i for i, _ in pairs], pa.int64()))
    tb = b.take(pa.array([j for _, j in pairs], pa.int64()))
    for n in common:
        if n in key:
            continue
        ca, cb = ta.column(n).combine_chunks(), tb.column(n).combine_chunks()
        if ca.equals(cb):
            continue
        bad = _differing_rows(ca, cb, tol)
        if bad.size:
            first = int(bad[0])
            out.append(f"column {n}: {bad.size:,} of {len(pairs):,} rows differ, first "
                       f"{_key_text(ta, first, shown_key)}: {shown(ca[first].as_py())} vs {shown(cb[first].as_py())}")
    return out, len(pairs)


def _ordered(t: pa.Table, key: list[str], floats: list[str]) -> tuple[list[int], list[tuple]]:
    """Row indices sorted by key then floats, and each row's (key..., occurrence) tuple."""
    sort_keys = [(c, "ascending", "at_end") for c in key + floats]
    order = pc.sort_indices(t, sort_keys=sort_keys).to_pylist() if sort_keys else list(range(t.num_rows))
    columns = [t.column(c).take(pa.array(order, pa.int64())).to_pylist() for c in key]
    seen: Counter = Counter()
    keys = []
    for values in zip(*columns) if columns else (() for _ in order):
        seen[values] += 1
        keys.append((*values, seen[values]))
    return order, keys


def _key_text(t: pa.Table, row: int, columns: list[str]) -> str:
    if not columns:
        return f"row {row}"
    return "(" + ", ".join(f"{c}={shown(t.column(c)[row].as_py())}" for c in columns) + ")"


def _differing_rows(a: pa.Array, b: pa.Array, tol: Tolerance) -> np.ndarray:
    """Indices where two aligned columns differ: floats within ``tol``, nulls equal to nulls."""
    null_a = np.asarray(a.is_null().to_numpy(zero_copy_only=False), bool)
    null_b = np.asarray(b.is_null().to_numpy(zero_copy_only=False), bool)
    if pa.types.is_floating(a.type) and pa.types.is_floating(b.type):
        x = np.asarray(a.fill_null(np.nan).to_numpy(zero_copy_only=False), float)
        y = np.asarray(b.fill_null(np.nan).to_numpy(zero_copy_only=False), float)
        ok = tol.close_arrays(x, y) & (null_a == null_b)
        return np.flatnonzero(~ok)
    xs, ys = a.to_pylist(), b.to_pylist()
    return np.array([i for i, (x, y) in enumerate(zip(xs, ys)) if not same_value(x, y, tol)], dtype=np.int64)


# ---------------------------------------------------------------- command


class NothingCompared(Exception):
    """No stage was compared (an empty run, ``--stage`` naming none of the runs' stages), or
    a stage run.json names has no folder: a comparison of nothing, or of part of a run, must
    not pass (a workdir downloaded from S3 whose run.json pointed at ``s3://`` folders once
    printed "0 stages compared: all equal")."""


def compare_runs(run_a: Path, run_b: Path, tol: Tolerance, only: set[str] | None = None,
                 out: Any = sys.stdout) -> bool:
    """Print one line per stage (and one per difference); True when every stage compared is
    equal.  Raises :class:`NothingCompared`, with the reason, when no stage was compared."""
    (stages_a, missing_a), (stages_b, missing_b) = _run_stages(run_a), _run_stages(run_b)
    print(f"A: {run_a}\nB: {run_b}\nfloats equal within rel {tol.rel:g} / abs {tol.abs:g}", file=out)
    unread = [f"run {side}'s run.json names stage {name!r}, its folder is not there: {where}"
              for side, missing in (("A", missing_a), ("B", missing_b)) for name, where in missing.items()
              if not only or name in only]
    if unread:
        raise NothingCompared("; ".join(unread))
    equal = True
    compared, differ, alone = 0, 0, 0
    for name in [*stages_a, *(n for n in stages_b if n not in stages_a)]:
        if only and name not in only:
            continue
        if name not in stages_a or name not in stages_b:
            print(f"{name:<10} only in run {'A' if name in stages_a else 'B'}, not compared", file=out)
            alone += 1
            continue
        result = compare_stage(name, stages_a[name], stages_b[name], tol)
        print(result.line(), file=out)
        for d in result.differences:
            print(f"    {d}", file=out)
        for d in result.notes:
            print(f"    note: {d}", file=out)
        equal = equal and not result.differences
        compared += 1
        differ += bool(result.differences)
    if not compared:
        raise NothingCompared(_why_nothing(run_a, run_b, stages_a, stages_b, only))
    print(f"{compared} stages compared: {'all equal' if not differ else f'{differ} differ'}"
          + (f"; {alone} in one run only" if alone else ""), file=out)
    return equal


def _why_nothing(run_a: Path, run_b: Path, stages_a: dict, stages_b: dict, only: set[str] | None) -> str:
    reasons = []
    for side, run, stages in (("A", run_a, stages_a), ("B", run_b, stages_b)):
        if not stages:
            reasons.append(f"run {side} ({run}): no complete stage")
    if not reasons and only:
        reasons.append(f"--stage {', '.join(sorted(only))}: in neither run's stages "
                       f"(A: {', '.join(stages_a) or 'none'}; B: {', '.join(stages_b) or 'none'})")
    if not reasons:
        reasons.append(f"the runs share no stage (A: {', '.join(stages_a)}; B: {', '.join(stages_b)})")
    return "0 stages compared: " + "; ".join(reasons)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_a", type=Path, help="a workdir (holding run.json or stages/)")
    ap.add_argument("run_b", type=Path, help="the other workdir")
    ap.add_argument("--rel", type=float, default=Tolerance.rel, help="relative tolerance for floats (default 1e-9)")
    ap.add_argument("--abs", type=float, default=Tolerance.abs, help="absolute tolerance for floats (default 1e-12)")
    ap.add_argument("--stage", action="append", help="compare only this stage (repeatable)")
    args = ap.parse_args(argv)
    for run in (args.run_a, args.run_b):
        if not (run / "run.json").is_file() and not (run / "stages").is_dir():
            ap.error(f"{run}: not a spamflow workdir (no run.json, no stages/)")
    try:
        same = compare_runs(args.run_a, args.run_b, Tolerance(args.rel, args.abs), set(args.stage or ()) or None)
    except NothingCompared as exc:
        print(f"compare_runs.py: error: {exc}", file=sys.stderr)
        return 2
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
