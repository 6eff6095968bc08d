"""Cost of the run report: the whole report of the demo run (the baseline), then the part that
grows with the corpus, the host table, on the demo's per-host tables copied 10x and 100x (hosts
renamed), and the page-table scan that fetches quilt texts, on the demo's page table copied 10x.

    python benchmarks/bench_report.py [--workdir DIR]   # DIR: a finished `spamflow demo` run

Without --workdir it runs `spamflow demo` into a temporary folder first (~20 s).  Prints
seconds, rows per second and the ratio of the time per row to the baseline's (1.0 = linear).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from spamflow.report.host_table import build_host_table
from spamflow.report.render import write_report
from spamflow.report.sections import environment, pages_by_id


def _demo(workdir: Path | None) -> dict:
    if workdir is None:
        workdir = Path(tempfile.mkdtemp(prefix="bench-report-")) / "demo"
        subprocess.run([sys.executable, "-m", "spamflow_workflows", "demo", "--workdir", str(workdir), "--no-progress"],
                       check=True, capture_output=True)
    return json.loads((workdir / "run.json").read_text())["stages"]


def _copies(stages: dict, times: int, out: Path) -> dict:
    """The detectors' hosts tables with every host repeated ``times`` times under new names."""
    fake = {}
    for name, record in stages.items():
        path = record.get("outputs", {}).get("hosts")
        if not path or not path.endswith(".parquet"):
            continue
        table = pq.read_table(path)
        parts = []
        for i in range(times):
            hosts = pc.binary_join_element_wise(pa.array([f"c{i}-"] * table.num_rows), table["host"], "")
            parts.append(table.set_column(table.schema.get_field_index("host"), "host", hosts))
        target = out / f"{name}-{times}.parquet"
        pq.write_table(pa.concat_tables(parts), target)
        fake[name] = {"outputs": {"hosts": str(target)}, "complete": True}
    return fake


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workdir", type=Path, help="a finished `spamflow demo` work directory")
    args = parser.parse_args()
    print(f"{platform.platform()}, Python {platform.python_version()}, pyarrow {pa.__version__}, "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    stages = _demo(args.workdir)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        started = time.perf_counter()
        _, counts = write_report(stages, out / "report", title="bench")
        whole = time.perf_counter() - started
        size = sum(f.stat().st_size for f in (out / "report").rglob("*") if f.is_file())
        print(f"whole demo report: {whole:.2f} s, {size / 1e6:.2f} MB with assets, {counts}")

        env = environment()
        base = None
        for times in (1, 10, 100):
            fake = _copies(stages, times, out)
            started = time.perf_counter()
            table = build_host_table(fake, {}, max_hosts=5000)
            html = env.get_template("hosts.html.j2").render(table=table)
            seconds = time.perf_counter() - started
            rows = len(table.rows) + table.hidden
            per_row = seconds / rows
            base = base or per_row
            print(f"host table x{times:<3}: {rows:>7} rows in {seconds:6.3f} s ({rows / seconds:9.0f} rows/s, "
                  f"{len(html) / 1e6:5.2f} MB of HTML, {table.hidden} rows counted not shown); "
                  f"time per row vs x1: {per_row / base:.2f}")

        pages = Path(stages["parse"]["outputs"]["pages"])
        quilts = [json.loads(line) for line in open(stages["quilt"]["outputs"]["quilts"])][:50]
        ids = {q["doc_id"] for q in quilts} | {s["doc_id"] for q in quilts for s in q["sources"]}
        base = None
        for times in (1, 10):
            table = ds.dataset(pages, format="parquet").to_table()
            folder = out / f"pages-{times}"
            folder.mkdir()
            for i in range(times):
                pq.write_table(table, folder / f"part-{i:05d}.parquet")
            started = time.perf_counter()
            found = pages_by_id(folder, ids, ["words"])
            seconds = time.perf_counter() - started
            per_row = seconds / (table.num_rows * times)
            base = base or per_row
            print(f"quilt texts from a page table x{times:<2}: {table.num_rows * times:>6} pages scanned in "
                  f"{seconds:.3f} s for {len(found)} pages; time per page vs x1: {per_row / base:.2f}")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
