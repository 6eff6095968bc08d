"""The one place that starts mrjob jobs.

Jobs stay plain mrjob scripts (one job per module, parameters as passthru args, no YAML);
this driver adds the runner, the runner's extra arguments from the config, and, for every
runner but ``inline``, a zip of the job's own package passed as ``--py-files``, so the same
job file runs on a laptop, on Spark and on Hadoop.  Output is streamed with ``cat_output``
into a local file (a local ``--output-dir`` breaks mrjob's Spark runner).
"""

from __future__ import annotations

import functools
import logging
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path

from mrjob.job import MRJob

from spamflow.atomic import atomic_path
from spamflow.errors import SpamflowError

logging.getLogger("mrjob.conf").setLevel(logging.ERROR)  # "No configs specified" on every --no-conf run


@functools.cache
def package_zip(package: str) -> Path:
    """A zip of an importable package, for ``--py-files`` (built once per process)."""
    module = sys.modules.get(package) or __import__(package)
    root = Path(module.__file__ or "").parent
    out = Path(tempfile.mkdtemp(prefix="spamflow-pyfiles-")) / f"{package}.zip"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(root.rglob("*.py")):
            zf.write(path, Path(package) / path.relative_to(root))
    return out


SORT_BUFFER = "512M"
"""GNU sort's memory on the local runner: beyond it, sort spills to mrjob's temporary folder.
Left to itself, sort sizes its buffer from the machine's memory (3.2 GB seen on 100,000 pages)."""


def local_sort_bin(job_class: type[MRJob]) -> str:
    """mrjob's own sort command for this job (whole lines if it sorts values, else a stable sort
    on the key alone), with its buffer capped at :data:`SORT_BUFFER`."""
    if job_class.SORT_VALUES:
        return f"sort -S {SORT_BUFFER}"
    return f"sort -t '\t' -k 1,1 -s -S {SORT_BUFFER}"


def _spark_is_local(runner_args: Sequence[str]) -> bool:
    args = list(runner_args)
    master = args[args.index("--spark-master") + 1] if "--spark-master" in args[:-1] else "local"
    return master.startswith("local")


def job_argv(job_class: type[MRJob], inputs: Sequence[Path | str], *, runner: str, args: Sequence[str] = (),
             runner_args: Sequence[str] = ()) -> list[str]:
    """The mrjob command line ``run_job`` starts ``job_class`` with."""
    argv = ["-r", runner, *runner_args, *map(str, args)]
    if runner in ("inline", "local"):
        argv[2:2] = ["--no-conf", "--quiet"]  # laptops: ignore ~/.mrjob.conf, no chatter; clusters read it
    if runner == "local" and sys.version_info < (3, 12):
        # mrjob imports distutils; setuptools' replacement for it adds ~0.1 s to each of a
        # job's dozen task processes, Python's own (there until 3.12) does not
        argv += ["--cmdenv", "SETUPTOOLS_USE_DISTUTILS=stdlib"]
    if runner == "local" and "--sort-bin" not in runner_args:
        argv += ["--sort-bin", local_sort_bin(job_class)]
    if runner == "spark" and "--python-bin" not in runner_args and _spark_is_local(runner_args):
        argv += ["--python-bin", sys.executable]  # local Spark workers: this interpreter, not python3 on PATH
    if runner != "inline":
        argv += ["--py-files", str(package_zip(job_class.__module__.split(".")[0]))]
    argv += [str(p) for p in inputs]
    return argv


def run_job(job_class: type[MRJob], inputs: Sequence[Path], output: Path, *, runner: str,
            args: Sequence[str] = (), runner_args: Sequence[str] = ()) -> Path:
    """Run ``job_class`` over ``inputs`` and write its output lines to ``output``."""
    argv = job_argv(job_class, inputs, runner=runner, args=args, runner_args=runner_args)
    job = job_class(args=argv)
    try:
        with job.make_runner() as mr_runner, atomic_path(output) as tmp:
            mr_runner.run()
            with open(tmp, "wb") as fh:
                for chunk in mr_runner.cat_output():
                    fh.write(chunk)
    except Exception as exc:
        raise SpamflowError(f"MapReduce job {job_class.__name__} failed on the {runner!r} runner: {exc}") from exc
    return output
