"""Issue 36 item 8: a run never writes into a non-empty folder spamflow did not create
unless told to (``--force`` / ``workdir_force: true``); a workdir spamflow made is marked
(``.spamflow-workdir``), and one an earlier version wrote (run.json, stages/) keeps working."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

import pytest

from spamflow.errors import ConfigError
from spamflow.workdir_guard import MARKER, claim_workdir
from spamflow_workflows.cli import main

from warc_factory import write_two_months


def _users_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "mine"
    (folder / "report").mkdir(parents=True)
    (folder / "run.json").write_text('{"my": "own file"}')
    (folder / "report" / "index.html").write_text("<p>my page</p>")
    return folder


def test_a_new_or_empty_folder_is_claimed_and_marked(tmp_path):
    claim_workdir(tmp_path / "new" / "run")
    assert (tmp_path / "new" / "run" / MARKER).is_file()
    (tmp_path / "empty").mkdir()
    claim_workdir(tmp_path / "empty")
    assert (tmp_path / "empty" / MARKER).is_file()
    (tmp_path / "empty" / "stray.txt").write_text("x")
    claim_workdir(tmp_path / "empty")  # marked: whatever it holds now


def test_a_users_non_empty_folder_is_refused_unless_forced(tmp_path):
    folder = _users_folder(tmp_path)
    with pytest.raises(ConfigError) as caught:
        claim_workdir(folder, where="c.yaml")
    message = str(caught.value)
    assert "did not create" in message and "--force" in message and "workdir_force: true" in message
    assert "run.json" in message and not (folder / MARKER).exists()
    claim_workdir(folder, force=True)
    assert (folder / MARKER).is_file()
    claim_workdir(folder)  # marked now: no --force needed again


@pytest.mark.parametrize("own", ["run.json", "stages"])
def test_a_workdir_of_an_earlier_spamflow_keeps_working(tmp_path, own):
    folder = tmp_path / "old"
    folder.mkdir()
    (folder / "notes.txt").write_text("kept by the user beside the run")
    if own == "stages":
        (folder / "stages" / "parse-abc").mkdir(parents=True)
    else:
        (folder / "run.json").write_text(json.dumps({"status": "success", "stages": {}}))
    claim_workdir(folder)
    assert (folder / MARKER).is_file()


def _config(tmp_path: Path, workdir: Path) -> Path:
    (tmp_path / "p").mkdir()
    project = write_two_months(tmp_path / "p")
    path = project / "c.yaml"
    path.write_text(f"workdir: {workdir}\ninput: {{warc: {{2026-01: [jan/*.warc.gz]}}}}\ndetectors: {{obvious: {{}}}}\n")
    return path


@pytest.mark.parametrize("command", [["run"], ["report"], ["crawl"]])
def test_commands_refuse_a_users_folder_with_exit_2_and_leave_it_untouched(tmp_path, capsys, command):
    folder = _users_folder(tmp_path)
    config = _config(tmp_path, folder)
    if command == ["crawl"]:
        config.write_text(f"workdir: {folder}\ninput: {{crawl: {{seeds: ['http://a.example/']}}}}\n")
    assert main([*command, "-c", str(config)]) == 2
    err = capsys.readouterr().err
    assert "config error" in err and "did not create" in err and str(folder) in err
    assert (folder / "run.json").read_text() == '{"my": "own file"}'
    assert (folder / "report" / "index.html").read_text() == "<p>my page</p>"
    assert sorted(p.name for p in folder.iterdir()) == ["report", "run.json"]


def test_run_with_force_or_the_config_key_writes_there(tmp_path, capsys):
    folder = _users_folder(tmp_path)
    config = _config(tmp_path, folder)
    text = config.read_text()
    config.write_text(text + "workdir_force: true\n")
    assert main(["run", "-c", str(config), "--no-progress", "--local-scheduler"]) == 0
    assert (folder / MARKER).is_file() and (folder / "stages").is_dir()
    other = _users_folder(tmp_path / "two")
    config.write_text(text.replace(str(folder), str(other)))
    assert main(["run", "-c", str(config), "--no-progress", "--local-scheduler"]) == 2
    assert main(["run", "-c", str(config), "--no-progress", "--local-scheduler", "--force"]) == 0
    assert (other / MARKER).is_file()


def test_a_remote_workdir_is_checked_and_marked_on_the_store(s3_runs_bucket):
    client, _env = s3_runs_bucket
    client.put_object(Bucket="runs", Key="mine/notes.txt", Body=b"my own")
    with pytest.raises(ConfigError, match="did not create"):
        claim_workdir("s3://runs/mine")
    claim_workdir("s3://runs/mine", force=True)
    claim_workdir("s3://runs/mine")
    claim_workdir("s3://runs/fresh")
    client.put_object(Bucket="runs", Key="old/stages/parse-1/stage.json", Body=b"{}")
    claim_workdir("s3://runs/old")
    keys = {o["Key"] for o in client.list_objects_v2(Bucket="runs")["Contents"]}
    assert {f"mine/{MARKER}", f"fresh/{MARKER}", f"old/{MARKER}"} <= keys


def _unwritable_workdirs(tmp_path: Path) -> list[tuple[Path, str]]:
    """Workdirs a run cannot write, with the words the error must say: one under a file (which
    stops root too) and, when not running as root (root writes anyway), one in a 0555 folder."""
    (tmp_path / "a-file").write_text("not a folder")
    cases = [(tmp_path / "a-file" / "run", f"cannot be made: {tmp_path / 'a-file'} is a file")]
    if os.geteuid() != 0:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o555)
        cases.append((locked / "run", f"not writable (it would be made in {locked})"))
        cases.append((locked, f"{locked} is not writable"))
    return cases


def test_validate_and_run_say_in_one_line_that_the_workdir_cannot_be_written(tmp_path, capsys):
    """Issue 39 item 4: validate passed an unwritable workdir, and run then failed with two
    tracebacks.  Both now exit 2 with one line naming the config, the folder and why."""
    for workdir, why in _unwritable_workdirs(tmp_path):
        project = tmp_path / f"p-{len(list(tmp_path.iterdir()))}"
        project.mkdir()
        config = _config(project, workdir)
        for command in (["validate"], ["run", "--no-progress", "--local-scheduler"]):
            assert main([command[0], "-c", str(config), *command[1:]]) == 2, (command, workdir)
            err = capsys.readouterr().err
            assert err.splitlines() == [err.strip()], err  # one line, no traceback
            assert err.startswith(f"spamflow: config error: {config}: workdir: {workdir}") and why in err, err
    try:
        os.chmod(tmp_path / "locked", 0o755)  # let pytest clean it up
    except FileNotFoundError:
        pass


def test_validate_leaves_no_probe_file_behind(tmp_path, capsys):
    config = _config(tmp_path, tmp_path / "runs" / "new")
    assert main(["validate", "-c", str(config)]) == 0
    assert not (tmp_path / "runs").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p"]
    (tmp_path / "runs").mkdir()
    assert main(["validate", "-c", str(config)]) == 0
    assert list((tmp_path / "runs").iterdir()) == []


@pytest.mark.parametrize("command", [["train", "-o", "model.skops"],
                                     ["evaluate"], ["quilt-sweep"], ["hss", "similar", "http://a.example/"]],
                         ids=lambda c: " ".join(c[:2]) if c[0] == "hss" else c[0])
def test_plugin_commands_that_run_stages_refuse_a_users_folder_and_take_force(tmp_path, capsys, command):
    """Every command that runs the config's stages is guarded as ``run`` is, and says so with
    its own ``--force`` (``score`` shares train's input flags; it first needs a model): the guard passed, the folder is marked (the command may then stop
    on what it needs, e.g. a model file)."""
    folder = _users_folder(tmp_path)
    config = _config(tmp_path, folder)
    if command[0] == "hss":
        config.write_text(config.read_text().replace("{obvious: {}}", "{hss: {}}"))
    assert main([*command, "-c", str(config)]) == 2
    err = capsys.readouterr().err
    assert "did not create" in err and "--force" in err
    assert sorted(p.name for p in folder.iterdir()) == ["report", "run.json"]
    with contextlib.suppress(SystemExit):  # e.g. "no host of the feature table has a label": past the guard
        main([*command, "-c", str(config), "--force"])
    assert (folder / MARKER).is_file()
