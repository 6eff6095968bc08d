"""The report's host table: hosts by classifier score, each with the title of its page
nearest the root, in its own script (hand-made page and score tables)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from spamflow.plugins import build_plugins
from spamflow.report.host_columns import HostColumns
from spamflow.report.host_table import build_host_table
from spamflow.report.render import answers

from content_pages import page_row, write_pages


def test_hosts_by_score_with_the_title_of_their_shortest_url(tmp_path):
    pages = write_pages([
        page_row("http://037426.cn/a/b.html", ["x"], snapshot="2020-08", title="深层页面"),
        page_row("http://037426.cn/", ["x"], snapshot="2020-08", title="亚洲精品无码免费视频"),
        page_row("http://037426.cn/", ["x"], snapshot="2020-09", title="next month"),
        page_row("http://01spb.ru/b/", ["x"], snapshot="2020-08", title="Б"),
        page_row("http://01spb.ru/a/", ["x"], snapshot="2020-08", title="О компании"),  # same length: the smaller URL wins
        page_row("http://notitle.example/", ["x"], snapshot="2020-08"),
        page_row("http://low.example/", ["x"], snapshot="2020-08", title="low"),
    ], tmp_path / "pages")
    scores = tmp_path / "scores.parquet"
    pq.write_table(pa.Table.from_pylist([
        {"snapshot": "2020-08", "host": host, "score": score, "label": None, "true_label": None, "evidence": None}
        for host, score in [("01spb.ru", 0.2), ("037426.cn", 0.9), ("notitle.example", 0.5), ("low.example", 0.1)]
    ]), scores)
    stages = {"parse": {"outputs": {"pages": str(pages)}}, "classify": {"outputs": {"scores": str(scores)}}}
    plugins = build_plugins()  # the classifier's plugin says how its scores are read, as in a report
    declared = {name: columns[0][1] for name, record in stages.items()
                if (columns := answers(plugins, "spamflow_report_host_columns", HostColumns, stage=name, record=record))}
    assert "classify" in declared
    table = build_host_table(stages, {}, max_hosts=3, declared=declared)
    assert [(r.host, r.score, r.title) for r in table.rows] == [
        ("037426.cn", 0.9, "亚洲精品无码免费视频"), ("notitle.example", 0.5, ""), ("01spb.ru", 0.2, "О компании")]
    assert table.scored and table.hidden == 1
