import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

if os.environ.get("PYTEST_XDIST_WORKER"):
    # each of pytest-xdist's workers shares the cores with the others: OpenMP (scikit-learn's
    # histogram boosting, forests) and BLAS on one thread per worker and in the commands it
    # starts.  With a thread per core in every worker, their spin-waits made classify's
    # tests 5-10x slower on two cores.  Results do not depend on it (floats are compared to a
    # stated tolerance).
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")
# the suite writes bytecode (``__pycache__``, ignored by git) even where Python is told not to
# (PYTHONDONTWRITEBYTECODE, set on this machine): otherwise each of its ~900 Python processes
# (the commands it runs, mrjob's tasks, Spark's workers) compiles spamflow's modules again, and
# each xdist worker rewrites every test module's asserts again (collection 9.6 -> 5.7 CPU s,
# `spamflow --help` 1.15 -> 0.97 CPU s).  Set here, before pytest-xdist starts its workers.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False
# every JVM the tests start (spark-submit's launcher and driver, the standalone master and
# workers) compiles with the client compiler only and collects with the serial collector:
# the tests' Spark applications run for seconds, so the server compiler's work never pays
# back (a one-line mrjob job on local[2]: 11.7 -> 7.9 CPU s).  Outputs do not depend on it.
os.environ.setdefault("JAVA_TOOL_OPTIONS", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"
sys.path.insert(0, str(Path(__file__).parent))


DEMO_FIXTURES = frozenset({"demo_once", "demo_no_crawl_once", "demo_model"})
END_TO_END_FIXTURES = DEMO_FIXTURES | {"luigid", "s3"}
"""Fixtures that start a whole demo run, a luigid or an S3 server: a test using one is
``slow`` (left out of the quick tier, ``-m "not slow"``) without saying so itself."""


def pytest_collection_modifyitems(config, items) -> None:
    """Tests using an end-to-end fixture are marked ``slow``; then the heaviest scopes of the
    scheduler below come first (the longest-first rule: the last scopes a worker takes are
    the short ones, so no worker idles while the other runs a Spark cluster).  A scope's
    weight is its number of ``slow`` tests (each a demo, a server, Spark or seconds of work)
    before its number of tests; ties keep the collection order.  Every worker computes the
    same order from the same files, as pytest-xdist requires."""
    for item in items:
        if END_TO_END_FIXTURES & set(item.fixturenames):
            item.add_marker(pytest.mark.slow)
    demo = demo_tests()
    scope_of = {id(item): _scope(item.nodeid, demo) for item in items}
    weight: dict[str, list[int]] = {}
    for item in items:
        w = weight.setdefault(scope_of[id(item)], [0, 0])
        w[0] -= item.get_closest_marker("slow") is not None
        w[1] -= 1
    first = {scope: i for i, scope in reversed(list(enumerate(scope_of[id(item)] for item in items)))}
    items.sort(key=lambda item: (*weight[scope_of[id(item)]], first[scope_of[id(item)]]))


def _scope(nodeid: str, demo: frozenset[tuple[str, str]]) -> str:
    """The scheduler's unit of a test: ``demo`` for a test on a shared demo run, else its module."""
    module, _, rest = nodeid.partition("::")
    return "demo" if (Path(module).name, rest.split("[")[0]) in demo else module


def demo_tests() -> frozenset[tuple[str, str]]:
    """(module file name, test function) of every test that uses a shared demo run, directly
    or through a fixture of its module, read from the test files' source (the scheduler
    below sees only node ids)."""
    import ast

    found = set()
    for path in Path(__file__).parent.glob("test_*.py"):
        functions = [node for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                     if isinstance(node, ast.FunctionDef)]
        uses = {f.name: {a.arg for a in f.args.args} for f in functions}
        demo = set(DEMO_FIXTURES)
        while True:  # module fixtures made from a demo fixture, and fixtures made from those
            more = {name for name, args in uses.items() if args & demo} - demo
            if not more:
                break
            demo |= more
        found |= {(path.name, name) for name in demo if name.startswith("test_")}
    return frozenset(found)


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_make_scheduler(config, log):
    """pytest-xdist (``-n auto``, the default in pyproject.toml) sends a module's tests to one
    worker, so a module-scoped fixture is built once, and every test using a shared demo run
    to the same worker, so each demo runs once.  (Its own ``--dist loadgroup`` does this with
    marks, but silently stops grouping on pytest >= 9.2: pytest-dev/pytest-xdist#1386.)"""
    from xdist.scheduler import LoadScopeScheduling

    demo = demo_tests()
    config.option.loadscopereorder = False  # keep the heaviest-first order of the collection

    class ModulesAndTheDemo(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _scope(nodeid, demo)

    return ModulesAndTheDemo(config, log)


@pytest.fixture
def plugins():
    from spamflow.plugins import build_plugins

    return build_plugins()


def shared_data(*parts: str) -> Path:
    """A path under ../shared/data, or skip the test saying what is missing."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"needs {path} (the shared real-data folder beside the repo); it is absent here")
    return path


@pytest.fixture(scope="session")
def demo_once(tmp_path_factory) -> dict:
    """One `spamflow demo` run, through a real luigid, shared by the detectors' demo tests,
    which only read its outputs (each used to run the whole DAG again): ``{"workdir",
    "manifest", "luigid_done"}``, the manifest as run.json was right after the demo and the
    tasks luigid listed as DONE then."""
    base = tmp_path_factory.mktemp("demo-once")
    with running_luigid(base) as port:
        manifest = _run_demo(base / "demo", "--scheduler-host", "127.0.0.1", "--scheduler-port", str(port))
        done = luigid_tasks(port, "DONE")
    return {"workdir": base / "demo", "manifest": manifest, "luigid_done": done}


@pytest.fixture(scope="session")
def demo_no_crawl_once(tmp_path_factory) -> dict:
    """One ``spamflow demo --no-crawl`` run (the generated WARCs read directly) shared by the
    tests that compare it with the crawled demo and with the same demo on an S3 workdir:
    ``{"workdir", "manifest", "cache"}``, ``cache`` its XDG_CACHE_HOME (a local workdir
    caches nothing there)."""
    base = tmp_path_factory.mktemp("demo-no-crawl")
    workdir, cache = base / "no-crawl", base / "cache"
    manifest = _run_demo(workdir, "--no-crawl", env={**os.environ, "XDG_CACHE_HOME": str(cache)})
    return {"workdir": workdir, "manifest": manifest, "cache": cache}


@pytest.fixture(scope="session")
def demo_model(demo_once, tmp_path_factory) -> Path:
    """``spamflow train -c`` on the shared demo run with the demo's labels, trained on 2026-01
    (the classify stage's model, trained again), once for the tests that score with it: its
    path (``model.skops``, with ``model.skops.statistics/`` beside it)."""
    from spamflow.cli import demo_config_path

    labels = Path(demo_once["manifest"]["stages"]["demo"]["outputs"]["labels"]) / "hosts.tsv"
    model = tmp_path_factory.mktemp("demo-model") / "model.skops"
    out = subprocess.run([sys.executable, "-m", "spamflow_workflows", "train", "-c", str(demo_config_path()),
                          "--workdir", str(demo_once["workdir"]), "--labels", str(labels), "--snapshot", "2026-01",
                          "-o", str(model)], capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stdout + out.stderr
    return model


def _run_demo(workdir: Path, *extra: str, env: dict[str, str] | None = None) -> dict:
    """``spamflow demo --workdir workdir *extra``, which must succeed: its run.json."""
    out = subprocess.run([sys.executable, "-m", "spamflow_workflows", "demo", "--workdir", str(workdir), "--no-progress",
                          *extra], capture_output=True, text=True, timeout=900, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    return json.loads((workdir / "run.json").read_text())


def assert_close(a, b, atol: float = 1e-12, where: str = "") -> None:
    """Equal JSON-like values (dicts, lists, strings, numbers) or Arrow tables, floats within
    ``atol``: results that went through BLAS, threads or another block size are compared to a
    stated tolerance, never bit for bit."""
    import math

    if hasattr(a, "to_pylist") and hasattr(b, "to_pylist"):
        assert a.schema == b.schema, where
        a, b = a.to_pylist(), b.to_pylist()
    if isinstance(a, float) or isinstance(b, float):
        assert isinstance(a, int | float) and isinstance(b, int | float), f"{where}: {a!r} != {b!r}"
        assert (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=0, abs_tol=atol), \
            f"{where}: {a!r} != {b!r} (atol {atol})"
    elif isinstance(a, dict) and isinstance(b, dict):
        assert sorted(a) == sorted(b), f"{where}: keys {sorted(a)} != {sorted(b)}"
        for key in a:
            assert_close(a[key], b[key], atol, f"{where}.{key}")
    elif isinstance(a, list | tuple) and isinstance(b, list | tuple):
        assert len(a) == len(b), f"{where}: {len(a)} != {len(b)} items"
        for i, (x, y) in enumerate(zip(a, b)):
            assert_close(x, y, atol, f"{where}[{i}]")
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


def ingest_and_parse(tmp_path: Path, paths: list[Path]):
    """The ingest and parse stages in process over ``paths``: (page rows, ingest result, parse result)."""
    import pyarrow.dataset as ds

    from spamflow.detector import RunSettings, StageContext, StageOutputs
    from spamflow.stages.ingest import IngestParams, IngestStage, WarcFile
    from spamflow.stages.parse import ParseParams, ParseStage

    settings = RunSettings(progress=False)
    ingest_dir, parse_dir = tmp_path / "ingest", tmp_path / "parse"
    ingest_dir.mkdir()
    parse_dir.mkdir()
    warcs = tuple(WarcFile(path=str(p), bytes=p.stat().st_size, mtime_ns=0) for p in paths)
    ingested = IngestStage().run(StageContext(IngestParams(files=warcs), {}, ingest_dir, settings))
    upstream = StageOutputs("ingest", ingest_dir, {k: ingest_dir / v for k, v in ingested.outputs.items()}, {})
    parsed = ParseStage().run(StageContext(ParseParams(), {"ingest": upstream}, parse_dir, settings))
    rows = ds.dataset(parse_dir / parsed.outputs["pages"]).to_table().to_pylist()
    return rows, ingested, parsed


def spamflow_exe() -> str:
    exe = shutil.which("spamflow") or str(Path(sys.executable).parent / "spamflow")
    return exe


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def luigid(tmp_path):
    with running_luigid(tmp_path) as port:
        yield port


@contextlib.contextmanager
def running_luigid(folder: Path):
    """A real luigid on 127.0.0.1 (its state and logs in ``folder``): its port."""
    port = _free_port()
    exe = Path(sys.executable).parent / "luigid"
    proc = subprocess.Popen([str(exe), "--address", "127.0.0.1", "--port", str(port),
                             "--state-path", str(folder / "luigi-state.pickle"), "--logdir", str(folder)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/task_list", timeout=1)
            break
        except OSError:
            time.sleep(0.2)
    else:
        proc.kill()
        pytest.fail("luigid did not start on 127.0.0.1")
    try:
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def luigid_tasks(port: int, status: str) -> dict:
    query = urllib.request.quote(json.dumps({"status": status, "upstream_status": "", "search": ""}))
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/task_list?data={query}", timeout=5) as r:
        return json.load(r)["response"]


@pytest.fixture
def s3():
    """moto's real S3 server on 127.0.0.1 with a bucket ``crawl``: ``(boto3 client, env)``, env
    the AWS variables that point a client (s3fs, a ``spamflow`` subprocess) at it."""
    moto_server = pytest.importorskip("moto.server", reason="moto[server] (test extra) runs the S3 server")
    boto3 = pytest.importorskip("boto3", reason="boto3 (with moto) fills the bucket")
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    env = {"AWS_ENDPOINT_URL": f"http://{host}:{port}", "AWS_ACCESS_KEY_ID": "testing",
           "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}
    client = boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"], region_name="us-east-1",
                          aws_access_key_id="testing", aws_secret_access_key="testing")
    client.create_bucket(Bucket="crawl")
    yield client, env
    server.stop()


@pytest.fixture
def s3_runs_bucket(s3, monkeypatch):
    """The S3 server with an empty bucket ``runs`` (a remote workdir's), its variables set in
    this process: ``(boto3 client, env)``."""
    client, env = s3
    client.create_bucket(Bucket="runs")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return client, env
