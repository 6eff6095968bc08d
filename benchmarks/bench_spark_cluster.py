"""The same web on the local runner, on Spark ``local[2]`` and on a two-worker Spark standalone
cluster on 127.0.0.1: wall and CPU per page of each, its Spark applications, and the fixed cost
of a run (issue 38, item 4).

Run from the repository root (``tests/`` must be importable: it holds the cluster starter)::

    PYTHONPATH=$PWD:$PWD/plugins:$PWD/workflows .venv/bin/python benchmarks/bench_spark_cluster.py \\
        --pages 10000 --keep /tmp/sparkbench

For each size it writes ``bench_scale.py``'s web (``scale_web.py``; kept and reused under
``--keep``), and runs ``spamflow run`` on it with ``bench_scale.py``'s config (every detector,
``workers: 2``, every ``engine: auto``) on each of ``--runners``: the ``local`` runner (the baseline, in
this same process and minutes); ``local-jobs``, the local runner with every stage's ``engine:
mapreduce``, which is what ``auto`` runs on a cluster runner (so the same jobs as the Spark runs,
where ``local`` keeps several stages in process); ``spark`` with ``--spark-master local[2]``; and ``spark``
with the master of a standalone cluster started here from the installed pyspark
(``tests/spark_cluster.py``: a master and two workers of one core and 1 GB each).  The runs
are one after the other, so the cluster's JVMs do nothing during the other two.

**CPU is everything the run used**: the ``spamflow run`` process and every process it started
(this process's children's resource usage: a process's own time and that of every descendant it
and its descendants waited for, Spark's driver JVM and its Python workers on ``local[2]``
included; the benchmark is the *subreaper* of what it starts, so a process whose parent ended
first is re-parented to it and reaped and counted here too), plus, on the standalone cluster, the master's and the workers' JVMs, which are not the
run's children: their own time and their reaped children's (each application's executor JVM and
its Python workers) from ``/proc/<pid>/stat``, the difference over the run, read once no executor
is left.  Each process is counted once: by the process that reaped it.
A sampler also reads every process of both trees every 0.5 s and sums each one's last own
CPU time: a lower bound (it misses the last half second of each process).  The count misses
PySpark's Python workers: their daemon ignores ``SIGCHLD``, so the kernel reaps them and their
time reaches no resource usage.  A run's **CPU s** is therefore the larger of the two (printed
beside each other: ``counted`` and ``sampled``).
``psutil`` is not a dependency: ``/proc`` gives the same figures (as ``bench_scale.py`` reads it).

Printed per runner: wall and CPU seconds, CPU milliseconds per page, the Spark applications
(the sum of run.json's ``mapreduce_applications``), the largest process (resident set, over the
run's tree and the cluster's JVMs), the load average over the run (the machine is shared: CPU per
page is the figure that compares), and CPU per page and wall as ratios to the local runner.
Then the **fixed cost** of a run on each Spark master: the start-up of one trivial application
(``MRHostEdges`` over an empty input through ``spamflow.mr.driver.run_job``, wall and CPU, mean
of ``--startup-runs``) times the run's applications, and the CPU per page above it.  Last,
``compare_runs.py`` on the local workdir against each Spark one (exit status 1 if an output
differs).

``JAVA_TOOL_OPTIONS`` is removed from the runs' environment: this measures the JVM defaults a
user gets (``tests/conftest.py`` sets faster-starting ones for tests only).  With ``--keep``,
each run's figures are written beside its workdir (``figures-<workdir>.json``) and a rerun reuses
them, so a crash or a later size loses nothing; ``--standalone-workdir`` lets a second invocation
run the cluster on the same web while a first runs the others (the WARC paths, which the page
table records, stay the same, so the outputs still compare).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "benchmarks"), str(REPO / "tests")]

from bench_scale import ENGINE_STAGES, _rss, _tree, make_web, scale_config  # noqa: E402
from compare_runs import Tolerance, compare_runs  # noqa: E402
from spark_cluster import Cluster, cluster_processes, why_no_cluster  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Runner:
    label: str
    runner: str
    args: tuple[str, ...]
    workdir: str
    """The run's workdir's name in the web's folder (its figures: ``figures-<workdir>.json`` beside it)."""
    engines: tuple[tuple[str, str], ...] = ()
    """``(stage, engine)`` set in the config instead of ``auto``."""


CLUSTER_ENGINES = tuple((stage, "mapreduce") for stage in ("parse", "quilt", *ENGINE_STAGES))
"""What ``engine: auto`` runs on a cluster runner: every stage's jobs."""
LOCAL = Runner("local", "local", (), "run-local")
LOCAL_JOBS = Runner("local-jobs", "local", (), "run-local-jobs", CLUSTER_ENGINES)
LOCAL2 = Runner("spark-local2", "spark", ("--spark-master", "local[2]"), "run-spark-local2")
STANDALONE = "spark-standalone"
RUNNERS = ("local", "local-jobs", "spark-local2", STANDALONE)
NO_CLUSTER = Cluster("", ())
TITLE = {"local": "local runner", "local-jobs": "local runner, the jobs", "spark-local2": "Spark local[2]",
         STANDALONE: "Spark standalone, 2 workers"}


def cpu_ticks(pid: int) -> tuple[int, int]:
    """A process's own CPU ticks (user + system) and its waited-for children's, or (0, 0) if gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14])
    except (OSError, IndexError, ValueError):
        return 0, 0


def started_and_own(pid: int) -> tuple[int, int] | None:
    """A process's start time and own CPU ticks, from one read (None if it is gone): two reads
    could see it end between them and key its time twice."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return int(fields[19]), int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return None


def cluster_total(roots: Sequence[int]) -> float:
    """CPU seconds of the cluster's JVMs and of every child they reaped, so far."""
    return sum(sum(cpu_ticks(pid)) for pid in roots) / TICK


def wait_for_no_executors(roots: Sequence[int], timeout: float = 120.0) -> None:
    """Until the cluster's JVMs have no child left (an application's executors are reaped by their
    worker when it ends, and only then counted in its children's time)."""
    deadline = time.time() + timeout
    while any(len(_tree(pid)) > 1 for pid in roots) and time.time() < deadline:
        time.sleep(0.5)


PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h


def become_subreaper() -> None:
    """Make this process the one that processes the measured ones leave behind are re-parented to
    (instead of init), so that their CPU time is reaped here and counted: a process whose parent
    ends first is in no ancestor's resource usage (on ``local[2]`` at 10^4 pages ``os.wait4`` of
    the run saw 497 CPU s where its processes' own times, sampled, summed to at least 677)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def adopted(keep: Sequence[int]) -> list[int]:
    """This process's children but ``keep``: orphans re-parented here (:func:`become_subreaper`)."""
    me, out = str(os.getpid()), []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and int(entry.name) not in keep:
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as fh:
                    if fh.read().rsplit(b")", 1)[1].split()[1].decode() == me:
                        out.append(int(entry.name))
            except (OSError, IndexError):
                continue
    return out


def reap(pids: Sequence[int]) -> None:
    """Reap those of ``pids`` that have ended (their CPU then counts in this process's children's)."""
    for pid in pids:
        try:
            os.wait4(pid, os.WNOHANG)
        except ChildProcessError:
            pass


class Watcher(threading.Thread):
    """Every 0.5 s: the largest resident set among the watched trees (``roots`` and the orphans
    adopted meanwhile), each process's last own CPU time (the lower bound of the docstring), and
    the load average; reaps the adopted orphans that have ended."""

    def __init__(self, roots: Sequence[int], keep: Sequence[int]) -> None:
        super().__init__(daemon=True)
        self.roots, self.keep = list(roots), list(keep)
        self.peak_rss = 0
        self.own: dict[tuple[int, int], int] = {}
        self.loads: list[float] = []
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.5):
            self.loads.append(os.getloadavg()[0])
            orphans = adopted(self.keep)
            for root in [*self.roots, *orphans]:
                for pid in _tree(root):
                    self.peak_rss = max(self.peak_rss, _rss(pid))
                    seen = started_and_own(pid)
                    if seen is not None:
                        self.own[pid, seen[0]] = seen[1]
            reap(orphans)

    def own_seconds(self, pids: Sequence[int] = ()) -> float:
        """The sampled own CPU seconds of every process seen, but ``pids``."""
        return sum(t for (pid, _), t in self.own.items() if pid not in pids) / TICK


@dataclass
class Measured:
    wall_s: float
    driver_cpu_s: float
    """The command's process, its descendants and the orphans they left (reaped here)."""
    cluster_cpu_s: float
    sampled_cpu_s: float
    peak_rss: int
    load: float

    @property
    def cpu_s(self) -> float:
        return self.driver_cpu_s + self.cluster_cpu_s


def measure(argv: Sequence[str], env: dict[str, str], log: Path, cluster: Sequence[int]) -> tuple[int, Measured]:
    """Run ``argv`` and count the CPU of everything it used (the module docstring): exit status, figures."""
    wait_for_no_executors(cluster)
    keep = [*cluster]
    reap(adopted(keep))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    cluster_before = cluster_total(cluster)
    roots_own_before = sum(cpu_ticks(pid)[0] for pid in cluster) / TICK
    started = time.time()
    with open(log, "wb") as err:
        proc = subprocess.Popen(list(argv), env=env, stdout=subprocess.DEVNULL, stderr=err)
        watcher = Watcher([proc.pid, *cluster], keep=[*keep, proc.pid])
        watcher.start()
        _, status, _ = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.time() - started
    wait_for_no_executors(cluster)
    deadline = time.time() + 60
    while adopted(keep) and time.time() < deadline:  # orphans still ending
        time.sleep(0.5)
    watcher.done.set()
    watcher.join()
    reap(adopted(keep))
    left = sum(sum(cpu_ticks(pid)) for pid in adopted(keep)) / TICK  # still alive: counted by their own
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    driver = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime + left
    roots_own = sum(cpu_ticks(pid)[0] for pid in cluster) / TICK - roots_own_before
    return proc.returncode, Measured(
        wall, driver, cluster_total(cluster) - cluster_before, watcher.own_seconds(cluster) + roots_own,
        watcher.peak_rss, statistics.fmean(watcher.loads) if watcher.loads else 0.0)


def measured_run(pages: int, web: Path, runner: Runner, cluster: Sequence[int]) -> dict:
    """``spamflow run`` on ``web`` with ``runner``: its figures (the module docstring's)."""
    workdir = web / runner.workdir
    config = web / f"scale-{runner.workdir}.yaml"
    engines = dict(runner.engines)
    text = json.loads(scale_config(pages, web, workdir, runner.runner, engines, runner_args=runner.args))
    if "quilt" in engines:  # not among bench_scale's ENGINE_STAGES (its engine is left to the default there)
        text["detectors"]["quilt"]["engine"] = engines["quilt"]
    config.write_text(json.dumps(text, indent=1))
    tmp = web / f"tmp-{runner.workdir}"
    tmp.mkdir(exist_ok=True)
    log = web / f"{runner.workdir}.log"
    status, m = measure([sys.executable, "-m", "spamflow_workflows", "run", "-c", str(config), "--no-progress"],
                        run_env(TMPDIR=str(tmp)), log, cluster)
    if status != 0:
        said = [line for line in log.read_text(errors="replace").splitlines() if line.startswith("spamflow:")]
        raise SystemExit(f"spamflow run failed ({status}) on {pages} pages, {runner.label}: "
                         f"{' / '.join(said[-2:]) or 'no message'}; see {log}")
    stages = json.loads((workdir / "run.json").read_text())["stages"]
    return {"pages": pages, "runner": runner.label, "args": list(runner.args), "wall_s": m.wall_s,
            "driver_cpu_s": m.driver_cpu_s, "cluster_cpu_s": m.cluster_cpu_s, "cpu_s": m.cpu_s,
            "sampled_cpu_s": m.sampled_cpu_s,
            "applications": sum(int(s.get("mapreduce_applications") or 0) for s in stages.values()),
            "peak_rss": m.peak_rss, "load": m.load,
            "stage_seconds": {name: float(s.get("seconds") or 0.0) for name, s in stages.items()}}


def run_env(**extra: str) -> dict[str, str]:
    """The runs' environment: the JVM defaults a user gets, Spark on loopback."""
    env = {k: v for k, v in os.environ.items() if k != "JAVA_TOOL_OPTIONS"}
    return {**env, "SPARK_LOCAL_IP": "127.0.0.1", **extra}


TRIVIAL = """\
import sys
from pathlib import Path
from spamflow.mr.driver import run_job
from spamflow_links.mr_host_edges import MRHostEdges
folder = Path(sys.argv[2])
(folder / "empty.txt").write_text("")
run_job(MRHostEdges, [folder / "empty.txt"], folder / "out.jsonl", runner="spark",
        runner_args=["--spark-master", sys.argv[1]])
"""


def trivial_application(master: str, folder: Path, cluster: Sequence[int]) -> Measured:
    """One application that does nothing: ``MRHostEdges`` over an empty input on ``master``,
    through ``run_job`` in a process of its own, measured as a run is."""
    status, m = measure([sys.executable, "-c", TRIVIAL, master, str(folder)], run_env(), folder / "trivial.log",
                        cluster)
    if status != 0:
        raise SystemExit(f"the trivial application failed on {master}; see {folder / 'trivial.log'}")
    return m


def start_up(master: str, label: str, folder: Path, cluster: Sequence[int], runs: int) -> dict:
    measured = [trivial_application(master, folder, cluster) for _ in range(runs)]
    walls, cpus = [m.wall_s for m in measured], [max(m.cpu_s, m.sampled_cpu_s) for m in measured]
    return {"runner": label, "runs": runs, "wall_s": statistics.fmean(walls), "cpu_s": statistics.fmean(cpus),
            "walls": list(walls), "cpus": list(cpus), "load": os.getloadavg()[0]}


def web_of(pages: int, folder: Path) -> tuple[Path, dict]:
    """bench_scale's web of ``pages`` pages under ``folder``, written once (its figures beside it)."""
    web = folder / f"web-{pages}"
    if (web / "bench-info.json").exists():
        return web, json.loads((web / "bench-info.json").read_text())
    web, info = make_web(pages, folder)
    (web / "bench-info.json").write_text(json.dumps(info))
    return web, info


def the_cpu(figures: dict) -> float:
    """A run's CPU seconds: the larger of the counted and the sampled figures.  PySpark's daemon,
    which forks the Python workers, ignores ``SIGCHLD`` (``pyspark/daemon.py``), so the kernel
    reaps its workers itself and their CPU time reaches no one's resource usage: on Spark the
    count misses the Python workers' time, and the sample (every process's own time, read every
    0.5 s; workers are reused within an application, so it misses little of theirs) is the
    better figure."""
    return max(figures["cpu_s"], figures.get("sampled_cpu_s", 0.0))


def report(info: dict, runs: dict[str, dict], startups: dict[str, dict]) -> None:
    base, jobs = runs.get("local"), runs.get("local-jobs")
    cpu = {label: the_cpu(r) for label, r in runs.items()}
    print(f"\n{info['pages']:,} pages, {info['hosts']:,} hosts, {info['input_bytes'] / 2**20:,.0f} MiB of WARC "
          f"(CPU: the run's process tree and the cluster's JVMs; ratios to the local runner, and to the local "
          f"runner running the jobs a cluster runs)")
    print(f"  {'runner':<28} {'wall s':>8} {'CPU s':>8} {'counted':>8} {'driver':>8} {'cluster':>8} {'sampled':>8} "
          f"{'ms CPU/page':>11} {'apps':>5} {'largest':>9} {'load':>5} {'CPU/page x':>10} {'wall x':>7} "
          f"{'x jobs':>7}")
    for label in RUNNERS:
        r = runs.get(label)
        if r is None:
            continue
        ratio = f"{cpu[label] / cpu['local']:>10.2f}" if base else f"{'-':>10}"
        wall = f"{r['wall_s'] / base['wall_s']:>7.2f}" if base else f"{'-':>7}"
        to_jobs = f"{cpu[label] / cpu['local-jobs']:>7.2f}" if jobs else f"{'-':>7}"
        print(f"  {TITLE[label]:<28} {r['wall_s']:>8,.0f} {cpu[label]:>8,.0f} {r['cpu_s']:>8,.0f} "
              f"{r['driver_cpu_s']:>8,.0f} {r['cluster_cpu_s']:>8,.0f} {r['sampled_cpu_s']:>8,.0f} "
              f"{1000 * cpu[label] / r['pages']:>11.2f} "
              f"{r['applications']:>5} {r['peak_rss'] / 2**30:>7.2f} G {r['load']:>5.1f} {ratio} {wall} {to_jobs}")
    for label, s in startups.items():
        r = runs.get(label)
        if r is None:
            continue
        fixed_cpu, fixed_wall = r["applications"] * s["cpu_s"], r["applications"] * s["wall_s"]
        above = 1000 * (cpu[label] - fixed_cpu) / r["pages"]
        vs = "".join(f", {above / (1000 * the_cpu(b) / b['pages']):.2f}x the {name}'s"
                     for name, b in (("local runner", base), ("local runner's jobs", jobs)) if b)
        print(f"  {TITLE[label]}: fixed cost {r['applications']} applications x ({s['wall_s']:.1f} s wall, "
              f"{s['cpu_s']:.1f} CPU s) = {fixed_wall:,.0f} s wall, {fixed_cpu:,.0f} CPU s "
              f"({100 * fixed_cpu / cpu[label]:.0f} % of the run's CPU); above it {above:.2f} ms CPU per page{vs}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, nargs="+", default=[10_000, 100_000],
                    help="corpus sizes, pages over both snapshots (default: 10^4 and 10^5)")
    ap.add_argument("--runners", nargs="+", choices=RUNNERS, default=list(RUNNERS))
    ap.add_argument("--startup-runs", type=int, default=2, metavar="N",
                    help="trivial applications per Spark master for the start-up (0: not measured)")
    ap.add_argument("--keep", type=Path, help="work in this folder and keep it; reuse its webs and figures")
    ap.add_argument("--standalone-workdir", default="run-spark-standalone", metavar="NAME",
                    help="the standalone run's workdir in the web's folder, e.g. for a second invocation that "
                         "measures the cluster on the same web while a first one runs the others")
    args = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the cluster's JVMs (finally) when killed
    become_subreaper()
    workdirs = {"local": LOCAL.workdir, "local-jobs": LOCAL_JOBS.workdir, "spark-local2": LOCAL2.workdir,
                STANDALONE: args.standalone_workdir}
    if STANDALONE in args.runners and why_no_cluster():
        raise SystemExit(f"no standalone cluster: {why_no_cluster()}")
    same = True
    with tempfile.TemporaryDirectory(prefix="spamflow-sparkbench-") as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        print(f"load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
        webs = {pages: web_of(pages, folder) for pages in args.pages}
        results: dict[int, dict[str, dict]] = {pages: {} for pages in args.pages}
        startups: dict[str, dict] = {}
        for pages, (web, _info) in webs.items():
            for label in args.runners:
                saved = web / f"figures-{workdirs[label]}.json"
                if saved.exists():
                    results[pages][label] = json.loads(saved.read_text())
        todo = [(p, label) for p in args.pages for label in args.runners if label not in results[p]]
        if args.startup_runs and "spark-local2" in args.runners:
            startups["spark-local2"] = start_up("local[2]", "spark-local2", Path(tempfile.mkdtemp(dir=folder)), (),
                                                args.startup_runs)
            print(json.dumps(startups["spark-local2"]), file=sys.stderr)
        need_cluster = STANDALONE in args.runners and (args.startup_runs or any(lb == STANDALONE for _, lb in todo))
        cluster_folder = Path(tempfile.mkdtemp(prefix="cluster-", dir=folder))
        with cluster_processes(cluster_folder) if need_cluster else contextlib.nullcontext(NO_CLUSTER) as cluster:
            for pages, label in todo:
                runner = {"local": LOCAL, "local-jobs": LOCAL_JOBS, "spark-local2": LOCAL2}.get(label) or \
                    Runner(STANDALONE, "spark", ("--spark-master", cluster.master), args.standalone_workdir)
                roots = cluster.pids if label == STANDALONE else ()
                results[pages][label] = measured_run(pages, webs[pages][0], runner, roots)
                (webs[pages][0] / f"figures-{runner.workdir}.json").write_text(json.dumps(results[pages][label]))
                print(json.dumps(results[pages][label]), file=sys.stderr)
            if need_cluster and args.startup_runs:
                startups[STANDALONE] = start_up(cluster.master, STANDALONE, Path(tempfile.mkdtemp(dir=folder)),
                                                cluster.pids, args.startup_runs)
                print(json.dumps(startups[STANDALONE]), file=sys.stderr)
        for label, s in startups.items():
            print(f"\nstart-up of one trivial application on {TITLE[label]} (MRHostEdges over an empty input, "
                  f"{s['runs']} runs): {s['wall_s']:.1f} s wall, {s['cpu_s']:.1f} CPU s "
                  f"(runs: {', '.join(f'{w:.1f} s / {c:.1f} CPU s' for w, c in zip(s['walls'], s['cpus']))}; "
                  f"load {s['load']:.1f})")
        for pages, (web, info) in webs.items():
            report(info, results[pages], startups)
            for label in args.runners:
                if label != "local" and "local" in args.runners:
                    print(f"\noutputs of {web.name}, local runner (A) against {TITLE[label]} (B):")
                    same = compare_runs(web / LOCAL.workdir, web / workdirs[label], Tolerance()) and same
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
