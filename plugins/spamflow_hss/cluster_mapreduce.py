"""Procedure 2 with the probe/check done by the MapReduce job ``mr_probe_check``: the same
component labels and the same probe statistics as :func:`spamflow_hss.probing.cluster_fingerprints`.

The driver writes one line per page (snapshot number, row, hex fingerprint), runs the job,
and joins the similar pairs it returns into connected components here, with the same
:func:`~spamflow_hss.probing.components` as the in-memory path.  The job returns a spanning
forest per bucket, so at most one pair per page and probe (p pairs, 16 bytes each, per
page at most) is held here, besides one label per page.  The statistics the reducers
cannot see (pages without a key in a probe) are counted while the input is written.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import numpy.typing as npt

from spamflow.mr import run_job
from spamflow_hss.fingerprint import EMPTY
from spamflow_hss.mr_probe_check import STATS_KEY, MRProbeCheck
from spamflow_hss.params import HSSParams
from spamflow_hss.probing import ProbeStats, components, probe_subsets

U64 = npt.NDArray[np.uint64]
Index = npt.NDArray[np.int64]


def _job_args(params: HSSParams) -> list[str]:
    return ["--m", str(params.m), "--k", str(params.k), "--p", str(params.p), "--t", str(params.t),
            "--seed", str(params.seed), "--max-representatives", str(params.max_representatives)]


def cluster_snapshots_mapreduce(snapshots: Iterable[tuple[str, U64]], params: HSSParams, work: Path, runner: str,
                                runner_args: tuple[str, ...] = ()) -> dict[str, tuple[Index, ProbeStats]]:
    """Component label per page and the probe statistics, per snapshot, for the
    (snapshot, fingerprints) given: what ``cluster_fingerprints`` gives each snapshot."""
    subsets = probe_subsets(params.m, params.k, params.p, params.seed)
    work.mkdir(parents=True, exist_ok=True)
    names: list[str] = []
    pages: list[int] = []
    keyed: list[Index] = []  # per snapshot: pages with a key in each probe
    with open(work / "probe_input.tsv", "w", encoding="ascii") as fh:
        for number, (name, fingerprints) in enumerate(snapshots):
            names.append(name)
            pages.append(len(fingerprints))
            keyed.append(np.array([np.count_nonzero(np.all(fingerprints[:, s] != EMPTY, axis=1)) for s in subsets],
                                  np.int64))
            for start in range(0, len(fingerprints), 4096):
                for row, line in enumerate(fingerprints[start:start + 4096].astype(">u8"), start):
                    fh.write(f"{number}\t{row}\t{line.tobytes().hex()}\n")
    if not names:
        return {}
    output = run_job(MRProbeCheck, [work / "probe_input.tsv"], work / "probe_pairs.tsv", runner=runner,
                     args=_job_args(params), runner_args=runner_args)
    pairs: list[list[tuple[int, int]]] = [[] for _ in names]
    reported: list[list[dict[str, int]]] = [[] for _ in names]
    with open(output, encoding="ascii") as fh:
        for line in fh:
            first, rest = line.rstrip("\n").split("\t", 1)
            if first == STATS_KEY:
                record = json.loads(rest)
                reported[record["snapshot"]].append(record)
            else:
                a, b = rest.split("\t")
                pairs[int(first)].append((int(a), int(b)))
    result = {}
    for number, name in enumerate(names):
        edges = np.array(sorted(set(pairs[number])), np.int64).reshape(-1, 2)
        result[name] = (components(pages[number], edges),
                        _stats(pages[number], keyed[number], reported[number], len(subsets)))
    return result


def _stats(pages: int, keyed: Index, reported: list[dict[str, int]], probes: int) -> ProbeStats:
    """The in-memory ProbeStats of one snapshot from the reducers' per-probe records and the
    pages with a key in each probe (a probe with 2+ such pages sees a largest bucket of 1 or more)."""
    checks = [0] * probes
    for record in reported:
        checks[record["probe"]] += record["checks"]
    biggest = [r["largest_bucket"] for r in reported] + [1 for count in keyed.tolist() if count >= 2]
    return ProbeStats(
        probes=probes, buckets=sum(r["buckets"] for r in reported), largest_bucket=max(biggest, default=0),
        checks=sum(checks), edges=sum(r["edges"] for r in reported),
        max_rounds=max((r["max_rounds"] for r in reported), default=0),
        unchecked=sum(r["unchecked"] for r in reported), skipped_empty_keys=int(probes * pages - keyed.sum()),
        per_probe_checks=checks)
