"""The classifier's part of the run report: its section (threshold, AUC, ROC curve, AUC by
feature group and spam family, the ensemble) and its verdict per host in the host table (score,
label, true label and the evidence that explains the score)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from spamflow import hookimpl
from spamflow.report import HostColumns, HostScore, ReportSection

STAGE = "classify"

CLASSIFY = """
<p>Threshold {{ e.get("threshold")|num }} &middot; AUC {{ e.get("auc")|num or "n/a (no test labels)" }}
&middot; baseline AUC {{ e.get("baseline_auc")|num or "n/a" }} &middot; predicted:
{% for k, v in labels|dictsort %}{{ k }} {{ v }}{{ ", " if not loop.last }}{% endfor %}</p>
{% if e.get("train") %}<p>Trained on {{ e.train.snapshot }} ({{ e.train.hosts }} hosts, {{ e.train.spam }} spam);
tested on {{ e.test.snapshot if e.get("test") else "-" }} ({{ e.test.hosts if e.get("test") else 0 }} hosts,
{{ e.test.spam if e.get("test") else 0 }} spam).</p>{% endif %}
{% if figure %}<figure><img src="{{ figure }}" alt="ROC curve"><figcaption>ROC curve on the test hosts</figcaption>
</figure>{% endif %}
<div class="tables">
{% for title, key, col in [("AUC by feature group", "auc_by_group", "feature group"),
                          ("AUC by spam family", "auc_by_family", "family")] %}
{% if e.get(key) %}<table class="grid small"><caption>{{ title }}</caption><thead><tr><th>{{ col }}</th><th>AUC</th>
</tr></thead><tbody>{% for k, v in e[key].items() %}<tr><td>{{ k }}</td><td class="num">{{ v|num }}</td></tr>
{% endfor %}</tbody></table>{% endif %}{% endfor %}
{% if e.get("ensemble") %}<table class="grid small"><caption>Ensemble</caption><thead><tr><th>model</th>
<th>weight</th></tr></thead><tbody>{% for m in e.ensemble %}<tr><td>{{ m.model }}</td><td class="num">
{{ m.weight|num }}</td></tr>{% endfor %}</tbody></table>{% endif %}
</div>
"""


def roc_curve(fpr: Sequence[float], tpr: Sequence[float], auc: float | None, path: Path) -> None:
    """The classifier's ROC curve on its test hosts, with the chance diagonal."""
    from spamflow.report.plots import pyplot

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(4.2, 4))
    ax.plot(fpr, tpr, drawstyle="steps-post", label=f"AUC {auc:.3f}" if auc is not None else "ROC")
    ax.plot([0, 1], [0, 1], linestyle=":", color="grey")
    ax.set_xlabel("false positive rate")
    ax.set_ylabel("true positive rate")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.01)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def classify_section(record: dict[str, Any], assets: Path) -> ReportSection:
    import pyarrow.parquet as pq

    from spamflow.report.sections import environment

    path = Path(record["outputs"].get("evaluation", ""))
    evaluation: dict[str, Any] = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    figure = None
    roc = evaluation.get("roc")
    if roc and roc.get("fpr"):
        roc_curve(roc["fpr"], roc["tpr"], evaluation.get("auc"), assets / "roc.png")
        figure = "assets/roc.png"
    scores = Path(record["outputs"].get("scores", ""))
    labels: dict[str, int] = {}
    if scores.is_file():
        for value in pq.read_table(scores, columns=["label"]).column("label").to_pylist():
            labels[value] = labels.get(value, 0) + 1
    html = environment().from_string(CLASSIFY).render(e=evaluation, figure=figure, labels=labels)
    return ReportSection("classify", "Classifier", html, order=10)


def host_scores(record: dict[str, Any]) -> dict[tuple[str, str], HostScore] | None:
    """Each scored host's verdict; its evidence names the detectors that fired on it."""
    import pyarrow.parquet as pq

    path = record.get("outputs", {}).get("scores")
    if not path or not Path(path).is_file():
        return None
    verdicts = {}
    for item in pq.read_table(path).to_pylist():
        evidence = json.loads(item["evidence"]) if item.get("evidence") else None
        verdicts[(item["snapshot"], item["host"])] = HostScore(
            item["score"], item["label"], item.get("true_label"), evidence,
            list(evidence.get("detectors", {})) if evidence else None)
    return verdicts


@hookimpl
def spamflow_report_host_columns(stage: str, record: dict[str, Any]) -> HostColumns | None:
    return HostColumns(scores=host_scores(record)) if stage == STAGE else None


@hookimpl
def spamflow_report_section(stage: str, record: dict[str, Any], assets: Path) -> ReportSection | None:
    return classify_section(record, assets) if stage == STAGE else None
