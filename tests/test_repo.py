"""The repository keeps its promises: README commands, CI, docs that match the code, lint."""

from __future__ import annotations

import inspect
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from spamflow import hookspecs
from spamflow.config import ConfigModel

ROOT = Path(__file__).resolve().parents[1]


def _readme_commands() -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    return [line for block in blocks for line in block.splitlines() if line.startswith("python3 -m venv")]


def test_readme_has_the_two_commands_and_ci_runs_the_test_one():
    demo, tests = _readme_commands()
    assert "spamflow demo" in demo and "pytest" in tests
    assert tests in (ROOT / ".ci" / "run").read_text().splitlines()


def _hook_signatures() -> dict[str, str]:
    return {name: f"{name}({', '.join(inspect.signature(fn).parameters)})"
            for name, fn in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("spamflow_")}


def test_every_hook_is_documented_with_its_exact_signature():
    doc = (ROOT / "docs" / "plugins.md").read_text()
    for signature in _hook_signatures().values():
        assert f"### `{signature}`" in doc, f"docs/plugins.md lacks a '### `{signature}`' heading"


def test_every_hook_has_a_test():
    tests = "\n".join(p.read_text() for p in (ROOT / "tests").glob("test_*.py") if p.name != "test_repo.py")
    for name in _hook_signatures():
        assert name in tests, f"no test mentions the hook {name}"


def _config_keys(model) -> set[str]:
    keys = set()
    for name, field in model.model_fields.items():
        keys.add(name)
        from spamflow.config import _model_in

        inner = _model_in(field.annotation)
        if inner:
            keys |= _config_keys(inner)
    return keys


def test_config_doc_names_every_key():
    doc = (ROOT / "docs" / "config.md").read_text()
    missing = sorted(k for k in _config_keys(ConfigModel) if f"`{k}`" not in doc and f"`{k}:" not in doc
                     and not re.search(rf"`[\w.]*\b{k}\b", doc))
    assert not missing, f"docs/config.md does not name these config keys: {missing}"


@pytest.mark.skipif(not shutil.which("ruff") and not (Path(sys.executable).parent / "ruff").exists(),
                    reason="ruff is not installed (pip install -e '.[test]')")
def test_ruff_is_clean():
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    out = subprocess.run([ruff, "check", "spamflow", "plugins", "workflows", "tests", "benchmarks"],
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.skipif(not (Path(sys.executable).parent / "mypy").exists() and not shutil.which("mypy"),
                    reason="mypy is not installed (pip install -e '.[test]')")
@pytest.mark.slow
def test_mypy_is_clean():
    mypy = str(Path(sys.executable).parent / "mypy") if (Path(sys.executable).parent / "mypy").exists() else "mypy"
    out = subprocess.run([mypy, "spamflow", "workflows/spamflow_workflows", "plugins/spamflow_obvious",
                          "plugins/spamflow_quilt", "plugins/spamflow_hss",
                          "plugins/spamflow_links", "plugins/spamflow_content",
                          "plugins/spamflow_spin", "plugins/spamflow_ids", "plugins/spamflow_ensemble"],
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
