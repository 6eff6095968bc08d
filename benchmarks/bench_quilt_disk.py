"""The quilt stage's temporary disk on a scale_web corpus, against another version's code in
the same run.

Run from the repository root::

    git archive main plugins/spamflow_quilt | tar -x -C /tmp/quilt-main
    PYTHONPATH=$PWD:$PWD/plugins:$PWD/workflows .venv/bin/python benchmarks/bench_quilt_disk.py \\
        --pages 10000 100000 --baseline /tmp/quilt-main/plugins

For each size it writes scale_web's synthetic web (``benchmarks/scale_web.py``, two snapshots)
and runs ``spamflow run`` with the quilt detector alone (ingest, parse, quilt), on mrjob's
local runner, sampled as ``bench_scale.py`` samples a stage (``bench_scale.Sampler``: the
bytes under the run's ``TMPDIR`` plus the stage's unpublished folder, every 0.5 s), first with
this checkout's ``spamflow_quilt``, then with ``--baseline``'s (its folder first on
``PYTHONPATH``).  Printed per size and code: the peak temporary bytes as a multiple of the
WARC bytes (docs/quilt.md states the bound, ``bench_scale.QUILT_TMP_BOUND``), the stage's
wall and CPU seconds, and whether both codes found the same quilts.  ``--sort-buffer 64M`` runs
every sort with that buffer (runs compressed), so that a 10^5-page corpus's sorts spill as a
10^6-page one's do with the default 512 MB.  A 10^5-page size takes
some 4 minutes per code on an idle 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_scale import QUILT_TMP_BOUND, RUNNER_ARGS, make_web, sampled_run  # noqa: E402
from scale_web import Web, config_text  # noqa: E402
from spamflow_quilt.mr_gram_df import MRGramDocumentFrequency  # noqa: E402

from spamflow.mr.driver import SORT_BUFFER, compressed_sort_bin  # noqa: E402


def quilt_config(pages: int, web: Path, workdir: Path, sort_buffer: str | None) -> str:
    """scale_web's config with the quilt detector alone, local runner; ``sort_buffer``: GNU
    sort's buffer instead of ``SORT_BUFFER``, its runs compressed as ``run_job_compact`` does."""
    config = json.loads(config_text(Web(pages // 2), web, workdir, "local", RUNNER_ARGS["local"]))
    config["detectors"] = {"quilt": {}}
    if sort_buffer:
        sort_bin = compressed_sort_bin(MRGramDocumentFrequency).replace(f"-S {SORT_BUFFER}", f"-S {sort_buffer}")
        config["mapreduce"]["args"] = [*config["mapreduce"]["args"], "--sort-bin", sort_bin]
    return json.dumps(config, indent=1)  # JSON is YAML


def run_quilt(pages: int, web: Path, folder: Path, name: str, code: str | None, sort_buffer: str | None) -> dict:
    """``spamflow run`` with the quilt detector alone; ``code``: a folder put first on PYTHONPATH."""
    workdir = folder / f"run-{pages}-{name}"
    config = folder / f"quilt-{pages}-{name}.yaml"
    config.write_text(quilt_config(pages, web, workdir, sort_buffer))
    tmp = folder / f"tmp-{pages}-{name}"
    tmp.mkdir()
    path = os.pathsep.join(p for p in (code, os.environ.get("PYTHONPATH")) if p)
    env = dict(os.environ, TMPDIR=str(tmp), PYTHONPATH=path)
    log = folder / f"run-{pages}-{name}.log"
    status, sampler, wall = sampled_run(config, workdir, tmp, env, log)
    if status != 0:
        raise SystemExit(f"spamflow run failed ({status}) on {pages} pages with the {name} code; see {log}")
    record = json.loads((workdir / "run.json").read_text())["stages"]["quilt"]
    quilts = Path(record["outputs"]["quilts"]).read_text().splitlines()
    return {"wall_s": wall, "seconds": float(record.get("seconds") or 0.0),
            "cpu_seconds": float(record.get("cpu_seconds") or 0.0), "peak_tmp": sampler.peak_tmp.get("quilt", 0),
            "peak_rss": sampler.peak_rss.get("quilt", 0), "quilts": sorted(quilts)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, nargs="+", default=[10_000, 100_000],
                    help="corpus sizes, pages over both snapshots (default: 10^4 and 10^5)")
    ap.add_argument("--baseline", type=Path, metavar="DIR",
                    help="a folder holding another version's spamflow_quilt, run after this checkout's")
    ap.add_argument("--sort-buffer", metavar="SIZE",
                    help="GNU sort's buffer for every job (e.g. 64M; default spamflow.mr.driver.SORT_BUFFER): a "
                         "smaller one makes the sorts spill as a 10x larger corpus's do")
    ap.add_argument("--keep", type=Path, help="work in this folder and keep it (default: a temporary one)")
    args = ap.parse_args(argv)
    codes = [("this", None)] + ([("baseline", str(args.baseline.resolve()))] if args.baseline else [])
    same = True
    with tempfile.TemporaryDirectory(prefix="spamflow-quiltdisk-") as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        for pages in args.pages:
            web, info = make_web(pages, folder)
            results = {name: run_quilt(pages, web, folder, name, code, args.sort_buffer) for name, code in codes}
            buffer = f"sort buffer {args.sort_buffer}" if args.sort_buffer else f"sort buffer {SORT_BUFFER}"
            print(f"\n{pages:,} pages, {info['input_bytes'] / 2**20:,.0f} MiB of WARC, local runner ({buffer}), "
                  "quilt stage:")
            for name, r in results.items():
                ratio = r["peak_tmp"] / info["input_bytes"]
                print(f"  {name:<9} temporary peak {r['peak_tmp'] / 2**20:8,.0f} MiB = {ratio:5.1f}x the WARC "
                      f"({'within' if ratio <= QUILT_TMP_BOUND else 'ABOVE'} {QUILT_TMP_BOUND:g}x), "
                      f"{r['seconds']:6.1f} s, CPU {r['cpu_seconds']:6.1f} s, largest process "
                      f"{r['peak_rss'] / 2**20:,.0f} MiB, {len(r['quilts'])} quilts")
            if "baseline" in results:
                equal = results["this"]["quilts"] == results["baseline"]["quilts"]
                same = same and equal
                this, base = results["this"], results["baseline"]
                print(f"  this / baseline: temporary {this['peak_tmp'] / max(base['peak_tmp'], 1):.2f}, "
                      f"CPU {this['cpu_seconds'] / max(base['cpu_seconds'], 1e-9):.2f}; quilts.jsonl "
                      f"{'identical' if equal else 'DIFFERENT'}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
