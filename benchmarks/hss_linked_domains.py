"""What HSS's firing feature sees on a finished run (docs/hss.md, "When a host fires"): per kind
of host, the rows the old rule (``largest_cluster_domains`` >= 3) and the new one
(``linked_cluster_domains`` >= 3) fire on, the range of the share of a domain's distinct link
targets that are its cluster's domains, and, per cluster over 3+ domains, the outside targets
linked from at least half its domains with the number of domains outside the cluster linking
them too (the "shared rare target" that was measured and not added).

Kinds come from the demo's ``truth.json`` (a demo run) or a ``--truth`` file mapping host to
``{"kind": ...}`` (``eval_real_spam.py``'s ``truth.json``)::

    spamflow demo --workdir /tmp/demo
    python benchmarks/hss_linked_domains.py --run /tmp/demo
    python benchmarks/hss_linked_domains.py --run out/eval-real/run --truth out/eval-real/truth.json
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from pathlib import Path

import pyarrow.parquet as pq

from spamflow_hss.fingerprint_table import page_parts
from spamflow_hss.linked_domains import link_domains


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", type=Path, required=True, help="a workdir with run.json")
    ap.add_argument("--truth", type=Path, help="host -> {kind} (default: the demo stage's truth.json)")
    args = ap.parse_args(argv)
    stages = json.loads((args.run / "run.json").read_text())["stages"]
    if args.truth:
        kinds = {h: v["kind"] for h, v in json.loads(args.truth.read_text()).items()}
    else:
        kinds = {h: v["kind"] for h, v in json.loads(Path(stages["demo"]["outputs"]["truth"]).read_text())["hosts"].items()}
    assignment = pq.read_table(stages["hss"]["outputs"]["page_clusters"])
    hosts = pq.read_table(stages["hss"]["outputs"]["hosts"]).to_pylist()
    parts = page_parts(Path(stages["parse"]["outputs"]["pages"]))

    fires: dict[str, Counter[str]] = defaultdict(Counter)
    for row in hosts:
        kind = kinds.get(row["host"], "?")
        fires[kind]["rows"] += 1
        fires[kind]["old"] += row["largest_cluster_domains"] > 2
        fires[kind]["new"] += row["linked_cluster_domains"] > 2
    print("kind: rows, old rule fires, new rule fires")
    for kind, c in sorted(fires.items()):
        print(f"  {kind}: {c['rows']}, {c['old']}, {c['new']}")

    rows = assignment.filter(assignment.column("cluster_id").is_valid()).to_pylist()
    domains: dict[int, set[str]] = defaultdict(set)
    domain_kind: dict[tuple[int, str], str] = {}
    for r in rows:
        domains[r["cluster_id"]].add(r["domain"])
        domain_kind[(r["cluster_id"], r["domain"])] = kinds.get(r["host"], "?")
    members = {r["doc_id"]: r["cluster_id"] for r in rows}
    snapshot_of = {r["cluster_id"]: r["snapshot"] for r in rows}
    linkers: dict[tuple[str, str], set[str]] = defaultdict(set)  # (snapshot, target) -> domains linking it
    targets: dict[tuple[int, str], set[str]] = defaultdict(set)  # (cluster, domain) -> its cluster pages' targets
    for part in parts:
        table = pq.read_table(part, columns=["doc_id", "snapshot", "domain", "links"])
        for doc_id, snapshot, own, links in zip(*(table.column(c).to_pylist() for c in table.column_names)):
            for target in link_domains(links, own):
                linkers[(snapshot, target)].add(own)
                if doc_id in members:
                    targets[(members[doc_id], own)].add(target)
    big = sorted(c for c in domains if len(domains[c]) >= 3)
    shares: dict[str, list[float]] = defaultdict(list)
    for (cid, domain), linked in targets.items():
        if len(domains[cid]) >= 3 and linked:
            shares[domain_kind[(cid, domain)]].append(len(linked & domains[cid]) / len(linked))
    print("kind: share of a domain's distinct link targets inside its cluster (clusters over 3+ domains)")
    for kind, values in sorted(shares.items()):
        print(f"  {kind}: {min(values):.2f}-{max(values):.2f} over {len(values)} (cluster, domain) pairs")
    print("cluster (domains, kinds): outside targets linked from half its domains or more "
          "(target, its domains linking, other domains linking)")
    for cid in big:
        linking: dict[str, int] = Counter()
        for d in domains[cid]:
            linking.update(targets[(cid, d)] - domains[cid])
        shared = sorted(((t, n, len(linkers[(snapshot_of[cid], t)] - domains[cid]))
                         for t, n in linking.items() if 2 * n >= len(domains[cid])), key=lambda x: (-x[1], x[0]))
        present = sorted({domain_kind[(cid, d)] for d in domains[cid]})
        print(f"  {cid} ({len(domains[cid])}, {'/'.join(present)}): {shared[:6]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
