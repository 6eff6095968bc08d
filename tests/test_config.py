"""Config errors, each kind, name the file, the line, the key and what is allowed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from spamflow.config import RUNNERS, load_config
from spamflow.errors import ConfigError
from spamflow.yaml_loader import ConfigLoader, DuplicateKeyError

MINIMAL = """\
workdir: runs/example
input:
  warc: [data/*.warc.gz]
mapreduce:
  runner: local        # inline | local | spark | hadoop | emr
detectors:
  quilt: {k: 5, m: 50, c: 4, theta: 0.5, foreign: domain}
  hss: false
"""


@pytest.fixture
def project(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "a.warc.gz").write_bytes(b"")
    return tmp_path


def _load(project: Path, text: str, plugins):
    cfg = project / "spamflow.yaml"
    cfg.write_text(text)
    return load_config(cfg, plugins)


def _error(project, text, plugins) -> str:
    with pytest.raises(ConfigError) as err:
        _load(project, text, plugins)
    message = str(err.value)
    assert str(project / "spamflow.yaml") in message  # every error names the file
    return message


def test_minimal_file_as_written(project, plugins):
    missing = [name for name in ("quilt", "hss") if name not in plugins.detectors]
    if not missing:
        config = _load(project, MINIMAL, plugins)
        assert list(config.detectors) == ["quilt"]
        assert config.detectors["quilt"].model_dump() == {"k": 5, "m": 50, "c": 4, "theta": 0.5,
                                                          "foreign": "domain", "phi": None, "engine": "auto"}
    else:  # until the hss plugin exists, the one error is that unknown detector
        message = _error(project, MINIMAL, plugins)
        line = {"quilt": 7, "hss": 8}[missing[0]]
        assert f"line {line}: detectors.{missing[0]}: unknown detector '{missing[0]}'; available: " in message
    without_detectors = MINIMAL.split("detectors:")[0]
    config = _load(project, without_detectors, plugins)
    assert config.model.mapreduce.runner == "local"
    assert config.workdir == project / "runs" / "example"  # relative to the config file
    assert config.warc_files() == {None: [project / "data" / "a.warc.gz"]}


def test_unknown_top_level_key(project, plugins):
    message = _error(project, "workdir: w\ninput: {warc: [data/*]}\nwrokers: 2\n", plugins)
    assert "line 3: wrokers: unknown key 'wrokers'; allowed keys: cache_dir, detectors, input, mapreduce, parse, " \
           "report, scheduler, stages_at_once, strict, workdir, workdir_force, workers" in message


def test_unknown_nested_key_lists_the_allowed_ones(project, plugins):
    message = _error(project, "workdir: w\ninput: {warc: [data/*]}\nmapreduce:\n  runer: local\n", plugins)
    assert "line 4: mapreduce.runer: unknown key 'runer'; allowed keys: args, inline_below, runner" in message


def test_runner_value_outside_the_allowed_set(project, plugins):
    message = _error(project, "workdir: w\ninput: {warc: [data/*]}\nmapreduce: {runner: flink}\n", plugins)
    assert "mapreduce.runner" in message and "'flink'" in message
    for runner in RUNNERS:
        assert f"'{runner}'" in message


def test_wrong_type(project, plugins):
    message = _error(project, "workdir: w\ninput: {warc: [data/*]}\nworkers: two\n", plugins)
    assert "line 3: workers: Input should be a valid integer (got 'two')" in message
    message = _error(project, "workdir: w\ninput: {warc: [data/*]}\nworkers: '2'\n", plugins)
    assert "workers: Input should be a valid integer" in message  # strict: no silent coercion


def test_missing_required_key(project, plugins):
    message = _error(project, "input: {warc: [data/*]}\n", plugins)
    assert "workdir: required key is missing" in message


def test_unknown_detector_names_the_available_ones(project, plugins):
    message = _error(project, "workdir: w\ninput: {warc: [data/*]}\ndetectors:\n  qilt: {}\n", plugins)
    assert f"line 4: detectors.qilt: unknown detector 'qilt'; available: {', '.join(plugins.detectors.names())}" in message


def test_detector_parameter_errors(project, plugins):
    message = _error(project, "workdir: w\ninput: {warc: [data/*]}\ndetectors:\n  obvious: {depth: 3}\n", plugins)
    assert "line 4: detectors.obvious.depth: unknown key 'depth'" in message


def test_input_sources(project, plugins):
    message = _error(project, "workdir: w\ninput: {}\n", plugins)
    assert "input: Value error, give exactly one of warc, demo, crawl, hostgraph (got none)" in message
    message = _error(project, "workdir: w\ninput: {warc: [data/*], demo: {}}\n", plugins)
    assert "got ['warc', 'demo']" in message
    message = _error(project, "workdir: w\ninput: {warc: [nothing/*.warc.gz]}\n", plugins)
    assert "input.warc: '" in message and "nothing/*.warc.gz' matches no file" in message
    message = _error(project, "workdir: w\ninput: {warc: {'bad label': [data/*]}}\n", plugins)
    assert "snapshot label 'bad label'" in message


def test_snapshot_mapping_and_dates_stay_text(project, plugins):
    config = _load(project, "workdir: w\ninput:\n  warc: {2026-01: [data/*]}\n", plugins)
    assert config.warc_files() == {"2026-01": [project / "data" / "a.warc.gz"]}
    config = _load(project, "workdir: w\ninput: {warc: [data/*], snapshot: 2026-02-01}\n", plugins)
    assert config.model.input.snapshot == "2026-02-01"


def test_a_key_given_twice_names_the_key_both_lines_and_the_file(project, plugins):
    # PyYAML alone keeps the last value silently: the first workdir would be lost
    text = "workdir: first\ninput: {warc: [data/*]}\nworkdir: second\n"
    assert yaml.safe_load(text)["workdir"] == "second"
    message = _error(project, text, plugins)
    assert message == (f"{project / 'spamflow.yaml'} line 3: workdir: duplicate key, given at lines 1 and 3; "
                       "give each key once (YAML would silently keep only the last)")


def test_a_detector_given_twice_is_an_error(project, plugins):
    text = "workdir: w\ninput: {warc: [data/*]}\ndetectors:\n  obvious: {}\n  hss: {n: 16}\n  obvious: false\n"
    message = _error(project, text, plugins)
    assert message.splitlines() == [f"{project / 'spamflow.yaml'} line 6: detectors.obvious: duplicate key, "
                                    "given at lines 4 and 6; give each key once (YAML would silently keep only the last)"]


def test_duplicate_keys_deeper_down_and_on_one_line(project, plugins):
    text = "workdir: w\ninput:\n  crawl:\n    - {snapshot: a, seeds: [http://a.example/]}\n" \
           "    - {snapshot: b, seeds: [http://b.example/], snapshot: c}\n"
    assert "line 5: input.crawl.1.snapshot: duplicate key, given twice on line 5;" in _error(project, text, plugins)
    text = "workdir: w\ninput: {warc: [data/*]}\ndetectors:\n  hss:\n    n: 16\n    m: 64\n    n: 32\n"
    assert "line 7: detectors.hss.n: duplicate key, given at lines 5 and 7;" in _error(project, text, plugins)


def test_loader_allows_merge_keys_and_keeps_dates_as_text():
    text = "base: &b {x: 1, y: 2}\nover: {<<: *b, x: 3}\nwhen: 2026-01-31\n"
    assert yaml.load(text, Loader=ConfigLoader) == {"base": {"x": 1, "y": 2}, "over": {"x": 3, "y": 2},
                                                    "when": "2026-01-31"}
    with pytest.raises(DuplicateKeyError) as err:
        yaml.load("a: 1\nb: {c: [{d: 1, d: 2}]}\n", Loader=ConfigLoader)
    assert (err.value.path, err.value.first_line, err.value.line) == (("b", "c", "0", "d"), 2, 2)


def test_not_yaml_and_not_a_mapping(project, plugins):
    assert "not valid YAML" in _error(project, "workdir: [unclosed\n", plugins)
    assert "top level must be a mapping" in _error(project, "- a\n- b\n", plugins)


def test_missing_file_is_a_config_error(tmp_path, plugins):
    with pytest.raises(ConfigError, match="cannot read config .*nope.yaml"):
        load_config(tmp_path / "nope.yaml", plugins)


def test_shipped_configs_validate(plugins):
    root = Path(__file__).resolve().parents[1]
    demo = load_config(root / "configs" / "demo.yaml", plugins)
    assert demo.model.input.demo is not None and "obvious" in demo.detectors
    assert (root / "configs" / "demo.yaml").read_text() == (root / "spamflow" / "configs" / "demo.yaml").read_text()


def test_what_a_detector_reads_is_checked_by_one_rule_at_validation(project, plugins):
    """Validation and the planner apply the same rule (``config.detector_upstream``), to the
    stages a detector reads given its parameters: a classifier told to join a detector the
    config does not select, or the demo's labels on WARC input, fails when the config is read,
    not later when the run is planned."""
    if "classify" not in plugins.detectors:
        pytest.skip("the ensemble plugin is not loaded")
    base = "workdir: w\ninput: {warc: [data/*.warc.gz]}\ndetectors:\n  obvious: {}\n"
    (project / "labels.csv").write_text("host,label\na.example,spam\n")
    message = _error(project, base + "  classify: {labels: labels.csv, detectors: [obvious, quilt]}\n", plugins)
    assert "detectors.classify requires the 'quilt' detector; enable it under detectors: (quilt: {})" in message
    message = _error(project, base + "  classify: {labels: demo}\n", plugins)
    assert "detectors.classify reads stage 'demo', which this config does not run" in message


def test_a_runner_whose_software_is_missing_fails_at_validation_for_the_parse_job(project, plugins, monkeypatch):
    """The core parse stage may run as a job (``parse.engine`` auto or mapreduce), so a config with
    no MapReduce detector is checked too; ``engine: memory`` never starts one, so it is not."""
    monkeypatch.setenv("PATH", str(project))  # no 'hadoop' command here
    monkeypatch.delenv("HADOOP_HOME", raising=False)
    text = "workdir: out\ninput: {warc: [data/*.warc.gz]}\nmapreduce: {runner: hadoop}\ndetectors: {obvious: {}}\n"
    assert "mapreduce.runner: 'hadoop' needs the 'hadoop' command on PATH" in _error(project, text, plugins)
    memory = text.replace("detectors:", "parse: {engine: memory}\ndetectors:")
    assert _load(project, memory, plugins).model.parse.engine == "memory"


def test_billion_laughs_is_refused_with_file_and_line_before_anything_expands(project, plugins):
    import time

    laughs = "workdir: w\ninput: {warc: [data/*]}\nlol0: &l0 [lol]\n" + "".join(
        f"lol{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]\n" for i in range(1, 6)) + "detectors: {hss: *l5}\n"  # 10^5 here; 10^9 with 9 levels
    started = time.perf_counter()
    message = _error(project, laughs, plugins)
    assert time.perf_counter() - started < 2
    assert "line 7: alias *l3: the aliases of this file repeat more than 10000 values" in message
    # a few aliases, as people use them, still work
    fine = "workdir: w\ninput:\n  warc: {s1: &g [data/*], s2: *g}\n"
    assert _load(project, fine, plugins).model.input.warc == {"s1": ["data/*"], "s2": ["data/*"]}


def test_an_alias_to_its_own_container_is_refused(project, plugins):
    assert "line 3: alias *me refers to a list or mapping that contains it" in _error(
        project, "workdir: w\ninput: {warc: [data/*]}\nx: &me [1, *me]\n", plugins)


@pytest.mark.parametrize("deep", ["flow", "block"])
def test_yaml_nested_500_deep_is_a_config_error_not_a_recursion_error(project, plugins, deep, capsys):
    from spamflow.cli import main

    if deep == "flow":
        text = "workdir: w\ninput: {warc: [data/*]}\nx: " + "[" * 500 + "]" * 500 + "\n"
    else:
        text = "workdir: w\ninput: {warc: [data/*]}\nx:\n" + "".join(" " * i + f"k{i}:\n" for i in range(500))
    assert "nested more than 100 deep" in _error(project, text, plugins)
    assert main(["validate", "-c", str(project / "spamflow.yaml")]) == 2
    err = capsys.readouterr().err
    assert "config error" in err and "RecursionError" not in err and len(err.splitlines()) < 5


def test_a_file_named_like_a_glob_is_itself(project, plugins):
    (project / "data" / "crawl[1].warc.gz").write_bytes(b"")
    config = _load(project, "workdir: w\ninput: {warc: ['data/crawl[1].warc.gz']}\n", plugins)
    assert config.warc_inputs() == {None: [str(project / "data" / "crawl[1].warc.gz")]}
    assert "matches no file" in _error(project, "workdir: w\ninput: {warc: ['data/crawl[2].warc.gz']}\n", plugins)


@pytest.mark.parametrize("where", ["/", "home"])
def test_a_filesystem_root_or_the_home_folder_is_refused_as_workdir(project, plugins, where, monkeypatch):
    monkeypatch.setenv("HOME", str(project / "me"))
    (project / "me").mkdir()
    workdir = "/" if where == "/" else str(project / "me")
    message = _error(project, f"workdir: {workdir}\ninput: {{warc: [data/*]}}\n", plugins)
    assert "workdir: " in message and ("filesystem root" if where == "/" else "home folder") in message
    assert _load(project, f"workdir: {project / 'me' / 'run'}\ninput: {{warc: [data/*]}}\n", plugins)


def test_validate_says_what_the_spark_runner_lacks_before_anything_runs(project, plugins, monkeypatch):
    """The documented cluster config with a master that does not answer (a port on 127.0.0.1
    nothing listens on), an ``hdfs://`` Spark tmp dir without ``hadoop``, and then a
    ``--spark-submit-bin`` that does not exist and no Java: each is named in one error at load time."""
    import socket

    with socket.socket() as s:  # a free port, closed again: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.delenv("HADOOP_HOME", raising=False)
    text = ("workdir: out\ninput: {warc: [data/*.warc.gz]}\n"
            f"mapreduce: {{runner: spark, args: [--spark-master, 'spark://127.0.0.1:{port}', "
            "--spark-tmp-dir, 'hdfs:///tmp/spamflow']}\ndetectors: {obvious: {}}\n")
    message = _error(project, text, plugins)
    assert f"the Spark master spark://127.0.0.1:{port} to answer (no TCP connection to 127.0.0.1:{port}" in message
    if shutil.which("hadoop") is None:
        assert "the 'hadoop' command on PATH (or HADOOP_HOME) for --spark-tmp-dir hdfs:///tmp/spamflow" in message
    monkeypatch.setenv("PATH", str(project))  # no java here
    monkeypatch.delenv("JAVA_HOME", raising=False)
    missing_submit = text.replace("--spark-tmp-dir", f"--spark-submit-bin, '{project}/no-spark-submit', --spark-tmp-dir")
    message = _error(project, missing_submit, plugins)
    assert "the 'spark-submit' command" in message and "a Java runtime for Spark" in message
