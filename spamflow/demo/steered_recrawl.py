"""Recrawl a demo snapshot steered by a demo run's scores, beside the same crawl unsteered,
and count the fetches per host and per planted kind: what ``input.crawl.steer`` saves on
the planted spam, and whether any honest host lost a page (docs/demo.md).

    python -m spamflow.demo.steered_recrawl --run /tmp/spamflow-demo [--snapshot 2026-02] [--out DIR]

Fetches are counted at the server (every request the loopback web received, robots.txt
included), so a host the crawler skipped shows the robots.txt it did not ask for too.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spamflow.crawl.crawler import crawl
from spamflow.crawl.steer import SteerSettings, manifest_path, stage_output
from spamflow.errors import SpamflowError
from spamflow.stages.crawl import demo_crawls


@dataclass
class Recrawl:
    """One crawl of a demo snapshot: requests and pages (robots.txt left out) per host."""

    fetches: Counter[str]
    pages: Counter[str]
    counts: dict[str, int]
    steer_rows: list[dict[str, Any]] = field(default_factory=list)


def demo_labels(run: Path) -> dict[str, tuple[str, str]]:
    """host -> (label, kind) of the run's demo web (labels/hosts.tsv)."""
    manifest = json.loads(manifest_path(str(run), Path(".")).read_text(encoding="utf-8"))
    labels = stage_output(manifest, "demo", "labels", f"{run}: demo") / "hosts.tsv"
    rows = [line.split("\t") for line in labels.read_text(encoding="utf-8").splitlines()[1:]]
    return {r[0]: (r[2], r[3]) for r in rows}


def recrawl(run: Path, out: Path, steer: dict[str, Any] | None = None, snapshot: str | None = None) -> Recrawl:
    """Serve ``snapshot`` (default: the last) of ``run``'s demo web and crawl it into ``out``
    (a new directory) with the demo's crawl settings, ``steer`` as ``input.crawl.steer``."""
    manifest = json.loads(manifest_path(str(run), Path(".")).read_text(encoding="utf-8"))
    warc = stage_output(manifest, "demo", "warc", f"{run}: demo")
    crawls = {s.snapshot: (s, web) for s, web in demo_crawls(warc, {})}
    name = snapshot or sorted(crawls)[-1]
    if name not in crawls:
        raise SpamflowError(f"{run}: the demo web has no snapshot {name!r} (it has {', '.join(sorted(crawls))})")
    if out.exists():
        raise SpamflowError(f"{out} exists: give a new directory (a crawl there would resume)")
    settings, web = crawls[name]
    with web:
        update: dict[str, Any] = {"resolve": web.pins}
        if steer is not None:
            update["steer"] = SteerSettings.model_validate({**steer, "run": str(Path(steer["run"]).resolve())})
        summary = crawl(settings.model_copy(update=update), out)
    log = list(web.log)
    rows = [json.loads(line) for line in summary.steer.read_text().splitlines()] if summary.steer else []
    return Recrawl(Counter(h.host for h in log), Counter(h.host for h in log if h.path != "/robots.txt"),
                   summary.counts, rows)


def by_kind(labels: dict[str, tuple[str, str]], crawl_: Recrawl) -> dict[str, int]:
    """Fetches per planted kind (honest, linkfarm, spin, quilt, promoted)."""
    kinds: Counter[str] = Counter()
    for host, n in crawl_.fetches.items():
        kinds[labels.get(host, ("?", "unlabelled"))[1]] += n
    return dict(sorted(kinds.items()))


def honest_losses(labels: dict[str, tuple[str, str]], plain: Recrawl, steered: Recrawl) -> dict[str, tuple[int, int]]:
    """Honest hosts with fewer pages steered than unsteered: host -> (unsteered, steered)."""
    return {h: (plain.pages[h], steered.pages[h]) for h, (label, _) in sorted(labels.items())
            if label == "nonspam" and steered.pages[h] < plain.pages[h]}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m spamflow.demo.steered_recrawl", description=__doc__.split("\n\n")[0])
    p.add_argument("--run", required=True, type=Path, help="a `spamflow demo` workdir (or its run.json)")
    p.add_argument("--snapshot", help="the snapshot to recrawl (default: the last)")
    p.add_argument("--out", type=Path, help="a new directory for the two crawls (default: a temporary one)")
    p.add_argument("--evidence", default="classify.scores.score",
                   help="comma-separated signals, each stage.output.column (docs/crawl.md), e.g. "
                        "quilt.hosts.quilted_fraction,spin.hosts.campaign_fraction")
    p.add_argument("--snapshots", default="", help="comma-separated snapshots of the run to read (default: all)")
    p.add_argument("--threshold", type=float, default=0.5)
    p.add_argument("--spam-budget", type=int, default=1)
    p.add_argument("--subdomain-cap", type=int, default=0)
    p.add_argument("--link-weight", type=float, default=0.5)
    args = p.parse_args(argv)
    steer = {"run": str(args.run), "evidence": args.evidence.split(","), "threshold": args.threshold,
             "snapshots": [s for s in args.snapshots.split(",") if s], "spam_budget": args.spam_budget,
             "subdomain_cap": args.subdomain_cap, "link_weight": args.link_weight}
    out = args.out or Path(tempfile.mkdtemp(prefix="steered-recrawl-"))
    try:
        labels = demo_labels(args.run)
        plain = recrawl(args.run, out / "unsteered", None, args.snapshot)
        steered = recrawl(args.run, out / "steered", steer, args.snapshot)
    except SpamflowError as exc:
        print(f"steered_recrawl: {exc}", file=sys.stderr)
        return 2
    a, b = by_kind(labels, plain), by_kind(labels, steered)
    print(f"{'kind':<12}{'unsteered':>10}{'steered':>10}   (fetches, robots.txt included)")
    for kind in sorted(set(a) | set(b)):
        print(f"{kind:<12}{a.get(kind, 0):>10}{b.get(kind, 0):>10}")
    spam = [h for h, (label, _) in labels.items() if label == "spam"]
    print(f"spam hosts: {sum(plain.fetches[h] for h in spam)} fetches unsteered, "
          f"{sum(steered.fetches[h] for h in spam)} steered")
    lost = honest_losses(labels, plain, steered)
    print("honest hosts that lost pages: " + (", ".join(f"{h} {x}->{y}" for h, (x, y) in lost.items()) or "none"))
    print("steering counts: " + ", ".join(f"{k}={steered.counts.get(k, 0)}" for k in (
        "hosts_steered", "hosts_steer_skipped", "subdomains_capped", "urls_steer_over_budget",
        "urls_steer_skipped", "urls_steer_subdomain_capped", "links_steer_not_followed", "urls_steer_low_lane",
        "pages_steer_low_lane", "urls_steer_promoted")))
    print(f"crawls and steer.jsonl: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
