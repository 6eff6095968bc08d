"""A stand-in ``hadoop`` command for mrjob's ``hadoop`` runner: the ``hadoop fs`` subcommands
mrjob calls, over a local folder that plays HDFS, and ``hadoop jar <streaming jar> ...``
run by the strict streaming emulation of :mod:`hadoop_streaming`.

Set by the test (``tests/test_hadoop_runner.py`` writes a ``bin/hadoop`` that execs this):

* ``HADOOP_STANDIN_HDFS``: the folder that is HDFS's root (``hdfs:///a/b`` and ``/a/b`` are
  ``$HADOOP_STANDIN_HDFS/a/b``, a relative ``a`` is ``/user/<user>/a``);
* ``HADOOP_STANDIN_TASKS``: where task attempts get their working directories;
* ``HADOOP_STANDIN_TASK_PATH``: the tasks' ``PATH`` (a ``python3`` there is the nodes' Python);
* ``HADOOP_STANDIN_SEED``: the emulation's seed;
* ``HADOOP_STANDIN_LOG``: one JSON line per invocation (its arguments; for a streaming step,
  what the emulation did), so that tests see what mrjob asked for.

Unknown subcommands and options fail loudly (exit 2), so that a command line mrjob builds
that this stand-in does not understand is seen rather than ignored.
"""

from __future__ import annotations

import fnmatch
import getpass
import json
import os
import shutil
import sys
import time
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlparse

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hadoop_streaming import Emulation, StreamingStep, TaskFailed  # noqa: E402

VERSION = "3.3.6"


def root() -> Path:
    return Path(os.environ["HADOOP_STANDIN_HDFS"])


def local(uri: str) -> Path:
    """The local path of an HDFS URI or path (``file://`` URIs are local files)."""
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        return Path(parsed.path)
    if parsed.scheme not in ("", "hdfs"):
        raise SystemExit(f"hadoop stand-in: no filesystem for {uri!r}")
    path = parsed.path if parsed.path.startswith("/") else f"/user/{getpass.getuser()}/{parsed.path}"
    return root() / path.lstrip("/")


def uri(path: Path) -> str:
    return "hdfs:///" + str(path.relative_to(root()))


def matches(pattern: str) -> list[Path]:
    """A glob over HDFS, as ``hadoop fs`` expands it."""
    target = local(pattern)
    if not any(c in str(target) for c in "*?["):
        return [target] if target.exists() else []
    base = target
    while any(c in base.name for c in "*?[") or any(c in str(base.parent) for c in "*?["):
        base = base.parent
    return sorted(p for p in base.rglob("*") if fnmatch.fnmatchcase(str(p), str(target)))


def ls_line(path: Path) -> str:
    st = path.stat()
    kind = "d" if path.is_dir() else "-"
    when = datetime.fromtimestamp(st.st_mtime, UTC).strftime("%Y-%m-%d %H:%M")
    return f"{kind}rw-r--r--   1 {getpass.getuser()} supergroup {st.st_size if kind == '-' else 0:>10} {when} {uri(path)}"


def fs(args: list[str]) -> int:
    cmd, rest = args[0], args[1:]
    flags = {a for a in rest if a.startswith("-")}
    paths = [a for a in rest if not a.startswith("-")]
    if cmd == "-ls":
        found = [m for p in paths for m in matches(p)]
        if not found:
            print(f"ls: `{paths[0]}': No such file or directory", file=sys.stderr)
            return 1
        for m in found:
            walk = sorted(m.rglob("*")) if m.is_dir() and "-R" in flags else sorted(m.iterdir()) if m.is_dir() else [m]
            for p in walk:
                print(ls_line(p))
        return 0
    if cmd == "-mkdir":
        for p in paths:
            local(p).mkdir(parents="-p" in flags, exist_ok="-p" in flags)
        return 0
    if cmd == "-put":
        src, dest = Path(paths[0]), local(paths[1])
        if dest.exists():
            print(f"put: `{paths[1]}': File exists", file=sys.stderr)
            return 1
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest)
        return 0
    if cmd in ("-cat", "-text"):
        found = [m for p in paths for m in matches(p) if m.is_file()]
        if not found:
            print(f"cat: `{paths[0]}': No such file or directory", file=sys.stderr)
            return 1
        for m in found:
            sys.stdout.buffer.write(m.read_bytes())
        return 0
    if cmd == "-du":
        for p in paths:
            for m in matches(p):
                size = sum(f.stat().st_size for f in ([m] if m.is_file() else m.rglob("*")) if f.is_file())
                print(f"{size}  {size}  {uri(m)}")
        return 0
    if cmd == "-rm":
        found = [m for p in paths for m in matches(p)]
        if not found and "-f" not in flags:
            print(f"rm: `{paths[0]}': No such file or directory", file=sys.stderr)
            return 1
        for m in found:
            shutil.rmtree(m) if m.is_dir() else m.unlink()
        return 0
    if cmd == "-touchz":
        for p in paths:
            local(p).parent.mkdir(parents=True, exist_ok=True)
            local(p).touch()
        return 0
    if cmd in ("-copyToLocal", "-get"):
        shutil.copyfile(local(paths[0]), paths[1])
        return 0
    print(f"hadoop stand-in: fs {cmd} is not implemented", file=sys.stderr)
    return 2


def _named(spec: str) -> tuple[Path, str]:
    """``uri#name`` of ``-files``/``-archives``."""
    path, _, name = spec.partition("#")
    return local(path), name or Path(path).name


def streaming_step(args: list[str]) -> StreamingStep:
    """``hadoop jar`` streaming arguments; unknown ones are an error."""
    step = StreamingStep(inputs=[], output=Path(), mapper="")
    it = iter(args)
    for opt in it:
        value = next(it)
        if opt == "-files":
            step.files.extend(_named(s) for s in value.split(","))
        elif opt == "-archives":
            step.archives.extend(_named(s) for s in value.split(","))
        elif opt == "-D":
            key, _, v = value.partition("=")
            step.jobconf[key] = v
        elif opt == "-cmdenv":
            key, _, v = value.partition("=")
            step.cmdenv[key] = v
        elif opt == "-input":
            found = [m for p in value.split(",") for m in matches(p)]
            if not found:
                raise SystemExit(f"Input path does not exist: {value}")
            for m in found:
                step.inputs.extend(sorted(f for f in m.rglob("*") if f.is_file() and not f.name.startswith(("_", ".")))
                                   if m.is_dir() else [m])
        elif opt == "-output":
            step.output = local(value)
            if step.output.exists():
                raise SystemExit(f"Output directory {value} already exists")
        elif opt in ("-mapper", "-combiner", "-reducer"):
            setattr(step, opt[1:], value)
        elif opt == "-inputformat":
            step.inputformat = value
        elif opt == "-numReduceTasks":
            step.jobconf["mapreduce.job.reduces"] = value
        else:
            raise SystemExit(f"hadoop stand-in: streaming option {opt} is not implemented")
    return step


def jar(args: list[str]) -> int:
    jar_path, rest = args[0], args[1:]
    if "streaming" not in Path(jar_path).name:
        print(f"hadoop stand-in: only the streaming jar runs here, not {jar_path}", file=sys.stderr)
        return 2
    step = streaming_step(rest)
    tasks = Path(os.environ["HADOOP_STANDIN_TASKS"])
    tasks.mkdir(parents=True, exist_ok=True)
    number = len(list(tasks.iterdir()))
    work = tasks / f"job_{number:04d}"
    emulation = Emulation(work, int(os.environ.get("HADOOP_STANDIN_SEED", "0")) * 1000 + number,
                          os.environ["HADOOP_STANDIN_TASK_PATH"].split(os.pathsep))
    try:
        trace = emulation.run_step(step)
    except TaskFailed as exc:
        _log({"jar": jar_path, "args": rest, "failed": str(exc)})
        when = datetime.now().strftime("%y/%m/%d %H:%M:%S")
        for line in str(exc).splitlines():  # log4j's layout, so that mrjob logs each line as an error
            print(f"{when} ERROR streaming.StreamJob: {line}", file=sys.stderr)
        print("Streaming Command Failed!", file=sys.stderr)
        return 1
    _log({"jar": jar_path, "args": rest, "trace": asdict(trace)})
    return 0


STARTED = time.monotonic()


def _log(entry: dict) -> None:
    entry["seconds"] = round(time.monotonic() - STARTED, 3)
    path = os.environ.get("HADOOP_STANDIN_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry) + "\n")


def main(argv: list[str]) -> int:
    if not argv:
        print("Usage: hadoop [--config confdir] COMMAND", file=sys.stderr)
        return 2
    if argv[0] == "version":
        print(f"Hadoop {VERSION}\nThis is a stand-in: {__file__}")
        return 0
    if argv[0] == "fs":
        _log({"fs": argv[1:]})
        return fs(argv[1:])
    if argv[0] == "jar":
        return jar(argv[1:])
    print(f"hadoop stand-in: {argv[0]} is not implemented", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
