"""Labels the cross-fitting cannot use (one class too rare, every host in one group, every
spam host in one group) are a clear error saying what to change, never a scikit-learn
traceback from inside a fit."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spamflow.errors import BadInputError
from spamflow_ensemble.selection import EnsembleSelection, make_folds


def test_too_few_hosts_of_a_class():
    y = np.array([1] + [0] * 20)
    with pytest.raises(BadInputError, match="at least 2 labelled hosts of each class, got 1 spam and 20 nonspam"):
        make_folds(y, None, 5, 0)
    with pytest.raises(BadInputError, match="got 1 spam"):
        EnsembleSelection(library="fast", n_folds=3, n_bags=1, n_iterations=2).fit(np.zeros((21, 2)), y)


def test_every_host_in_one_group():
    y = np.array([1, 1, 1] + [0] * 10)
    with pytest.raises(BadInputError, match="all 13 labelled hosts fall in one group"):
        make_folds(y, np.zeros(13, dtype=int), 5, 0)


def test_every_spam_host_in_one_group():
    y = np.array([1, 1] + [0] * 10)
    groups = np.array([0, 0] + list(range(1, 11)))  # both spam hosts on one domain: some fold trains on none
    with pytest.raises(BadInputError, match=r"no spam host \(its 2 hosts share 1 group"):
        make_folds(y, groups, 3, 0)
    assert len(make_folds(y, None, 3, 0)) == 2  # without groups the two spam hosts go to different folds


def test_train_command_says_so_in_one_line(tmp_path):
    hosts = [f"h{i}.example.co.uk" for i in range(12)]  # one registered domain: one group
    pq.write_table(pa.table({"host": hosts, "x": [float(i) for i in range(12)]}), tmp_path / "t.parquet")
    (tmp_path / "labels.csv").write_text("host,label\n" + "".join(f"{h},{'spam' if i < 4 else 'nonspam'}\n"
                                                                 for i, h in enumerate(hosts)))
    out = subprocess.run([sys.executable, "-m", "spamflow_workflows", "train", "--table", str(tmp_path / "t.parquet"),
                          "--labels", str(tmp_path / "labels.csv"), "-o", str(tmp_path / "m.skops")],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode != 0
    assert "all 12 labelled hosts fall in one group" in out.stderr and "Traceback" not in out.stderr, out.stderr
    assert not (tmp_path / "m.skops").exists()
