"""The map-only mrjob job that scores host rows with a trained model file.

Input lines: ``row<TAB>x1,x2,...`` — a host's features in the model's order (``bundle["features"]``),
each as Python writes a float (``repr``: exact; ``nan`` for a missing value).  Output lines:
``row<TAB>score``, the spam score as ``repr`` of the float64, exact.  Each mapper loads the
model once (``mapper_init``) and scores its rows in blocks of ``--block`` rows (a row's score
depends on that row only).  ``--model`` is an mrjob file option: mrjob copies the file to
each task's working directory (uploads it to HDFS or S3 for a cluster), so only the driver
needs to read the path given.

The model is a scikit-learn ensemble saved by :mod:`spamflow_ensemble.persist`: the workers
need the scikit-learn and skops versions that trained it installed; the code of
``spamflow_ensemble`` and of spamflow's core, which the model's classes import, is shipped
by the driver (``--py-files``, :func:`spamflow_ensemble.mapreduce_scoring.score_mapreduce`).
"""

import numpy as np
from mrjob.job import MRJob
from mrjob.protocol import RawProtocol, RawValueProtocol

from spamflow_ensemble.model import score
from spamflow_ensemble.persist import load_model


def parse_row(text: str, width: int) -> np.ndarray:
    """The features of one input line (after the row number)."""
    values = np.array(text.split(",") if text else [], np.float64)
    if len(values) != width:
        raise ValueError(f"a row of {len(values)} features for a model of {width}: {text[:80]!r}")
    return values


class MRScore(MRJob):
    INPUT_PROTOCOL = RawValueProtocol
    OUTPUT_PROTOCOL = RawProtocol

    def configure_args(self):
        super().configure_args()
        self.add_file_arg("--model", required=True, help="model file written by spamflow train or the classify stage")
        self.add_passthru_arg("--block", type=int, default=4096, help="rows scored at once")

    def mapper_init(self):
        self.bundle = load_model(self.options.model)
        self.rows: list[str] = []
        self.features: list[np.ndarray] = []

    def mapper(self, _, line):
        row, text = line.split("\t", 1)
        self.rows.append(row)
        self.features.append(parse_row(text, len(self.bundle["features"])))
        if len(self.rows) >= self.options.block:
            yield from self._scored()

    def mapper_final(self):
        yield from self._scored()

    def _scored(self):
        if self.rows:
            scores = score(self.bundle, np.stack(self.features))
            yield from zip(self.rows, (repr(float(s)) for s in scores))
        self.rows, self.features = [], []


if __name__ == "__main__":
    MRScore.run()
