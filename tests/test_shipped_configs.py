"""Every config shipped in configs/ and spamflow/configs/ validates from a fresh clone, or
fails only because of a file its own ``# needs:`` comment names, with the error saying so."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from spamflow.cli import main, missing_needs

from warc_factory import Resp, html, write_warc

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted(str(p.relative_to(ROOT)) for d in ("configs", "spamflow/configs") for p in (ROOT / d).glob("*.yaml"))


@pytest.fixture(scope="module")
def fresh_clone(tmp_path_factory) -> Path:
    """The repository's tracked files (as in the work tree), and nothing else: no data/, no runs/."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout to know which files a fresh clone has")
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    clone = tmp_path_factory.mktemp("clone")
    for name in filter(None, listed.decode().split("\0")):
        if (ROOT / name).is_file():  # a tracked file deleted in the work tree is not there
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / name, clone / name)
    return clone


def _validate(config: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["validate", "-c", str(config)])
    out = capsys.readouterr()
    return code, out.out, out.err


def _make(glob_pattern: Path) -> None:
    """A real (tiny) WARC file that ``glob_pattern`` matches."""
    path = Path(str(glob_pattern).replace("**/", "").replace("*", "sample"))
    path.parent.mkdir(parents=True, exist_ok=True)
    write_warc(path, [Resp("http://needs.example/", html("needs", "<p>a page</p>"))])


def test_there_are_configs_to_check():
    assert "configs/example.yaml" in CONFIGS and "spamflow/configs/demo.yaml" in CONFIGS


@pytest.mark.parametrize("name", CONFIGS)
def test_shipped_config_validates_or_names_the_file_it_needs(name, fresh_clone, capsys):
    config = fresh_clone / name
    code, out, err = _validate(config, capsys)
    needs = missing_needs(config)
    if code == 0:
        assert out.startswith(f"{config}: ok\n") and not needs
        return
    assert code == 2 and needs, f"{name} fails without a '# needs:' comment saying why:\n{err}"
    lines = err.splitlines()
    assert lines[0].startswith("spamflow: config error: ") and len(lines) == 1 + len(needs), err
    assert all(path in lines[0] for path, _ in needs), err  # the error is about what the comment names
    assert lines[1:] == [f"spamflow: {config} needs {path}, which is not there: {how}" for path, how in needs]
    for path, _ in needs:  # given what it needs, it validates
        assert re.fullmatch(r"[\w./*-]+\.warc(\.gz)?", path), f"{name}: make {path} in this test"
        _make(config.parent / path)
    code, out, err = _validate(config, capsys)
    assert code == 0, err
    assert out.startswith(f"{config}: ok\n") and missing_needs(config) == []


def test_a_needs_comment_is_only_repeated_while_its_file_is_missing(tmp_path, capsys):
    config = tmp_path / "c.yaml"
    config.write_text("# needs: warcs/*.warc.gz  copy your crawl here\nworkdir: out\ninput: {warc: [warcs/*.warc.gz]}\n"
                      "detectors: {obvious: {}}\n")
    code, _, err = _validate(config, capsys)
    assert code == 2 and err.splitlines()[1:] == [
        f"spamflow: {config} needs warcs/*.warc.gz, which is not there: copy your crawl here"]
    _make(tmp_path / "warcs" / "*.warc.gz")
    config.write_text(config.read_text() + "wrokers: 2\n")  # another mistake: no word about the needs
    code, _, err = _validate(config, capsys)
    assert code == 2 and len(err.splitlines()) == 1 and "unknown key 'wrokers'" in err


def _readme_config(tmp_path: Path) -> Path:
    """README's "Use it on your WARC files" YAML written as ``my.yaml`` beside a ``data/``
    folder of WARC files, as a user would copy it."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```yaml\n(# my\.yaml.*?)```", readme, re.S)
    assert block, "README has no '# my.yaml' YAML block"
    config = tmp_path / "my.yaml"
    config.write_text(block.group(1), encoding="utf-8")
    _make(tmp_path / "data" / "*.warc.gz")
    return config


def test_the_readmes_config_validates_as_written_beside_a_warc_folder(tmp_path, capsys):
    """README's "Use it on your WARC files" YAML, copied as a user would, beside a ``data/``
    folder of WARC files: it validates with nothing else to fetch (no spinner dictionary)."""
    config = _readme_config(tmp_path)
    code, out, err = _validate(config, capsys)
    assert code == 0, err
    assert out.startswith(f"{config}: ok\n")


def test_the_readmes_config_never_starts_the_slow_local_runner(tmp_path):
    """Issue 39 item 8: the README's config must not make a first run slow.  Its runner was
    ``auto``, which is ``local`` (mrjob subprocesses: 35.2 s against 6.3 s inline on the eight
    sample WARCs, benchmarks/README.md) above 64 MiB of WARC, i.e. on one Common Crawl file.
    The runner it names stays in this process whatever the input's size."""
    from spamflow.config import load_config
    from spamflow.mr.engine import resolve_runner
    from spamflow.plugins import get_plugins
    from spamflow.runs import run_settings

    config = _readme_config(tmp_path)
    settings = run_settings(load_config(config, get_plugins()).model)
    for size in (0, 10**6, 2**30, 10**12, None):  # None: a remote input of unknown size
        assert resolve_runner(settings, size).runner == "inline", size
