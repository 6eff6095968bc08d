"""One seam for storage (issue 41): only ``spamflow/storage.py`` knows a local path from a URL.
Every other module of core, the plugins and the workflows takes a
:class:`spamflow.storage.Location` (or a plain string at a MapReduce task) and never asks what
kind it is: read from the source with ``ast`` (every file, as the layering test reads imports),
no module imports or calls ``is_url`` / ``is_remote``, and none compares a string with a
storage scheme (``"://"``, ``"s3://"``, ``"file://"``, ...).  The one kind of module allowed a
``"://"`` is one about *web* URLs (the crawler's URL filters, a page's text), listed below with
its reason.

The class itself is checked on a local folder and on moto's real S3 server on 127.0.0.1: the
same calls give the same answers on both."""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path

import pytest

from spamflow.storage import Location, StorageError

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [ROOT / "spamflow", ROOT / "plugins", ROOT / "workflows"]
SEAM = ROOT / "spamflow" / "storage.py"
ASKING = {"is_url", "is_remote", "REMOTE_SCHEMES"}
STRING_TESTS = {"startswith", "endswith", "split", "rsplit", "partition", "removeprefix", "find", "index"}
WEB_URLS = {
    "spamflow/crawl/filters.py": "the crawl filter SchemeEquals tests a web page's URL, not a file's location",
    "spamflow/parse/html_text.py": "a page's text that starts with http(s):// is a URL in the text, not a file",
}


def _literal_scheme(node: ast.AST) -> bool:
    """A string constant (or a tuple of them) that names a URL scheme: ``"://"``, ``"s3://"``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return "://" in node.value
    if isinstance(node, ast.Tuple):
        return any(_literal_scheme(e) for e in node.elts)
    if isinstance(node, ast.BinOp):  # arg + "://"
        return _literal_scheme(node.left) or _literal_scheme(node.right)
    return False


def asking_what_kind(source: str, filename: str) -> list[str]:
    """Every place ``source`` asks whether a location is local or a URL, as ``line: what``."""
    found = []
    for node in ast.walk(ast.parse(source, filename=filename)):
        if isinstance(node, ast.ImportFrom):
            found += [f"{node.lineno}: imports {a.name}" for a in node.names if a.name in ASKING]
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if name in ASKING:
                found.append(f"{node.lineno}: calls {name}")
            elif name in STRING_TESTS and any(_literal_scheme(a) for a in node.args):
                found.append(f"{node.lineno}: .{name}() with a URL scheme")
        elif isinstance(node, ast.Compare) and (_literal_scheme(node.left)
                                                 or any(_literal_scheme(c) for c in node.comparators)):
            found.append(f"{node.lineno}: compares with a URL scheme")
    return found


def test_no_module_outside_storage_asks_whether_a_location_is_a_url():
    found = {}
    for root in SOURCES:
        for path in sorted(root.rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if path == SEAM or rel in WEB_URLS:
                continue
            hits = asking_what_kind(path.read_text(encoding="utf-8"), rel)
            if hits:
                found[rel] = hits
    assert found == {}


def test_the_checker_finds_each_way_of_asking():
    """The checker is not vacuous: each form the refactor removed is caught."""
    cases = {
        "from spamflow.storage import is_url": "imports is_url",
        "storage.is_url(x)": "calls is_url",
        "is_remote(x)": "calls is_remote",
        "x.startswith('s3://')": ".startswith() with a URL scheme",
        "x.startswith(('http://', 'https://'))": ".startswith() with a URL scheme",
        "'://' in path": "compares with a URL scheme",
        "'://' not in path": "compares with a URL scheme",
        "x.split('://', 1)": ".split() with a URL scheme",
        "x.startswith(arg + '://')": ".startswith() with a URL scheme",
    }
    for source, what in cases.items():
        assert [hit.split(": ", 1)[1] for hit in asking_what_kind(source, "<case>")] == [what], source
    assert asking_what_kind("Location.of(x).join('a').read_bytes()", "<case>") == []
    for rel in WEB_URLS:  # an allowed module is still there and still needs it
        assert asking_what_kind((ROOT / rel).read_text(encoding="utf-8"), rel), rel


def _exercise(root: Location, spool: Path) -> dict:
    """The same calls on a local folder or a bucket prefix; what they answered."""
    seen: dict = {"exists_before": root.exists(), "names_before": root.names()}
    root.mkdir()
    record = root.join("stages", "a-1", "stage.json")
    record.write_bytes(b'{"n": 1}')
    record.write_bytes(b'{"n": 2}')  # replaced whole
    seen["read"] = json.loads(record.read_bytes())
    seen["missing"] = root.join("nothing").read_bytes_if_any()
    seen["names"] = sorted(root.names())
    seen["stage_names"] = sorted(root.join("stages").names())
    seen["is_dir"] = root.join("stages").is_dir()
    seen["parent"] = str(record.parent.parent) == str(root.join("stages"))
    seen["name"] = record.name
    with root.join("part.bin").writing() as out:
        out.write_bytes(b"x" * 100)
    with root.join("part.bin").open() as fh:
        seen["opened"] = len(fh.read())
    with root.join("part.bin").head_copy(spool, 10) as (head, whole):
        seen["head"] = (head.read_bytes(), whole)
    with root.join("part.bin").local_copy(spool) as copy:
        seen["copy"] = len(copy.read_bytes())
    seen["identity_bytes"] = root.join("part.bin").input_identity()["bytes"]
    seen["files"] = [f.name for f in root.join("part.bin").files()]
    tmp = spool.parent / "published"
    (tmp / "sub").mkdir(parents=True)
    (tmp / "sub" / "x.txt").write_text("x")
    (tmp / "stage.json").write_text("{}")
    target, cache = root.join("stages", "b-2"), spool.parent / "cache-b-2"
    target.publish_dir(tmp, last="stage.json", cache=cache if root.url else Path(str(target)))
    fetched, marker = target.fetch_dir(spool.parent / "fetched-b-2" if root.url else Path(str(target)),
                                       last="stage.json")
    seen["fetched"] = (sorted(p.relative_to(fetched).as_posix() for p in fetched.rglob("*") if p.is_file()), marker)
    return seen


def test_a_location_answers_alike_on_a_local_folder_and_on_s3(tmp_path, s3_runs_bucket):
    local = _exercise(Location.of(tmp_path / "w"), tmp_path / "l" / "spool")
    remote = _exercise(Location.of("s3://runs/w"), tmp_path / "r" / "spool")
    files = ["stage-files.json"]  # the remote listing stays in the bucket (not in the copy)
    assert local["fetched"] == (["stage.json", "sub/x.txt"], b"{}")
    assert remote["fetched"] == local["fetched"]
    assert remote["head"] == (b"x" * 10, False) and local["head"][1] is True  # a local file is whole
    for key in ("exists_before", "names_before", "read", "missing", "names", "stage_names", "is_dir", "parent",
                "name", "opened", "copy", "identity_bytes", "files"):
        assert local[key] == remote[key], key
    assert local["read"] == {"n": 2} and local["names"] == ["stages"] and local["opened"] == 100
    assert not any(p.name in files for p in (tmp_path / "r").rglob("*"))


def test_locations_are_made_once_from_what_the_config_says(tmp_path):
    assert str(Location.of("data/a.warc.gz", base=tmp_path)) == str(tmp_path / "data" / "a.warc.gz")
    assert str(Location.of("file:///x/y")) == "/x/y"
    assert str(Location.of("s3://b/p", base=tmp_path)) == "s3://b/p"
    assert str(Location.of("s3://b/p").join("stages", "a")) == "s3://b/p/stages/a"
    assert str(Location.of("s3://b/p/stages/a").parent) == "s3://b/p/stages"
    assert Location.of("s3://b/p").url == "s3://b/p" and Location.of(tmp_path).url is None
    assert Location.of(tmp_path).native() == tmp_path and Location.of("s3://b/p").native() == "s3://b/p"


def test_an_unreachable_store_is_a_storage_error_naming_the_url(monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # nothing listens on the discard port
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "x")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "x")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    monkeypatch.setenv("AWS_RETRY_MODE", "standard")
    pytest.importorskip("s3fs")
    with pytest.raises(StorageError, match=r"^s3://nowhere/w/stage.json: cannot read it"):
        Location.of("s3://nowhere/w").join("stage.json").read_bytes()
    assert os.environ["AWS_ENDPOINT_URL"].endswith(":9")
