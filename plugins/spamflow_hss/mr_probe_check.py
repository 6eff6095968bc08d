"""The MapReduce probe/check of HSS Procedure 2, for fingerprints that do not fit one process.

Input lines: ``snapshot<TAB>row<TAB>fingerprint``: the snapshot's number, the page's row in
that snapshot's fingerprint table, the fingerprint as m 16-digit hex numbers (as
``mr_fingerprint`` writes it).  The mapper emits the page under each probe whose k
dimensions it has (its bucket: ``snapshot:probe:key``); the reducer checks the bucket's
pages, in row order, as the in-memory pass does (:func:`spamflow_hss.bucket_check.check_bucket`)
and writes a spanning forest of the similar pairs.  Output lines:

* ``snapshot<TAB>row_a<TAB>row_b``: a similar pair (row_a is the first row of its bucket's component);
* ``#stats<TAB>{json}``: per reducer task, snapshot and probe, what the checks cost
  (``buckets``, ``largest_bucket``, ``checks``, ``edges``, ``max_rounds``, ``unchecked``).

Imports nothing of spamflow, so that it runs on workers that only have this package.
"""

import json

import numpy as np
from mrjob.job import MRJob
from mrjob.protocol import RawProtocol, RawValueProtocol

from spamflow_hss.bucket_check import check_bucket, probe_keys
from spamflow_hss.probing import probe_subsets

STATS_KEY = "#stats"


def read_hex(fingerprints: list[str]) -> np.ndarray:
    """(len, m) uint64 fingerprints from their hex form."""
    return np.frombuffer(bytes.fromhex("".join(fingerprints)), ">u8").astype(np.uint64).reshape(len(fingerprints), -1)


class MRProbeCheck(MRJob):
    INPUT_PROTOCOL = RawValueProtocol
    INTERNAL_PROTOCOL = RawProtocol
    OUTPUT_PROTOCOL = RawProtocol

    def configure_args(self):
        super().configure_args()
        self.add_passthru_arg("--m", type=int, required=True, help="fingerprint dimensions")
        self.add_passthru_arg("--k", type=int, required=True, help="dimensions per probe key")
        self.add_passthru_arg("--p", type=int, required=True, help="probes")
        self.add_passthru_arg("--t", type=int, required=True, help="a pair matches on more than t dimensions")
        self.add_passthru_arg("--seed", type=int, required=True, help="seed of the probe subsets")
        self.add_passthru_arg("--max-representatives", type=int, required=True,
                              help="most representatives a bucket is checked against")

    def _subsets(self) -> np.ndarray:
        return probe_subsets(self.options.m, self.options.k, self.options.p, self.options.seed)

    def mapper_init(self):
        self.subsets = self._subsets()

    def mapper(self, _, line):
        snapshot, row, hexed = line.split("\t")
        probes, keys = probe_keys(read_hex([hexed])[0], self.subsets)
        for probe, key in zip(probes.tolist(), keys.tolist()):
            yield f"{snapshot}:{probe}:{key:016x}", f"{row}:{hexed}"

    def reducer_init(self):
        self.subsets = self._subsets()
        self.stats: dict[tuple[int, int], dict[str, int]] = {}

    def reducer(self, key, values):
        snapshot, probe, _ = key.split(":")
        members = sorted((int(row), hexed) for row, hexed in (value.split(":") for value in values))
        if len(members) < 2:
            return
        pairs, stats = check_bucket(read_hex([h for _, h in members]), self.subsets[int(probe)], self.options.t,
                                    self.options.max_representatives)
        total = self.stats.setdefault((int(snapshot), int(probe)), dict.fromkeys(
            ("buckets", "largest_bucket", "checks", "edges", "max_rounds", "unchecked"), 0))
        for name in ("buckets", "checks", "edges", "unchecked"):
            total[name] += getattr(stats, name)
        total["largest_bucket"] = max(total["largest_bucket"], stats.largest_bucket)
        total["max_rounds"] = max(total["max_rounds"], stats.max_rounds)
        for a, b in pairs:
            yield snapshot, f"{members[a][0]}\t{members[b][0]}"

    def reducer_final(self):
        for (snapshot, probe), total in sorted(self.stats.items()):
            yield STATS_KEY, json.dumps({"snapshot": snapshot, "probe": probe, **total}, sort_keys=True)


if __name__ == "__main__":
    MRProbeCheck.run()
