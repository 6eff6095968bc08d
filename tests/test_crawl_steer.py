"""``input.crawl.steer``: a crawl limited by an earlier run's scores, on a tiny loopback web
whose every fetch count is worked out by hand below.

The web (seed ``honest.test/``, ``max_depth: 4``, scope any)::

    honest.test/   -> www.farm.test/, a.farm.test/, b.farm.test/, c.farm.test/, blog.farm.test/, /1
    honest.test    a chain of 3 pages: / -> /1 -> /2
    www.farm.test  a chain of 6 pages: / -> /1 -> ... -> /5, and / -> deep.test/
    deep.test      a chain of 6 pages
    a, b, c, blog.farm.test  one page each

Depths without steering: www.farm.test/ 1, /1 2, /2 3, /3 4 (its links are not followed:
depth 4 is max_depth), so 4 pages; deep.test/ 2, /1 3, /2 4: 3 pages.

The earlier run (a run.json and its classify scores.parquet, written here as the
classify stage writes them) scores www.farm.test 0.9, honest.test 0.1, blog.farm.test 0.2,
deep.test 0.3; a, b and c.farm.test are not in it: new subdomains of farm.test.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spamflow.config import parse_config
from spamflow.crawl.crawler import crawl
from spamflow.crawl.loopback import LoopbackWeb, Reply
from spamflow.crawl.settings import CrawlSettings
from spamflow.errors import ConfigError
from spamflow.plan import plan_run

TEXT = {"Content-Type": "text/plain"}
HOSTS = {"honest.test": "127.0.31.1", "www.farm.test": "127.0.31.2", "deep.test": "127.0.31.3",
         "a.farm.test": "127.0.31.4", "b.farm.test": "127.0.31.4", "c.farm.test": "127.0.31.4",
         "blog.farm.test": "127.0.31.4"}
SCORES = {"www.farm.test": 0.9, "honest.test": 0.1, "blog.farm.test": 0.2, "deep.test": 0.3}


def page(*links: str, text: str) -> Reply:
    body = f"<html><body><p>{text}</p>" + "".join(f'<a href="{u}">x</a>' for u in links) + "</body></html>"
    return Reply(body=body.encode())


def site(host: str, path: str) -> Reply:
    if path == "/robots.txt":
        return Reply(status=404, body=b"", headers=TEXT)
    i = int(path.strip("/") or 0)
    chain = {"honest.test": 3, "www.farm.test": 6, "deep.test": 6}.get(host, 1)
    if i >= chain:
        return Reply(status=404, body=b"", headers=TEXT)
    links = [f"/{i + 1}"] if i + 1 < chain else []
    if host == "honest.test" and i == 0:
        links = [f"http://{h}/" for h in ("www.farm.test", "a.farm.test", "b.farm.test", "c.farm.test",
                                          "blog.farm.test")] + links
    if host == "www.farm.test" and i == 0:
        links.append("http://deep.test/")
    return page(*links, text=f"{host} page {i}")


def write_run(root: Path, scores: dict[str, float] = SCORES) -> Path:
    """An earlier run's workdir: run.json declaring classify's scores.parquet."""
    stage = root / "stages" / "classify-0"
    stage.mkdir(parents=True)
    pq.write_table(pa.table({"snapshot": ["s1"] * len(scores), "host": list(scores),
                             "score": list(scores.values())}), stage / "scores.parquet")
    (root / "run.json").write_text(json.dumps({"stages": {"classify": {
        "complete": True, "outputs": {"scores": str(stage / "scores.parquet")}}}}))
    return root


def crawl_web(tmp_path: Path, name: str, steer: dict | None) -> tuple[Counter, dict, list[dict]]:
    """Pages fetched per host (robots.txt left out), the counts, and steer.jsonl's rows."""
    with LoopbackWeb(site, HOSTS) as web:
        s = CrawlSettings.model_validate(dict(
            seeds=["http://honest.test/"], scope="any", max_depth=4, resolve=web.pins, host_delay=0.0,
            ip_delay=0.0, concurrency=4, **({"steer": steer} if steer else {})))
        summary = crawl(s, tmp_path / name, base_dir=tmp_path)
    fetched = Counter(h.host for h in web.log if h.path != "/robots.txt")
    rows = [json.loads(line) for line in summary.steer.read_text().splitlines()] if summary.steer else []
    return fetched, summary.counts, sorted(rows, key=lambda r: r["host"])


UNSTEERED = {"honest.test": 3, "www.farm.test": 4, "deep.test": 3, "a.farm.test": 1, "b.farm.test": 1,
             "c.farm.test": 1, "blog.farm.test": 1}


def test_without_steering_the_hand_worked_crawl(tmp_path):
    fetched, counts, rows = crawl_web(tmp_path, "plain", None)
    assert dict(fetched) == UNSTEERED and rows == []
    assert "hosts_steered" not in counts


def test_budget_subdomain_cap_and_link_weight(tmp_path):
    run = write_run(tmp_path / "earlier")
    steer = {"run": str(run), "spam_budget": 1, "subdomain_cap": 1, "link_weight": 0.5}
    fetched, counts, rows = crawl_web(tmp_path, "steered", steer)
    # www.farm.test: / only (budget 1; /1 refused); deep.test linked from it costs 2 levels:
    # deep.test/ at depth 3, /1 at 4, so 2 pages; a.farm.test is the one new subdomain the cap
    # admits (first in link order), b and c are refused; blog.farm.test is known: not capped
    assert dict(fetched) == {"honest.test": 3, "www.farm.test": 1, "deep.test": 2, "a.farm.test": 1,
                             "blog.farm.test": 1}
    assert counts["urls_steer_over_budget"] == 1
    assert counts["urls_steer_subdomain_capped"] == 2
    assert (counts["hosts_steered"], counts["hosts_steer_skipped"]) == (1, 0)
    assert (counts["subdomains_admitted"], counts["subdomains_capped"]) == (1, 2)
    assert counts["pages"] == 8
    assert [(r["host"], r["action"]) for r in rows] == [
        ("a.farm.test", "new_subdomain"), ("b.farm.test", "subdomain_capped"),
        ("c.farm.test", "subdomain_capped"), ("www.farm.test", "budget")]
    farm = rows[-1]
    assert farm["reasons"] == {"classify.scores.score": 0.9} and farm["budget"] == 1 and farm["link_depth"] == 2
    assert rows[1]["domain"] == "farm.test" and rows[1]["cap"] == 1
    assert rows[1]["steered_hosts_of_domain"] == ["www.farm.test"]


def test_budget_zero_skips_the_host_and_link_weight_zero_drops_its_links(tmp_path):
    run = write_run(tmp_path / "earlier")
    fetched, counts, rows = crawl_web(tmp_path, "skip", {"run": str(run), "spam_budget": 0, "subdomain_cap": 3})
    # www.farm.test is never fetched (not even robots.txt), so deep.test is never found
    assert dict(fetched) == {"honest.test": 3, "a.farm.test": 1, "b.farm.test": 1, "c.farm.test": 1,
                             "blog.farm.test": 1}
    assert counts["urls_steer_skipped"] == 1 and counts["hosts_steer_skipped"] == 1
    assert [(r["host"], r["action"]) for r in rows][-1] == ("www.farm.test", "skip")
    fetched, counts, _ = crawl_web(tmp_path, "nolinks", {"run": str(run), "spam_budget": 5, "subdomain_cap": 3,
                                                         "link_weight": 0.0})
    # the home page is fetched, its two links (/1 and deep.test/) are not followed
    assert fetched["www.farm.test"] == 1 and fetched["deep.test"] == 0
    assert counts["links_steer_not_followed"] == 2


def test_threshold_and_a_resumed_crawl_writes_each_host_once(tmp_path):
    run = write_run(tmp_path / "earlier")
    # threshold 0.95: no host is steered, so no domain is either: the crawl is the unsteered one
    fetched, counts, rows = crawl_web(tmp_path, "high", {"run": str(run), "threshold": 0.95})
    assert dict(fetched) == UNSTEERED and rows == [] and counts["hosts_steered"] == 0
    # threshold 0.25 also steers deep.test (0.3): budget 1 each
    steer = {"run": str(run), "threshold": 0.25, "spam_budget": 1, "subdomain_cap": 0}
    fetched, counts, rows = crawl_web(tmp_path, "low", steer)
    assert dict(fetched) == {"honest.test": 3, "www.farm.test": 1, "deep.test": 1, "blog.farm.test": 1}
    assert [r["host"] for r in rows if r["action"] == "budget"] == ["deep.test", "www.farm.test"]
    # the same crawl again on its directory resumes (nothing left to fetch): no row twice, same counts
    fetched_again, counts_again, rows_again = crawl_web(tmp_path, "low", steer)
    assert rows_again == rows and sum(fetched_again.values()) == 0
    for key in ("hosts_steered", "subdomains_capped", "urls_steer_over_budget", "urls_steer_subdomain_capped",
                "pages"):
        assert counts_again[key] == counts[key], key


CONFIG = """\
workdir: out
input:
  crawl:
    snapshot: s2
    seeds: [http://honest.test/]
    steer: {run: %s, evidence: %s}
"""


def test_validate_names_a_missing_run_stage_or_column(tmp_path, plugins):
    def error(run: str, evidence: str = "[classify.scores.score]") -> str:
        with pytest.raises(ConfigError) as exc:
            parse_config(CONFIG % (run, evidence), plugins, path=tmp_path / "c.yaml")
        return str(exc.value)

    assert "input.crawl (s2).steer.run: cannot read the run's" in error("nowhere")
    assert str(tmp_path / "nowhere") in error("nowhere")
    run = write_run(tmp_path / "earlier")
    message = error("earlier", "[classify.scores.score, quilt.hosts.quilted_fraction]")
    assert "evidence quilt.hosts.quilted_fraction" in message and "no complete stage 'quilt'" in message
    assert str(run / "run.json") in message
    pq.write_table(pa.table({"snapshot": ["s1"], "host": ["a"]}), Path(json.loads(
        (run / "run.json").read_text())["stages"]["classify"]["outputs"]["scores"]))
    message = error("earlier")
    assert "evidence classify.scores.score: cannot read snapshot, host, score" in message
    assert "scores.parquet" in message
    assert "steer.evidence.0" in error("earlier", "[classify]")  # a signal is stage.output.column
    with pytest.raises(ConfigError, match="steer.threshold|threshold"):
        parse_config(CONFIG.replace("evidence: %s}", "threshold: 2.0}") % "earlier", plugins,
                     path=tmp_path / "c.yaml")


def test_the_crawl_stage_identity_follows_the_scores_content(tmp_path, plugins):
    run = write_run(tmp_path / "earlier")

    def crawl_signature() -> str:
        return plan_run(parse_config(CONFIG % ("earlier", "[classify.scores.score]"), plugins, path=tmp_path / "c.yaml"),
                        plugins)["crawl"].signature

    before = crawl_signature()
    assert crawl_signature() == before
    scores = Path(json.loads((run / "run.json").read_text())["stages"]["classify"]["outputs"]["scores"])
    pq.write_table(pa.table({"snapshot": ["s1"], "host": ["www.farm.test"], "score": [0.4]}), scores)
    assert crawl_signature() != before


def test_link_weight_alone_shortens_the_reach_from_a_steered_host(tmp_path):
    run = write_run(tmp_path / "earlier")
    # a budget above the host's pages: only the link weight acts.  www.farm.test/ at depth 1,
    # /1 at 3 (1 + 2), whose links would be at 5 > max_depth: 2 pages; deep.test/ at 3, /1 at 4: 2
    fetched, counts, _ = crawl_web(tmp_path, "weight", {"run": str(run), "spam_budget": 100, "subdomain_cap": 3,
                                                        "link_weight": 0.5})
    assert dict(fetched) == {**UNSTEERED, "www.farm.test": 2, "deep.test": 2}
    assert counts["urls_steer_over_budget"] == 0
    # link_weight 0.3 costs ceil(1/0.3) = 4 levels: www.farm.test/ at 1, its links at 5: none followed
    fetched, _, _ = crawl_web(tmp_path, "weight3", {"run": str(run), "spam_budget": 100, "subdomain_cap": 3,
                                                    "link_weight": 0.3})
    assert dict(fetched) == {h: n for h, n in {**UNSTEERED, "www.farm.test": 1}.items() if h != "deep.test"}


def test_the_crawl_stage_writes_steer_jsonl_and_its_counts_to_run_json(tmp_path):
    import yaml

    from spamflow_workflows.cli import main

    write_run(tmp_path / "earlier")
    with LoopbackWeb(site, HOSTS) as web:
        (tmp_path / "c.yaml").write_text(yaml.safe_dump({"workdir": "work", "input": {"crawl": {
            "snapshot": "s2", "seeds": ["http://honest.test/"], "scope": "any", "max_depth": 4, "resolve": web.pins,
            "host_delay": 0.0, "ip_delay": 0.0, "steer": {"run": "earlier", "spam_budget": 1, "subdomain_cap": 1}}}}))
        assert main(["run", "-c", str(tmp_path / "c.yaml"), "--no-progress", "--local-scheduler"]) == 0
    crawl_stage = json.loads((tmp_path / "work" / "run.json").read_text())["stages"]["crawl"]
    rows = [json.loads(line) for line in (Path(crawl_stage["outputs"]["steer"]) / "s2.jsonl").read_text().splitlines()]
    assert sorted((r["host"], r["action"]) for r in rows) == [
        ("a.farm.test", "new_subdomain"), ("b.farm.test", "subdomain_capped"),
        ("c.farm.test", "subdomain_capped"), ("www.farm.test", "budget")]
    counts = crawl_stage["counts"]
    assert (counts["s2_hosts_steered"], counts["s2_subdomains_capped"], counts["s2_urls_steer_over_budget"]) == (1, 2, 1)
    # deep.test/, found on the steered www.farm.test, went to the low lane and was fetched
    assert (counts["s2_urls_steer_low_lane"], counts["s2_pages_steer_low_lane"]) == (1, 1)
    assert counts["s2_pages"] == 8  # as test_budget_subdomain_cap_and_link_weight worked out
    assert set(crawl_stage["input_files"]) == {"s2.steer.run", "s2.steer.classify.scores.score"}


def test_spamflow_crawl_says_what_was_steered(tmp_path, capsys):
    import yaml

    from spamflow_workflows.cli import main

    write_run(tmp_path / "earlier")
    with LoopbackWeb(site, HOSTS) as web:
        (tmp_path / "c.yaml").write_text(yaml.safe_dump({"workdir": "w", "input": {"crawl": {
            "snapshot": "s2", "seeds": ["http://honest.test/"], "scope": "any", "max_depth": 4, "resolve": web.pins,
            "host_delay": 0.0, "ip_delay": 0.0, "steer": {"run": "earlier/run.json", "subdomain_cap": 1}}}}))
        assert main(["crawl", "-c", str(tmp_path / "c.yaml"), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("s2: 8 pages") and "; 1 hosts steered, 2 subdomains capped: " in out
    assert out.rstrip().endswith(str(tmp_path / "w" / "crawl" / "s2" / "steer.jsonl"))


def test_any_stages_declared_column_steers(tmp_path):
    """A third-party detector's per-host table steers a crawl as the built-in ones do: the
    signal is named stage.output.column, nothing in the crawler knows the detector."""
    root = tmp_path / "earlier"
    stage = root / "stages" / "linkbuyers-0"
    stage.mkdir(parents=True)
    pq.write_table(pa.table({"snapshot": ["s1", "s1"], "host": ["www.farm.test", "honest.test"],
                             "paid_link_share": [0.8, 0.1]}), stage / "hosts.parquet")
    (root / "run.json").write_text(json.dumps({"stages": {"linkbuyers": {
        "complete": True, "outputs": {"hosts": str(stage / "hosts.parquet")}}}}))
    steer = {"run": str(root), "evidence": ["linkbuyers.hosts.paid_link_share"], "spam_budget": 0}
    fetched, counts, rows = crawl_web(tmp_path, "steered", steer)
    assert "www.farm.test" not in fetched and fetched["honest.test"] == UNSTEERED["honest.test"]
    assert [(r["host"], r["action"], r["reasons"]) for r in rows if r["action"] == "skip"] == [
        ("www.farm.test", "skip", {"linkbuyers.hosts.paid_link_share": 0.8})]
