"""Why a model trained on WEBSPAM-UK2007's link features does not transfer to a host graph's
``links_hostgraph`` table (docs/pipelines.md): each raw feature's median in the SET1 table
(``_hp``: the home page) and in ours, and the share of our hosts outside the SET1 table's
1st-99th percentile range, as given and, for the rank-valued features, times the graph's
node count N (105,896,555 pages for UK2007; our hosts), which puts both on the scale where
the average node has 1.  Also how each side writes "no in-neighbour" (0 or missing).

    python benchmarks/eval_uk2007_transfer.py runs/x/stages/links_hostgraph-*/hosts.parquet
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

SET1 = Path("/work/shared/data/webspam-uk2007/features-train-only/uk-2007-05.link_based_features.csv.train.arff.gz")
UK2007_PAGES = 105_896_555
FEATURES = ("indegree", "outdegree", "reciprocity", "assortativity", "avgin_of_out", "avgout_of_in", "pagerank",
            "prsigma", "trustrank", "truncatedpagerank_1", "truncatedpagerank_4", "neighbors_2", "neighbors_3",
            "neighbors_4")
RANKS = ("pagerank", "prsigma", "trustrank", "truncatedpagerank_1", "truncatedpagerank_4")


def read_arff(path: Path) -> dict[str, np.ndarray]:
    names, rows, data = [], [], False
    with gzip.open(path, "rt") as fh:
        for line in fh:
            line = line.strip()
            if not line or line.startswith("%"):
                continue
            if line.lower().startswith("@attribute"):
                names.append(line.split()[1])
            elif line.lower().startswith("@data"):
                data = True
            elif data:
                rows.append(line.split(","))

    def number(v: str) -> float:
        try:
            return float(v)
        except ValueError:
            return np.nan

    return {n: np.array([number(r[i]) for r in rows]) for i, n in enumerate(names) if n != "class"}


def main() -> None:
    if not SET1.exists():
        sys.exit(f"{SET1} is absent")
    uk = read_arff(SET1)
    table = pq.read_table(sys.argv[1]).to_pydict()
    ours = {k: np.array([np.nan if v is None else v for v in vals], float) for k, vals in table.items()
            if k not in ("snapshot", "host")}
    n = len(table["host"])
    print(f"UK2007 SET1: {len(uk['hostid']):,} hosts (N = {UK2007_PAGES:,} pages); ours: {n:,} hosts (N = {n:,})")
    print(f"{'feature':22s} {'SET1 median':>12s} {'ours':>10s} {'outside':>8s} {'x N: SET1':>10s} {'ours':>8s} "
          f"{'outside':>8s}  {'no in-neighbour: SET1 / ours':s}")
    no_in_uk, no_in_ours = uk["indegree_hp"] == 0, ours["indegree"] == 0
    for f in FEATURES:
        a, b = uk[f + "_hp"], ours[f]
        lo, hi = np.nanpercentile(a, [1, 99])
        line = f"{f:22s} {np.nanmedian(a):12.4g} {np.nanmedian(b):10.4g} {np.mean((b < lo) | (b > hi)):8.1%}"
        if f in RANKS:
            a2, b2 = a * UK2007_PAGES, b * n
            lo2, hi2 = np.nanpercentile(a2, [1, 99])
            line += f" {np.nanmedian(a2):10.4g} {np.nanmedian(b2):8.4g} {np.mean((b2 < lo2) | (b2 > hi2)):8.1%}"
        else:
            line += " " * 28
        if f == "prsigma":
            line += (f"  {np.unique(a[no_in_uk]).tolist()[:3]} on {no_in_uk.sum()} / "
                     f"{'missing' if np.all(np.isnan(b[no_in_ours])) else 'values'} on {no_in_ours.sum():,}")
        print(line)


if __name__ == "__main__":
    main()
