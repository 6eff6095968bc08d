"""The plugin system: built-ins, an installed third-party plugin, duplicates, bad hooks."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

import spamflow
from spamflow.detector import Detector
from spamflow.errors import PluginError
from spamflow.plugins import BUILTIN_PLUGINS, build_plugins, plugin_name

from warc_factory import Resp, html, write_warc

BUILTIN_DETECTORS = ["classify", "content", "hss", "ids", "links", "links_hostgraph", "obvious", "quilt", "spin"]
FIXTURE_PLUGIN = Path(__file__).parent / "fixtures" / "spamflow-wordcount"


def cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "spamflow_workflows", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, cwd=cwd, timeout=300)


@pytest.fixture(scope="module")
def installed_plugin(tmp_path_factory) -> dict[str, str]:
    """pip-install the fixture plugin into its own folder; return the env that sees it."""
    target = tmp_path_factory.mktemp("site")
    source = tmp_path_factory.mktemp("src") / FIXTURE_PLUGIN.name
    shutil.copytree(FIXTURE_PLUGIN, source)  # setuptools writes build/ beside the sources
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                    "--no-index", "--target", str(target), str(source)],
                   check=True, capture_output=True, timeout=300)
    return {"PYTHONPATH": os.pathsep.join([str(target), os.environ.get("PYTHONPATH", "")])}


def test_builtins_are_listed(plugins):
    assert [p.name for p in plugins.plugins()] == sorted(map(plugin_name, BUILTIN_PLUGINS))
    for info in plugins.plugins():
        assert info.origin == "builtin" and "spamflow_register_detectors" in info.hooks
    assert {p.name: p.hooks for p in plugins.plugins()}["spamflow_quilt"] == (
        "spamflow_register_commands", "spamflow_register_detectors", "spamflow_report_evidence",
        "spamflow_report_evidence_kinds", "spamflow_report_host_columns", "spamflow_report_section")
    assert plugins.detectors.names() == BUILTIN_DETECTORS
    assert plugins.detectors["obvious"].plugin == "spamflow_obvious"
    assert plugins.detectors["quilt"].plugin == "spamflow_quilt"
    assert plugins.detectors["links"].plugin == "spamflow_links"
    assert plugins.detectors["content"].plugin == "spamflow_content"


@pytest.mark.slow
def test_external_plugin_is_listed_with_version_origin_and_schema(installed_plugin):
    out = cli("plugins", "--json", env=installed_plugin)
    assert out.returncode == 0, out.stderr
    listed = {p["name"]: p for p in json.loads(out.stdout)}
    assert listed["wordcount"]["version"] == "0.2.0"
    assert listed["wordcount"]["origin"] == "entry point of spamflow-wordcount"
    assert listed["spamflow_obvious"]["origin"] == "builtin"
    out = cli("detectors", "--json", env=installed_plugin)
    detectors = {d["name"]: d for d in json.loads(out.stdout)}
    assert detectors["wordcount"]["plugin"] == "wordcount"
    assert detectors["wordcount"]["params"]["properties"]["long_page"]["default"] == 1000
    text = cli("detectors", env=installed_plugin).stdout
    assert "wordcount\n  plugin: wordcount" in text and "long_page: integer = 1000" in text


@pytest.mark.slow
def test_external_plugin_is_selectable_and_runs(installed_plugin, tmp_path):
    write_warc(tmp_path / "a.warc.gz", [
        Resp("http://a.example.com/1", html("t", "<p>one two three four</p>")),
        Resp("http://a.example.com/2", html("t", "<p>one two</p>")),
    ])
    (tmp_path / "c.yaml").write_text("workdir: out\ninput: {warc: ['*.warc.gz']}\n"
                                     "detectors:\n  wordcount: {long_page: 3}\n")
    out = cli("run", "-c", "c.yaml", "--no-progress", env=installed_plugin, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    manifest = json.loads((tmp_path / "out" / "run.json").read_text())
    assert manifest["stages"]["wordcount"]["counts"] == {"pages": 2, "long_pages": 1}
    assert Path(manifest["stages"]["wordcount"]["outputs"]["wordcount"]).is_file()
    bad = cli("validate", "-c", "c.yaml", env=installed_plugin, cwd=tmp_path)
    assert bad.returncode == 0
    (tmp_path / "c.yaml").write_text("workdir: out\ninput: {warc: ['*.warc.gz']}\n"
                                     "detectors:\n  wordcount: {long_page: many}\n")
    bad = cli("validate", "-c", "c.yaml", env=installed_plugin, cwd=tmp_path)
    assert bad.returncode == 2
    assert "line 4: detectors.wordcount.long_page: Input should be a valid integer (got 'many')" in bad.stderr


@pytest.mark.slow
def test_external_plugin_adds_a_report_section_host_columns_and_evidence(installed_plugin, tmp_path):
    """The fixture plugin takes part in the report through the same hooks as the built-ins: its
    section (placed by its order, with a figure), its host-table column and fired rule, and its
    evidence (each long page), linked from its hosts' rows and served by the judging page."""
    long_text, short_text = "<p>" + "word " * 12 + "</p>", "<p>word</p>"
    write_warc(tmp_path / "a.warc.gz", [
        Resp("http://a.example.com/1", html("t", long_text)), Resp("http://a.example.com/2", html("t", short_text)),
        Resp("http://b.example.com/1", html("t", short_text)),
        Resp("http://c.example.com/1", html("t", long_text)), Resp("http://c.example.com/2", html("t", long_text)),
    ])
    (tmp_path / "c.yaml").write_text("workdir: out\ninput: {warc: ['*.warc.gz']}\n"
                                     "detectors:\n  wordcount: {long_page: 3}\n")
    out = cli("run", "-c", "c.yaml", "--no-progress", env=installed_plugin, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    manifest = json.loads((tmp_path / "out" / "run.json").read_text())
    report = manifest["stages"]["report"]
    assert report["counts"]["longpages_shown"] == 3 and report["counts"]["longpages_not_shown"] == 0
    index = Path(report["outputs"]["report"])
    soup = BeautifulSoup(index.read_text(encoding="utf-8"), "html.parser")
    assert [s["id"] for s in soup.find_all("section")] == ["hosts", "summary", "wordcount"]
    section = soup.select_one("#wordcount")
    assert "3 of 5 pages are long." in section.get_text()
    assert (index.parent / section.select_one("img")["src"]).is_file()
    articles = {a["id"]: a for a in section.select("article.evidence")}
    assert sorted(a["data-key"].split(":")[0] for a in articles.values()) == ["longpage"] * 3
    header = [th.get("title") or th.get_text(strip=True) for th in soup.select("#host-table thead th")]
    rows = {tr.find_all("td")[header.index("host")].text: tr.find_all("td")
            for tr in soup.select("#host-table tbody tr")}
    # hand-worked: a has one long page, b none, c two
    long_pages = {host: td[header.index("wordcount.long_pages")].get_text(strip=True) for host, td in rows.items()}
    assert long_pages == {"a.example.com": "1", "b.example.com": "0", "c.example.com": "2"}
    fired = {host: td[header.index("fired")].get_text(strip=True) for host, td in rows.items()}
    assert fired == {"a.example.com": "wordcount", "b.example.com": "", "c.example.com": "wordcount"}
    assert "(wordcount: pages over long_page words)" in " ".join(soup.select_one("#hosts p").get_text().split())
    for host, expected in (("a.example.com", 1), ("b.example.com", 0), ("c.example.com", 2)):
        links = [a["href"] for a in rows[host][header.index("evidence")].find_all("a")]
        assert len(links) == expected
        for href in links:  # each link leads to that host's long page in the section
            assert f"http://{host}/" in articles[href.removeprefix("#")].get_text()
    judged = subprocess.run([sys.executable, "-c", (
        "import json, sys; from spamflow.report.render import gather\n"
        "stages = json.load(open(sys.argv[1]))['stages']\n"
        "print(json.dumps(sorted(e.key for e in gather(stages, 50, 5000).items() if e.kind == 'longpage')))"),
        str(tmp_path / "out" / "run.json")], capture_output=True, text=True, timeout=300,
        env={**os.environ, **installed_plugin})
    assert judged.returncode == 0, judged.stderr
    assert sorted(json.loads(judged.stdout)) == sorted(a["data-key"] for a in articles.values())
    bad = cli("judge", "-c", "c.yaml", "--kinds", "host,nope", env=installed_plugin, cwd=tmp_path)
    assert bad.returncode == 2
    assert "choose from host, quilt, cluster, campaign, network, longpage" in bad.stderr


def test_the_classifier_joins_a_declared_host_table_whatever_its_output_is_called(installed_plugin, tmp_path):
    """The fixture declares its per-host table (output ``per_host``, not ``hosts``): run.json
    carries the declaration and the classifier's join takes the table by it, knowing no detector."""
    from spamflow_ensemble.tables import detector_host_tables, join_host_tables

    write_warc(tmp_path / "a.warc.gz", [
        Resp("http://a.example.com/1", html("t", "<p>" + "word " * 12 + "</p>")),
        Resp("http://a.example.com/2", html("t", "<p>word</p>")), Resp("http://b.example.com/1", html("t", "<p>w</p>"))])
    (tmp_path / "c.yaml").write_text("workdir: out\ninput: {warc: ['*.warc.gz'], snapshot: s1}\n"
                                     "detectors:\n  wordcount: {long_page: 3}\n")
    out = cli("run", "-c", "c.yaml", "--no-progress", env=installed_plugin, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    stage = json.loads((tmp_path / "out" / "run.json").read_text())["stages"]["wordcount"]
    assert stage["host_tables"] == {"per_host": {"key": ["snapshot", "host"], "features": {
        "pages": {"description": "pages of the host", "evidence": False},
        "long_pages": {"description": "pages over long_page words", "evidence": True, "above": 0.0}}}}
    paths, without = detector_host_tables({"wordcount": {k: Path(v) for k, v in stage["outputs"].items()}},
                                          {"wordcount": stage["host_tables"]})
    assert without == []
    table = join_host_tables(paths)
    rows = {host: dict(zip(table.features, row.tolist())) for host, row in zip(table.host, table.X)}
    # hand-worked: a has two pages, one long; b one short page
    assert rows == {"a.example.com": {"wordcount.pages": 2.0, "wordcount.long_pages": 1.0},
                    "b.example.com": {"wordcount.pages": 1.0, "wordcount.long_pages": 0.0}}


@pytest.mark.slow
def test_load_env_restricts_third_party_plugins(installed_plugin):
    out = cli("detectors", "--json", env={**installed_plugin, "SPAMFLOW_LOAD_PLUGINS": ""})
    assert [d["name"] for d in json.loads(out.stdout)] == BUILTIN_DETECTORS
    out = cli("detectors", "--json", env={**installed_plugin, "SPAMFLOW_LOAD_PLUGINS": "wordcount"})
    assert [d["name"] for d in json.loads(out.stdout)] == sorted(BUILTIN_DETECTORS + ["wordcount"])


@pytest.mark.slow
def test_detectors_shows_required_and_optional_parameters_with_their_defaults(plugins):
    text = cli("detectors").stdout
    # links.trust_seeds has a default_factory: it was listed as "= required"
    assert "\n    trust_seeds: array of string = []  (known-good hosts" in text
    assert "\n    dictionary: array of string, required  (synonym dictionary files" in text  # spin
    assert "\n    phi: number | null = null  (if set" in text  # quilt
    assert "\n    mapreduce: boolean = false  (" in text  # hss
    assert "\n    tree_bins: integer | \"auto\" = \"auto\"\n" in text  # classify
    listed = {d["name"]: d["params"] for d in json.loads(cli("detectors", "--json").stdout)}
    assert listed["links"]["properties"]["trust_seeds"]["default"] == []
    assert "trust_seeds" not in listed["links"].get("required", [])
    assert listed["spin"]["required"] == ["dictionary"]
    for name, schema in listed.items():  # each listed default is what leaving the key out gives
        params = plugins.detectors[name].cls.Params
        required = set(schema.get("required", []))
        defaults = {k: v["default"] for k, v in schema["properties"].items() if k not in required}
        assert set(defaults) | required == set(schema["properties"]), name
        if not required:
            assert params.model_validate_json(json.dumps(defaults)) == params.model_validate_json("{}"), name


class _Obvious2(Detector):
    name = "obvious"


class _DuplicatePlugin:
    @spamflow.hookimpl
    def spamflow_register_detectors(self, register):
        register(_Obvious2)


class _Extra(Detector):
    name = "extra"


class _ExtraPlugin:
    @spamflow.hookimpl
    def spamflow_register_detectors(self, register):
        register(_Extra)


def test_plugins_registered_in_code_are_listed_as_such():
    plugins = build_plugins(extra={"embedded": _ExtraPlugin()})
    origins = {p.name: p.origin for p in plugins.plugins()}
    assert origins == {**{plugin_name(m): "builtin" for m in BUILTIN_PLUGINS}, "embedded": "registered in code"}
    assert plugins.detectors["extra"].plugin == "embedded"


def test_duplicate_detector_name_names_both_plugins():
    with pytest.raises(PluginError) as err:
        build_plugins(extra={"acme-detectors": _DuplicatePlugin()})
    assert "detector name 'obvious' is registered by two plugins: 'spamflow_obvious' and 'acme-detectors'" in str(err.value)


class _MisspeltHook:
    @spamflow.hookimpl
    def spamflow_register_detector(self, register):  # missing the final s
        register(_Obvious2)


def test_misspelt_hook_fails_loudly():
    with pytest.raises(PluginError, match="spamflow_register_detector"):
        build_plugins(extra={"typo-plugin": _MisspeltHook()})


class _NotADetector:
    @spamflow.hookimpl
    def spamflow_register_detectors(self, register):
        register(dict)


def test_registering_a_non_detector_is_an_error():
    with pytest.raises(PluginError, match="'bad-plugin' registered <class 'dict'>"):
        build_plugins(extra={"bad-plugin": _NotADetector()})
