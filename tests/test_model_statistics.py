"""The frozen statistics a model carries (spamflow_ensemble.frozen): copied beside the model
at training, set as detector parameters at scoring only when they should be, and bad files
named. The end-to-end path through the commands is in test_incremental_scoring.py."""

from __future__ import annotations

import json

import pytest

from spamflow_content.params import ContentParams
from spamflow_ensemble.frozen import freeze_params, load_statistics, save_statistics
from spamflow_links.params import LinksParams


def _model(tmp_path):
    run = tmp_path / "run"
    (run / "graphs").mkdir(parents=True)
    (run / "corpus_stats.json").write_text('{"x": 1}')
    (run / "frozen.npz").write_bytes(b"npz")
    stages = {"content": {"corpus_stats": run / "corpus_stats.json", "hosts": run / "hosts.parquet"},
              "links": {"frozen": run / "frozen.npz", "graphs": run / "graphs"}, "obvious": {}}
    declared = {"content": {"corpus_stats": "corpus_stats"}, "links": {"frozen": "frozen_links"}, "obvious": {}}
    model = tmp_path / "m.skops"
    kept = save_statistics(model, stages, declared, str(run))
    return model, kept, run


def test_declared_outputs_are_copied_and_listed(tmp_path):
    model, kept, run = _model(tmp_path)
    assert kept == {"content": {"corpus_stats": "content/corpus_stats.json"}, "links": {"frozen_links": "links/frozen.npz"}}
    folder = tmp_path / "m.skops.statistics"
    assert (folder / "content" / "corpus_stats.json").read_text() == '{"x": 1}'
    assert (folder / "links" / "frozen.npz").read_bytes() == b"npz"
    data = load_statistics(model)
    assert data["workdir"] == str(run)
    assert data["detectors"]["links"]["frozen_links"] == str(folder / "links" / "frozen.npz")
    # retraining replaces the folder whole: nothing of an earlier run is left
    (folder / "content" / "stale.json").write_text("{}")
    save_statistics(model, {"content": {"corpus_stats": run / "corpus_stats.json"}},
                    {"content": {"corpus_stats": "corpus_stats"}}, str(run))
    assert not (folder / "content" / "stale.json").exists() and not (folder / "links").exists()


def test_auto_freezes_only_another_run_and_the_config_wins(tmp_path):
    model, _, run = _model(tmp_path)
    stats = load_statistics(model)
    folder = tmp_path / "m.skops.statistics"

    def detectors():
        return {"content": ContentParams(), "links": LinksParams(), "obvious": ContentParams()}

    same = detectors()
    assert freeze_params(same, stats, str(run), "auto") == {} and same["content"].corpus_stats is None
    other = detectors()
    frozen = freeze_params(other, stats, "/elsewhere", "auto")
    assert frozen == {"content": {"corpus_stats": str(folder / "content" / "corpus_stats.json")},
                      "links": {"frozen_links": str(folder / "links" / "frozen.npz")}}
    assert other["links"].frozen_links == str(folder / "links" / "frozen.npz")
    assert other["links"].trust_seeds == [] and other["obvious"].corpus_stats is None  # nothing else touched
    forced = detectors()
    assert set(freeze_params(forced, stats, str(run), "model")) == {"content", "links"}
    assert freeze_params(detectors(), stats, "/elsewhere", "run") == {}
    mine = {"content": ContentParams(corpus_stats=str(tmp_path / "mine.json")), "links": LinksParams()}
    assert set(freeze_params(mine, stats, "/elsewhere", "auto")) == {"links"}
    assert mine["content"].corpus_stats == str(tmp_path / "mine.json")
    # a model without statistics: nothing to freeze, unless asked for explicitly
    assert freeze_params(detectors(), None, "/elsewhere", "auto") == {}
    with pytest.raises(SystemExit, match="no frozen statistics"):
        freeze_params(detectors(), None, "/elsewhere", "model")


def test_bad_statistics_files_are_named(tmp_path):
    model, _, _ = _model(tmp_path)
    folder = tmp_path / "m.skops.statistics"
    (folder / "links" / "frozen.npz").unlink()
    with pytest.raises(SystemExit, match=r"detectors\.links\.frozen_links: .*frozen\.npz is missing"):
        load_statistics(model)
    (folder / "statistics.json").write_text("{not json")
    with pytest.raises(SystemExit, match="statistics.json: not JSON"):
        load_statistics(model)
    (folder / "statistics.json").write_text(json.dumps({"format": "other"}))
    with pytest.raises(SystemExit, match="not a spamflow-model-statistics/1 file"):
        load_statistics(model)
    assert load_statistics(tmp_path / "never-trained.skops") is None


def test_a_bad_frozen_links_file_is_named(tmp_path):
    from spamflow_links.incremental import FrozenLinks

    path = tmp_path / "frozen.npz"
    path.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match=r"detectors\.links\.frozen_links: .*frozen\.npz: cannot read it"):
        FrozenLinks.load(path)
    import numpy as np

    np.savez(path, format=np.array("something-else"))
    with pytest.raises(ValueError, match="is not a spamflow-links-frozen/1 file"):
        FrozenLinks.load(path)
