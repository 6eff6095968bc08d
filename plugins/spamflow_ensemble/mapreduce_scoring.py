"""Scoring every host with the map-only job ``mr_score`` instead of in this process: training
stays on one machine (10^5-10^6 labelled hosts fit), scoring all hosts is spread over the
mapreduce runner.  The rows go out as text lines, the scores come back exact (``repr``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from spamflow.errors import SpamflowError
from spamflow.mr import run_job
from spamflow.mr.driver import package_zip


def score_mapreduce(model: Path, X: np.ndarray, work: Path, runner: str,
                    runner_args: tuple[str, ...] = ()) -> np.ndarray:
    """The spam score of each row of ``X`` (the model's features, in its order) by the model
    file ``model``, computed by ``mr_score`` on ``runner``."""
    from spamflow_ensemble.mr_score import MRScore

    if not len(X):
        return np.empty(0)
    work.mkdir(parents=True, exist_ok=True)
    rows = work / "score_rows.tsv"
    with open(rows, "w", encoding="ascii") as fh:
        for number, values in enumerate(X.tolist()):
            fh.write(f"{number}\t{','.join(map(repr, values))}\n")
    if runner != "inline":  # the model's classes (EnsembleSelection) import spamflow's core: ship it too
        runner_args = (*runner_args, "--py-files", str(package_zip("spamflow")))
    output = run_job(MRScore, [rows], work / "scores.tsv", runner=runner, args=["--model", str(model)],
                     runner_args=runner_args)
    scores = np.full(len(X), np.nan)
    seen = np.zeros(len(X), bool)
    with open(output, encoding="ascii") as fh:
        for number, line in enumerate(fh, 1):
            key, value = line.rstrip("\n").split("\t")
            row = int(key)
            if seen[row]:
                raise SpamflowError(f"{output}, line {number}: row {row} scored twice by the mr_score job")
            seen[row], scores[row] = True, float(value)
    if not seen.all():
        raise SpamflowError(f"{output}: the mr_score job returned no score for {int((~seen).sum())} of the "
                            f"{len(X)} rows of {rows} (first: row {int(np.flatnonzero(~seen)[0])})")
    return scores
