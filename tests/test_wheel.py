"""The wheel built from a checkout is what a cluster's nodes install (spamflow is not on
PyPI; docs/running-mapreduce.md ships it with an EMR bootstrap action): it must hold every
job module, its package's code and package data, and the job modules must import from the
installed wheel alone.  Built from a copy of the checkout (a build writes ``build/`` and
``*.egg-info`` beside the sources), with this venv's setuptools (no download)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import hadoop_node
import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("spamflow", "plugins", "workflows", "pyproject.toml", "README.md")


def _job_modules() -> list[str]:
    """Every ``mr_*.py`` of the checkout, as the path it has inside a wheel."""
    found = [p.relative_to(ROOT) for p in (ROOT / "spamflow").rglob("mr_*.py")]
    found += [p.relative_to(ROOT / "plugins") for p in (ROOT / "plugins").rglob("mr_*.py")]
    return sorted(str(p) for p in found)


@pytest.mark.slow
def test_the_wheel_holds_and_imports_every_job(tmp_path):
    checkout = tmp_path / "checkout"
    for name in SOURCES:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, checkout / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            checkout.mkdir(exist_ok=True)
            shutil.copy(src, checkout / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(tmp_path / "dist"), str(checkout)], check=True, capture_output=True, timeout=600)
    [wheel] = (tmp_path / "dist").glob("spamflow-*-py3-none-any.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    jobs = _job_modules()
    assert len(jobs) >= 17 and set(jobs) <= names, sorted(set(jobs) - names)
    assert {"spamflow/configs/demo.yaml", "spamflow_quilt/plugin.py", "spamflow_workflows/cli.py"} <= names

    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(wheel)],
                   check=True, capture_output=True, timeout=600)
    python = hadoop_node.node_python(tmp_path / "node") / "python"  # this venv's libraries, not its spamflow
    modules = [j.removesuffix(".py").replace("/", ".") for j in jobs]
    code = ("import importlib, sys\n"
            f"mods = [importlib.import_module(m) for m in {modules!r}]\n"
            "print(sorted({m.__file__.split('/site/')[0] for m in mods}))")
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True, timeout=600, cwd=site,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(site)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == repr([str(tmp_path)])  # every module from the installed wheel
