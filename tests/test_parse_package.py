"""The ingest/parse code is one package, ``spamflow/parse/`` (issue "Architecture"): the top of
``spamflow/`` holds no archive or HTML reading, the package is pure (no Luigi, no stage), it is
packaged, and the old import paths plugin authors were shown still give the same objects."""

from __future__ import annotations

import ast
import importlib
import tomllib
from pathlib import Path

import pytest
from setuptools import find_packages

ROOT = Path(__file__).resolve().parents[1]
PARSE = ROOT / "spamflow" / "parse"

# libraries that read archives, decode bodies or parse HTML: the parse stage's own
READING_LIBRARIES = {"warcio", "selectolax", "charset_normalizer", "brotli", "zstandard"}

# old path -> new path, the modules docs/plugins.md or a detector reading pages would import
OLD_PATHS = {
    "spamflow.parse_warc": "spamflow.parse.warc_file",
    "spamflow.pages": "spamflow.parse.pages",
    "spamflow.html_text": "spamflow.parse.html_text",
    "spamflow.charset": "spamflow.parse.charset",
    "spamflow.warc_records": "spamflow.parse.warc_records",
    "spamflow.revisits": "spamflow.parse.revisits",
}


def _imports(path: Path) -> set[str]:
    """Every module an absolute import in ``path`` names, at any depth."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def test_the_top_of_spamflow_reads_no_archive_and_no_html():
    found = {(path.name, name) for path in sorted((ROOT / "spamflow").glob("*.py"))
             for name in _imports(path) if name.split(".")[0] in READING_LIBRARIES}
    assert found == set()


def test_the_parse_package_holds_the_readers_and_knows_no_luigi_and_no_stage():
    modules = sorted(PARSE.glob("*.py"))
    used = set().union(*(_imports(p) for p in modules)) if modules else set()
    assert {name.split(".")[0] for name in used} >= READING_LIBRARIES
    assert {name for name in used if name.split(".")[0] == "luigi" or name.startswith("spamflow.stages")} == set()


def test_packaging_finds_the_parse_package():
    """The wheel's package list comes from pyproject.toml's find settings; spamflow.parse is in it."""
    find = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    packages = {p for where in find["where"] for p in find_packages(where=str(ROOT / where), include=find["include"])}
    assert {"spamflow", "spamflow.parse", "spamflow.stages"} <= packages


@pytest.mark.parametrize("old", sorted(OLD_PATHS))
def test_an_old_import_path_gives_the_moved_module_s_public_names(old):
    moved = importlib.import_module(OLD_PATHS[old])
    kept = importlib.import_module(old)
    public = [name for name in vars(moved) if not name.startswith("_")]
    assert public and all(getattr(kept, name) is getattr(moved, name) for name in public)
    assert OLD_PATHS[old] in (kept.__doc__ or "")
