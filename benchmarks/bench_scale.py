"""The whole DAG at scale: seconds, peak memory and temporary disk per stage, and how each
grows with the corpus.

Run from the repository root::

    .venv/bin/python benchmarks/bench_scale.py                       # 10^5 and 10^6 pages, local runner
    .venv/bin/python benchmarks/bench_scale.py --pages 10000 100000  # quicker
    .venv/bin/python benchmarks/bench_scale.py --pages 100000 --runner spark   # Spark local[2]
    .venv/bin/python benchmarks/bench_scale.py --pages 10000 --compare-runners # local, then Spark, same outputs?

For each size it writes a synthetic web (``scale_web.py``: two snapshots, ``pages / 2`` pages
each, real-prose text, link farms, quilts, copies, template sites), then runs
``spamflow run`` on it with every built-in detector, the classifier and the report,
``workers: 2`` (``--stages-at-once N``: ``stages_at_once: N``, default 1), the given MapReduce runner (``spark``: ``--spark-master local[2]``), every stage
that has one with ``engine: auto`` (so on Spark every such stage runs its jobs; on ``local``
only spin's candidate jobs, on snapshots of at most 5,000 pages: above that spin's ``direct``
engine and quilt's ``memory`` one run the jobs' arithmetic in the stage's process).  While the run goes, a sampler reads ``/proc``
every 0.5 s: the largest resident set of any process of the run, and the bytes under the
run's temporary folder (``TMPDIR`` is pointed into the benchmark's folder, so mrjob's and
Spark's scratch space is counted) plus the stages' unpublished directories.  Each sample is
charged to the stages running at that moment (their ``.<stage>-<sig>.tmp-<pid>`` folders
exist), so with two stages at once both are charged: an upper bound.

Printed per stage: seconds and CPU seconds (from ``stage.json``), peak RSS of the largest process, peak
temporary bytes as a multiple of the run's input WARC bytes, and between consecutive sizes
the growth ratio ``(t2 / t1) * 10 / (n2 / n1)`` (10.0 = linear in the corpus), by wall and by CPU time.  Targets
(issue "Scale out"): 10^6 pages under an hour on 2 cores, no ratio above 11.5, no process
above 4 GB.

``--baseline REV`` runs each web a second time with the code of git revision REV (a detached
worktree of this repository under the benchmark's folder, put first on ``PYTHONPATH``; workdirs
``run-<runner>-base``) and prints, per stage, its CPU seconds and peak temporary bytes as a
ratio to REV's (< 1: cheaper now), then ``compare_runs.py`` on the two workdirs (exit status 1
if an output differs).  ``--detectors spin`` keeps only the named detectors (and what they
need), e.g. to measure one stage without the others' minutes::

    .venv/bin/python benchmarks/bench_scale.py --pages 10000 --detectors spin --engine spin=mapreduce --baseline main

``--compare-runners`` runs each web twice, on the ``local`` runner and on Spark ``local[2]``
(workdirs ``run-local`` and ``run-spark`` beside the web), prints the figures of both, then
``compare_runs.py`` on the two workdirs: one line per stage, equal or what differs.  Exit
status 1 if an output differs (the issue's target: the same outputs on every runner).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from compare_runs import Tolerance, compare_runs  # noqa: E402
from scale_web import Web, config_text, generate  # noqa: E402

PAGE = os.sysconf("SC_PAGE_SIZE")
RUNNER_ARGS = {"inline": (), "local": (), "spark": ("--spark-master", "local[2]")}
ENGINE_STAGES = ("hss", "links", "content", "spin", "classify")  # the detectors with an ``engine`` key


def _tree(root: int) -> list[int]:
    """``root`` and all its descendants, from /proc (no psutil needed)."""
    children: dict[int, list[int]] = defaultdict(list)
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
            children[int(fields[1])].append(int(entry.name))
        except (OSError, IndexError, ValueError):
            continue
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, ()))
    return out


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm", "rb") as fh:
            return int(fh.read().split()[1]) * PAGE
    except (OSError, IndexError, ValueError):
        return 0


def _bytes_under(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


class Sampler(threading.Thread):
    """Charges the run's largest process and its temporary bytes to the stages running."""

    def __init__(self, pid: int, stages: Path, tmp: Path) -> None:
        super().__init__(daemon=True)
        self.pid, self.stages, self.tmp = pid, stages, tmp
        self.peak_rss: dict[str, int] = defaultdict(int)
        self.peak_tmp: dict[str, int] = defaultdict(int)
        self.tmp_beside: dict[str, list[str]] = {}
        """Per stage, the other stages running at its temporary-data peak (charged to it too)."""
        self.run_peak_rss = 0
        self.done = threading.Event()

    def running(self) -> list[tuple[str, Path]]:
        if not self.stages.is_dir():
            return []
        return [(p.name[1:].split("-", 1)[0], p) for p in self.stages.iterdir()
                if p.name.startswith(".") and ".tmp-" in p.name]

    def run(self) -> None:
        while not self.done.wait(0.5):
            rss = max((_rss(p) for p in _tree(self.pid)), default=0)
            self.run_peak_rss = max(self.run_peak_rss, rss)
            running = self.running()
            if not running:
                continue
            scratch = _bytes_under(self.tmp)
            for name, folder in running:
                self.peak_rss[name] = max(self.peak_rss[name], rss)
                tmp = scratch + _bytes_under(folder)
                if tmp > self.peak_tmp[name]:
                    self.peak_tmp[name] = tmp
                    self.tmp_beside[name] = sorted(other for other, _ in running if other != name)


def make_web(pages: int, folder: Path) -> tuple[Path, dict]:
    """The synthetic web of ``pages`` pages (both snapshots) under ``folder``, and its figures."""
    web = folder / f"web-{pages}"
    started = time.time()
    info = generate(web, pages // 2)
    info["generate_s"] = time.time() - started
    info["input_bytes"] = sum(p.stat().st_size for p in web.rglob("*.warc.gz"))
    return web, info


def scale_config(pages: int, web: Path, workdir: Path, runner: str, engines: dict[str, str],
                 detectors: list[str] | None = None, stages_at_once: int = 1,
                 runner_args: tuple[str, ...] | None = None) -> str:
    """scale_web's config with every ``engine`` set to ``auto`` explicitly (the default today),
    so that the run measures what ``auto`` does on ``runner`` whatever a later default becomes;
    ``engines`` overrides it per stage (an execution knob: the outputs stay the same);
    ``detectors``: keep only these; ``runner_args``: instead of ``RUNNER_ARGS[runner]``
    (e.g. a standalone master)."""
    args = RUNNER_ARGS[runner] if runner_args is None else runner_args
    config = json.loads(config_text(Web(pages // 2), web, workdir, runner, args))
    if stages_at_once != 1:  # only when asked: a --baseline revision before the key would refuse it
        config["stages_at_once"] = stages_at_once
    if detectors:
        config["detectors"] = {name: value for name, value in config["detectors"].items() if name in detectors}
    config["parse"] = {**config.get("parse", {}), "engine": engines.get("parse", "auto")}
    for name in ENGINE_STAGES:
        if name in config["detectors"]:
            config["detectors"][name]["engine"] = engines.get(name, "auto")
    return json.dumps(config, indent=1)  # JSON is YAML


def engine_choice(text: str) -> tuple[str, str]:
    """``STAGE=ENGINE`` of ``--engine``."""
    stage, _, engine = text.partition("=")
    if stage not in ("parse", *ENGINE_STAGES) or engine not in ("auto", "memory", "direct", "mapreduce"):
        raise argparse.ArgumentTypeError(f"{text!r}: expected STAGE=auto|memory|direct|mapreduce, STAGE one of "
                                         f"parse, {', '.join(ENGINE_STAGES)}")
    return stage, engine


def sampled_run(config: Path, workdir: Path, tmp: Path, env: dict[str, str], log: Path,
                cwd: Path | None = None) -> tuple[int, Sampler, float]:
    """``spamflow run -c config`` with a :class:`Sampler` watching it: exit status, sampler, wall seconds.
    ``cwd``: where it runs (``python -m`` puts the working directory first on ``sys.path``)."""
    started = time.time()
    with open(log, "wb") as err:
        proc = subprocess.Popen([sys.executable, "-m", "spamflow_workflows", "run", "-c", str(config)], env=env,
                                cwd=cwd, stdout=subprocess.DEVNULL, stderr=err)
        sampler = Sampler(proc.pid, workdir / "stages", tmp)
        sampler.start()
        status = proc.wait()
    sampler.done.set()
    sampler.join()
    return status, sampler, time.time() - started


def run_web(pages: int, web: Path, info: dict, folder: Path, runner: str, workdir: Path,
            engines: dict[str, str], detectors: list[str] | None = None, code: Path | None = None,
            stages_at_once: int = 1) -> dict:
    """``spamflow run`` on the web with ``runner``, sampled: the figures ``report`` prints.
    ``code``: a checkout whose packages go first on ``PYTHONPATH`` (the baseline)."""
    name = workdir.name
    config = web / f"scale-{name}.yaml"
    config.write_text(scale_config(pages, web, workdir, runner, engines, detectors, stages_at_once))
    tmp = folder / f"tmp-{pages}-{name}"
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp), SPARK_LOCAL_IP="127.0.0.1")
    if code is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(code), str(code / "plugins"), str(code / "workflows"),
                                             env.get("PYTHONPATH", "")])
    log = web / f"{name}.log"
    status, sampler, wall = sampled_run(config, workdir, tmp, env, log, cwd=code)
    if status != 0:
        said = [line for line in log.read_text(errors="replace").splitlines() if line.startswith("spamflow:")]
        raise SystemExit(f"spamflow run failed ({status}) on {pages} pages, runner {runner}: "
                         f"{' / '.join(said[-2:]) or 'no message'}; see {log}")
    stages = json.loads((workdir / "run.json").read_text())["stages"]
    per_stage = {}
    for name, record in stages.items():
        per_stage[name] = {"seconds": float(record.get("seconds") or 0.0),
                           "cpu_seconds": float(record.get("cpu_seconds") or 0.0),
                           "peak_rss": sampler.peak_rss.get(name, 0), "peak_tmp": sampler.peak_tmp.get(name, 0),
                           "tmp_beside": sampler.tmp_beside.get(name, [])}
    return {"pages": info["pages"], "hosts": info["hosts"], "input_bytes": info["input_bytes"],
            "generate_s": info["generate_s"], "runner": runner, "wall_s": wall, "peak_rss": sampler.run_peak_rss,
            "stages": per_stage}


QUILT_TMP_BOUND = 10.0
"""docs/quilt.md: the quilt stage's temporary data is at most this many times the run's WARC bytes
(5.1x at 10^4 and 5.5x at 10^5 pages measured with bench_quilt_disk.py, 8.1x at 10^6 with
bench_scale.py; 30.3x at 10^5 before)."""
SPIN_TMP_BOUND = 15.0
"""docs/spin.md: the same for the spin stage (the local runner; its MapReduce engine's join is the largest)."""


def tmp_verdict(stage: dict, input_bytes: int, doc: str, bound: float) -> str:
    """A stage's temporary-data peak against its stated bound.  Above it with another stage
    running beside it at the peak, the sample also holds that stage's data, so it is no verdict."""
    ratio = stage["peak_tmp"] / input_bytes
    said = f"temporary data: peak {stage['peak_tmp'] / 2**20:,.0f} MiB = {ratio:.1f}x the input WARC bytes"
    beside = stage.get("tmp_beside") or []
    if ratio <= bound:
        return f"{said} (within {doc}'s bound of {bound:g}x)"
    if beside:
        return (f"{said}, with {', '.join(beside)} running beside it: their data summed; run the stage alone "
                f"to judge it against {doc}'s bound of {bound:g}x")
    return f"{said} (ABOVE {doc}'s bound of {bound:g}x)"


def report(results: list[dict]) -> None:
    names = sorted({n for r in results for n in r["stages"]}, key=lambda n: list(results[-1]["stages"]).index(n)
                   if n in results[-1]["stages"] else 99)
    for r in results:
        print(f"\n{r['pages']:,} pages, {r['hosts']:,} hosts, {r['input_bytes'] / 2**20:,.0f} MiB of WARC, "
              f"runner {r['runner']} {' '.join(RUNNER_ARGS[r['runner']])}: "
              f"{r['wall_s']:,.0f} s end to end ({r['pages'] / r['wall_s']:,.0f} pages/s), "
              f"largest process {r['peak_rss'] / 2**30:.2f} GiB (generation {r['generate_s']:,.0f} s, not counted)")
        print(f"  {'stage':<10} {'seconds':>9} {'CPU s':>9} {'pages/s':>9} {'peak RSS':>10} {'tmp/input':>10}")
        for name in names:
            s = r["stages"].get(name)
            if s is None:
                continue
            rate = r["pages"] / s["seconds"] if s["seconds"] else float("inf")
            print(f"  {name:<10} {s['seconds']:>9.1f} {s['cpu_seconds']:>9.1f} {rate:>9,.0f} {s['peak_rss'] / 2**20:>8,.0f} MB "
                  f"{s['peak_tmp'] / r['input_bytes']:>9.2f}x")
        for name, bound in (("spin", SPIN_TMP_BOUND), ("quilt", QUILT_TMP_BOUND)):
            if name in r["stages"]:
                print(f"  {name} {tmp_verdict(r['stages'][name], r['input_bytes'], f'docs/{name}.md', bound)}")
    for small, big in zip(results, results[1:]):
        scale = big["pages"] / small["pages"]
        print(f"\ngrowth {small['pages']:,} -> {big['pages']:,} pages (10.0 = linear, target <= 11.5), by wall time "
              "and by CPU time (the stage's process and every process it started: steadier on a shared machine):")
        for name in names:
            a, b = small["stages"].get(name), big["stages"].get(name)
            if a and b and a["seconds"] > 0:
                cpu = f"{b['cpu_seconds'] / a['cpu_seconds'] * 10 / scale:>6.1f}" if a["cpu_seconds"] > 0 else "     -"
                print(f"  {name:<10} {b['seconds'] / a['seconds'] * 10 / scale:>6.1f} {cpu}")
        cpu_small = sum(s["cpu_seconds"] for s in small["stages"].values())
        cpu_big = sum(s["cpu_seconds"] for s in big["stages"].values())
        cpu_total = f"{cpu_big / cpu_small * 10 / scale:>6.1f}" if cpu_small > 0 else "     -"
        print(f"  {'total':<10} {big['wall_s'] / small['wall_s'] * 10 / scale:>6.1f} {cpu_total}")


def baseline_tree(rev: str, folder: Path) -> Path:
    """A detached git worktree of ``rev`` under ``folder`` (made once, reused)."""
    repo = Path(__file__).resolve().parent.parent
    sha = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", rev], check=True, capture_output=True,
                         text=True).stdout.strip()
    tree = folder / f"baseline-{sha}"
    if not tree.exists():
        # --force: also when a deleted --keep folder left this path registered (and nothing else)
        subprocess.run(["git", "-C", str(repo), "worktree", "add", "--force", "--detach", str(tree), sha],
                       check=True, capture_output=True)
    return tree


def compare_to_baseline(now: dict, base: dict, rev: str) -> None:
    """Per stage: CPU seconds and peak temporary bytes now over the baseline's, same web."""
    print(f"\n{now['pages']:,} pages against {rev} (same web, same runner; ratio < 1: cheaper now):")
    for name, s in now["stages"].items():
        b = base["stages"].get(name)
        if not b or b["cpu_seconds"] < 1.0:
            continue
        tmp = (f"peak temporary {s['peak_tmp'] / b['peak_tmp']:.2f}x ({b['peak_tmp'] / base['input_bytes']:.1f}x -> "
               f"{s['peak_tmp'] / now['input_bytes']:.1f}x the WARC)" if b["peak_tmp"] else "no temporary data")
        print(f"  {name:<10} CPU {s['cpu_seconds'] / b['cpu_seconds']:.2f}x ({b['cpu_seconds']:.1f} -> "
              f"{s['cpu_seconds']:.1f} s, {1000 * b['cpu_seconds'] / base['pages']:.1f} -> "
              f"{1000 * s['cpu_seconds'] / now['pages']:.1f} s per 1,000 pages), {tmp}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, nargs="+", default=[100_000, 1_000_000],
                    help="corpus sizes, pages over both snapshots (default: 10^5 and 10^6)")
    ap.add_argument("--runner", default="local", choices=["inline", "local", "spark"])
    ap.add_argument("--compare-runners", action="store_true",
                    help="run each web on the local runner and on Spark local[2] and compare their outputs "
                         "(compare_runs.py); exit 1 if they differ")
    ap.add_argument("--engine", type=engine_choice, action="append", default=[], metavar="STAGE=ENGINE",
                    help="this stage's engine instead of auto, on every runner (repeatable), e.g. links=memory: "
                         "on Spark links runs one job per power-iteration step")
    ap.add_argument("--keep", type=Path, help="work in this folder and keep it (default: a temporary one)")
    ap.add_argument("--stages-at-once", type=int, default=1, metavar="N",
                    help="the config's stages_at_once: independent stages run N at a time (default 1)")
    ap.add_argument("--detectors", nargs="+", metavar="NAME",
                    help="run only these detectors (default: all of scale_web's config)")
    ap.add_argument("--baseline", metavar="REV",
                    help="also run each web with git revision REV's code and print the ratios to it")
    args = ap.parse_args(argv)
    runners = ["local", "spark"] if args.compare_runners else [args.runner]
    same = True
    with tempfile.TemporaryDirectory(prefix="spamflow-scale-") as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        results: dict[str, list[dict]] = {r: [] for r in runners}
        bases: dict[str, list[dict]] = {r: [] for r in runners}
        tree = baseline_tree(args.baseline, folder) if args.baseline else None
        webs = []
        for pages in args.pages:
            web, info = make_web(pages, folder)
            webs.append(web)
            for runner in runners:
                if tree is not None:
                    bases[runner].append(run_web(pages, web, info, folder, runner, web / f"run-{runner}-base",
                                                 dict(args.engine), args.detectors, code=tree,
                                                 stages_at_once=args.stages_at_once))
                    print(json.dumps(bases[runner][-1]), file=sys.stderr)
                results[runner].append(run_web(pages, web, info, folder, runner, web / f"run-{runner}",
                                               dict(args.engine), args.detectors, stages_at_once=args.stages_at_once))
                print(json.dumps(results[runner][-1]), file=sys.stderr)
        for runner in runners:
            report(results[runner])
            for now, base in zip(results[runner], bases[runner]):
                compare_to_baseline(now, base, args.baseline)
        for web in webs if tree is not None else []:
            for runner in runners:
                print(f"\noutputs of {web.name}, runner {runner}: {args.baseline} (A) against this code (B):")
                same = compare_runs(web / f"run-{runner}-base", web / f"run-{runner}", Tolerance()) and same
        if args.compare_runners:
            for web in webs:
                print(f"\noutputs of {web.name}, local runner (A) against Spark local[2] (B):")
                same = compare_runs(web / "run-local", web / "run-spark", Tolerance()) and same
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
