"""Files a stage reads (labels, spinner dictionaries, query terms, seed files, blocklists) are
resolved against the config file, checked before anything runs, and part of the stage's
identity by content: an edited file redoes the stage, a touched one does not."""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import spamflow
from spamflow.config import load_config, parse_config
from spamflow.detector import Detector, DetectorParams, InputPath, StageContext, StageResult
from spamflow.errors import ConfigError
from spamflow.plan import plan_run
from spamflow.plugins import build_plugins

from warc_factory import Resp, html, write_warc


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "spamflow_workflows", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=600)


def sha256_of(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def touch_later(path: Path) -> None:
    """Same bytes, a modification time 100 s later (a coarse-mtime filesystem still sees it)."""
    before = path.stat().st_mtime_ns
    os.utime(path, ns=(before + 100 * 10**9, before + 100 * 10**9))
    assert path.stat().st_mtime_ns != before


DEMO_CLASSIFY = """\
workdir: out
input:
  demo: {seed: 0}
detectors:
  obvious: {}
  classify: {labels: lab/labels.csv, hostnames: lab/hostnames.txt}
"""


def test_relative_labels_resolve_against_the_config_file_not_the_cwd(tmp_path, monkeypatch, plugins):
    (tmp_path / "cfg" / "lab").mkdir(parents=True)
    (tmp_path / "cfg" / "lab" / "labels.csv").write_text("host,label\na.com,spam\n")
    (tmp_path / "cfg" / "lab" / "hostnames.txt").write_text("0 a.com\n")
    (tmp_path / "cfg" / "c.yaml").write_text(DEMO_CLASSIFY)
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    config = load_config(Path("../cfg/c.yaml"), plugins)
    params = config.detectors["classify"]
    assert params.labels == str((tmp_path / "cfg" / "lab" / "labels.csv").resolve())  # type: ignore[attr-defined]
    assert params.hostnames == str((tmp_path / "cfg" / "lab" / "hostnames.txt").resolve())  # type: ignore[attr-defined]
    # the keyword stays a keyword, with no file and no digest
    demo = parse_config(DEMO_CLASSIFY.replace("labels: lab/labels.csv, hostnames: lab/hostnames.txt",
                                              "labels: demo"), plugins, path=tmp_path / "cfg" / "c.yaml")
    assert demo.detectors["classify"].labels == "demo"  # type: ignore[attr-defined]
    assert plan_run(demo, plugins)["classify"].input_files == {}


@pytest.mark.parametrize("block, key, missing", [
    ("classify: {labels: lab/labels.csv}", "detectors.classify.labels", "lab/labels.csv"),
    ("content: {query_terms: terms.txt}", "detectors.content.query_terms", "terms.txt"),
    ("content: {corpus_stats: old/corpus_stats.json}", "detectors.content.corpus_stats", "old/corpus_stats.json"),
    ("spin: {dictionary: [dict/syn.txt]}", "detectors.spin.dictionary", "dict/syn.txt"),
])
def test_validate_names_the_key_and_the_missing_file(tmp_path, block, key, missing):
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "c.yaml").write_text(f"workdir: out\ninput: {{demo: {{seed: 0}}}}\n"
                                             f"detectors:\n  obvious: {{}}\n  {block}\n")
    (tmp_path / "elsewhere").mkdir()
    out = cli("validate", "-c", "../cfg/c.yaml", cwd=tmp_path / "elsewhere")
    assert out.returncode == 2, out.stdout + out.stderr
    assert "line 5:" in out.stderr and key in out.stderr, out.stderr
    assert str((tmp_path / "cfg" / missing).resolve()) in out.stderr, out.stderr
    # `run` makes the same check before any stage runs: no stage directory is created
    out = cli("run", "-c", "../cfg/c.yaml", "--no-progress", cwd=tmp_path / "elsewhere")
    assert out.returncode == 2 and key in out.stderr, out.stderr
    assert not (tmp_path / "cfg" / "out" / "stages").exists()


# (config text, the file, its content, an edit, the stage that reads it, the planned key)
CASES: dict[str, tuple[str, str, str, str, str, str]] = {
    "labels": (DEMO_CLASSIFY.replace(", hostnames: lab/hostnames.txt", ""), "lab/labels.csv",
               "host,label\na.com,spam\nb.com,nonspam\n", "host,label\na.com,nonspam\nb.com,nonspam\n",
               "classify", "labels"),
    "query_terms": ("workdir: out\ninput: {demo: {seed: 0}}\ndetectors:\n  content: {query_terms: terms.txt}\n",
                    "terms.txt", "casino\nloans\n", "loans\ncasino\n", "content", "query_terms"),
    "dictionary": ("workdir: out\ninput: {demo: {seed: 0}}\ndetectors:\n"
                   "  spin: {dictionary: [dict/a.txt, dict/b.txt]}\n",
                   "dict/b.txt", "big|large|huge\n", "big|large|vast\n", "spin", "dictionary.1"),
    "blocklist": ("workdir: out\ninput:\n  crawl: {seeds: ['http://a.example/'], "
                  "filter: 'HostEndsWith(.example) and not ForbiddenHost(lists/block.txt)'}\n",
                  "lists/block.txt", "spam.example\n", "spam.example\nmore-spam.example\n", "crawl", "crawl.filter.0"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_editing_an_input_file_redoes_its_stage_and_touching_it_does_not(tmp_path, plugins, case):
    text, name, content, edited, stage, key = CASES[case]
    config_path = tmp_path / "c.yaml"
    config_path.write_text(text)
    for rel in ("lab/labels.csv", "terms.txt", "dict/a.txt", "dict/b.txt", "lists/block.txt"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("small|little\n" if rel == "dict/a.txt" else content)
    file = tmp_path / name

    def plan() -> dict[str, Any]:
        return plan_run(load_config(config_path, plugins), plugins)

    first = plan()
    assert first[stage].input_files[key] == sha256_of(file)
    touch_later(file)
    assert {n: s.signature for n, s in plan().items()} == {n: s.signature for n, s in first.items()}
    file.write_text(edited)
    second = plan()
    assert second[stage].input_files[key] == sha256_of(file) != first[stage].input_files[key]
    assert second[stage].signature != first[stage].signature
    assert second[stage].params == first[stage].params  # same path: only the content changed
    downstream = {stage}
    for name_, planned in first.items():  # plan order is upstream first
        if downstream & set(planned.requires):
            downstream.add(name_)
    for name_, planned in first.items():  # what is downstream follows, the rest keeps its identity
        assert (second[name_].signature != planned.signature) == (name_ in downstream), name_
    file.write_text(content)  # back to the first content: the first signature again
    assert plan()[stage].signature == first[stage].signature


def test_an_edited_seed_file_is_a_new_crawl_and_a_touched_one_is_not(tmp_path, plugins):
    (tmp_path / "seeds.txt").write_text("# seeds\nhttp://a.example/\n")
    (tmp_path / "c.yaml").write_text("workdir: out\ninput:\n  crawl: {seed_file: seeds.txt}\n")
    sig = lambda: plan_run(load_config(tmp_path / "c.yaml", plugins), plugins)["crawl"].signature  # noqa: E731
    first = sig()
    touch_later(tmp_path / "seeds.txt")
    assert sig() == first
    (tmp_path / "seeds.txt").write_text("# seeds\nhttp://a.example/\nhttp://b.example/\n")
    assert sig() != first


def test_stages_that_read_no_file_keep_their_signatures(tmp_path, plugins):
    """Worked by hand: the signature of a stage without input files hashes exactly the four
    keys it always did, so adding file identity redid no existing output."""
    write_warc(tmp_path / "a.warc.gz", [Resp("http://a.example.com/", html("a", "<p>a</p>"))])
    (tmp_path / "c.yaml").write_text("workdir: out\ninput: {warc: ['*.warc.gz']}\ndetectors: {obvious: {}}\n")
    plan = plan_run(load_config(tmp_path / "c.yaml", plugins), plugins)
    for stage in plan.values():
        assert stage.input_files == {}
        # execution keys (parse.engine) are planned but never hashed: adding one redid nothing
        params = {k: v for k, v in stage.params.items() if k not in execution_keys(stage.stage_class)}
        body = {"stage": stage.name, "version": plugins_version(stage.stage_class), "params": params,
                "upstream": stage.requires}
        blob = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        assert stage.signature == hashlib.sha256(blob.encode()).hexdigest()[:16]


def execution_keys(stage_class: str) -> frozenset[str]:
    from spamflow.stage_runner import load_stage_class

    return getattr(load_stage_class(stage_class).Params, "execution_keys", frozenset())


def plugins_version(stage_class: str) -> str:
    from spamflow.stage_runner import load_stage_class

    return load_stage_class(stage_class).version


@pytest.mark.parametrize("block, key", [("content: {query_terms: terms.txt}", "query_terms"),
                                        ("spin: {dictionary: [terms.txt]}", r"dictionary\.0")])
def test_a_file_gone_after_validation_fails_planning_naming_it(tmp_path, plugins, block, key):
    """Parameters are validated once, when the config is read: the planner takes the validated
    model (it does not validate a detector's again without the config's folder), so a spin
    dictionary gone since then is the same error as any input file, naming the key and the file."""
    (tmp_path / "terms.txt").write_text("casino\n")
    (tmp_path / "c.yaml").write_text(f"workdir: out\ninput: {{demo: {{seed: 0}}}}\ndetectors:\n  {block}\n")
    config = load_config(tmp_path / "c.yaml", plugins)
    (tmp_path / "terms.txt").unlink()
    with pytest.raises(ConfigError, match=rf"stage {block.split(':')[0]}: input file {key} \(.*terms\.txt\): cannot read it"):
        plan_run(config, plugins)


# A third-party detector declares its files through the public API alone.

class StopwordParams(DetectorParams):
    words: InputPath
    extra: list[InputPath] = []
    optional: InputPath | None = None
    min_count: int = 1


class Stopwords(Detector):
    name = "stopwords"
    Params = StopwordParams

    def run(self, ctx: StageContext) -> StageResult:  # pragma: no cover - planned, not run
        return StageResult(outputs={})


class StopwordPlugin:
    @spamflow.hookimpl
    def spamflow_register_detectors(self, register):
        register(Stopwords)


def test_a_third_party_detector_declares_input_files_with_input_path(tmp_path):
    plugins = build_plugins(extra={"stopwords-plugin": StopwordPlugin()})
    (tmp_path / "cfg" / "w").mkdir(parents=True)
    for name in ("a.txt", "b.txt", "c.txt"):
        (tmp_path / "cfg" / "w" / name).write_text(f"{name}\n")
    text = ("workdir: out\ninput: {demo: {seed: 0}}\ndetectors:\n"
            "  stopwords: {words: w/a.txt, extra: [w/b.txt], optional: w/c.txt}\n")
    config = parse_config(text, plugins, path=tmp_path / "cfg" / "c.yaml")
    planned = plan_run(config, plugins)["stopwords"]
    w = (tmp_path / "cfg" / "w").resolve()
    assert planned.params["words"] == str(w / "a.txt") and planned.params["extra"] == [str(w / "b.txt")]
    assert planned.input_files == {"words": sha256_of(w / "a.txt"), "extra.0": sha256_of(w / "b.txt"),
                                   "optional": sha256_of(w / "c.txt")}
    with pytest.raises(ConfigError, match=r"line 4: detectors\.stopwords\.extra\.0: .*not found .*w/nope\.txt"):
        parse_config(text.replace("[w/b.txt]", "[w/nope.txt]"), plugins, path=tmp_path / "cfg" / "c.yaml")
    assert Stopwords.param_schema()["properties"]["words"]["format"] == "file-path"


RUN_CONFIG = """\
workdir: out
input: {warc: ['*.warc.gz'], snapshot: 2026-01}
report: {enabled: false}
detectors:
  obvious: {}
  content: {query_terms: terms.txt}
  classify: {labels: labels.csv, folds: 2, bags: 2, iterations: 5, explain_hosts: 3, group_by: domain}
"""


def _stages(project: Path) -> dict[str, dict[str, Any]]:
    stages: dict[str, dict[str, Any]] = json.loads((project / "out" / "run.json").read_text())["stages"]
    return stages


@pytest.mark.slow
def test_spamflow_run_redoes_only_the_stages_whose_files_changed(tmp_path):
    """A real run from another directory: labels and query terms resolve against the config;
    touching them redoes nothing; editing the labels redoes classify alone, editing the query
    terms redoes content and (its input changed) classify."""
    project = tmp_path / "project"
    project.mkdir()
    records, labels = [], ["host,label"]
    rng = random.Random(0)
    for h in range(16):
        spam = h % 2 == 0
        vocabulary = ["cheap", "pills", "casino", "loans", "buy", "now"] if spam else \
            ["river", "history", "garden", "walk", "music", "book"]
        links = "".join(f'<a href="http://www.site{(h + k) % 16}.com/">x</a>' for k in (1, 2, 3))
        for i in range(3):
            words = " ".join(rng.choice(vocabulary) for _ in range(100 if spam else 60))
            records.append(Resp(f"http://www.site{h}.com/{i}", html(f"site {h} {i}", f"<p>{words}</p>{links}")))
        labels.append(f"www.site{h}.com,{'spam' if spam else 'nonspam'}")
    write_warc(project / "a.warc.gz", records)
    (project / "labels.csv").write_text("\n".join(labels) + "\n")
    (project / "terms.txt").write_text("casino\nloans\nriver\n")
    (project / "c.yaml").write_text(RUN_CONFIG)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    def run() -> dict[str, dict[str, Any]]:
        out = cli("run", "-c", str(Path("..") / "project" / "c.yaml"), "--no-progress", cwd=elsewhere)
        assert out.returncode == 0, out.stdout + out.stderr
        return _stages(project)

    def ran(stages: dict[str, dict[str, Any]]) -> list[str]:
        return sorted(n for n, s in stages.items() if s["ran_now"])

    first = run()
    assert ran(first) == ["classify", "content", "ingest", "obvious", "parse"]
    assert first["classify"]["input_files"] == {"labels": sha256_of(project / "labels.csv")}
    assert first["content"]["input_files"] == {"query_terms": sha256_of(project / "terms.txt")}
    assert first["classify"]["counts"]["labels_spam"] == 8
    touch_later(project / "labels.csv")
    touch_later(project / "terms.txt")
    assert ran(run()) == []
    (project / "labels.csv").write_text("\n".join(labels).replace("www.site1.com,nonspam", "www.site1.com,spam") + "\n")
    after_labels = run()
    assert ran(after_labels) == ["classify"]
    assert after_labels["classify"]["counts"]["labels_spam"] == 9  # the new labels were read, not the stale output
    (project / "terms.txt").write_text("casino\nriver\n")
    assert ran(run()) == ["classify", "content"]
