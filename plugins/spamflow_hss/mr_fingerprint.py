"""The map-only mrjob job that fingerprints pages on a cluster (HSS Procedure 1 per page).

Input lines: ``doc_id<TAB>noise`` with the noise as a JSON string (it holds tabs and line
feeds).  Output lines: ``doc_id<TAB>ngrams<TAB>fingerprint``, the fingerprint as m
16-digit hex numbers without separators (``ffffffffffffffff`` is an empty dimension).
Imports nothing of spamflow, so that it runs on workers that only have this package.
"""

import json

from mrjob.job import MRJob
from mrjob.protocol import RawProtocol, RawValueProtocol

from spamflow_hss.fingerprint import fingerprint_hashes, orderings
from spamflow_hss.markup_noise import NOISE_MODES, page_noise
from spamflow_hss.noise_window import ngram_count, window_ngram_hashes


def fingerprint_line(line: str, n: int, m: int, seed: int, window: int = 0,
                     noise_mode: str = "paper") -> tuple[str, str]:
    """One input line to (doc_id, ``ngrams<TAB>hex fingerprint``): ngrams counts every n-gram of
    the noise (``noise_mode``: all of it, or its tags), the fingerprint is over the first and last
    ``window`` (all with 0)."""
    doc_id, text = line.split("\t", 1)
    noise = page_noise(json.loads(text), noise_mode)
    vector = fingerprint_hashes(window_ngram_hashes(noise, n, window), orderings(m, seed))
    return doc_id, f"{ngram_count(noise, n)}\t{vector.astype('>u8').tobytes().hex()}"


class MRFingerprint(MRJob):
    INPUT_PROTOCOL = RawValueProtocol
    OUTPUT_PROTOCOL = RawProtocol

    def configure_args(self):
        super().configure_args()
        self.add_passthru_arg("--n", type=int, required=True, help="characters per n-gram")
        self.add_passthru_arg("--m", type=int, required=True, help="fingerprint dimensions")
        self.add_passthru_arg("--seed", type=int, required=True, help="seed of the orderings")
        self.add_passthru_arg("--window", type=int, default=0,
                              help="fingerprint the first and last WINDOW n-grams of a page (0: all)")
        self.add_passthru_arg("--noise", choices=NOISE_MODES, default="paper",
                              help="paper: the whole HTML noise; markup: its part inside tags; "
                                   "markup-urls: that with URL values cut to one mark")

    def mapper(self, _, line):
        yield fingerprint_line(line, self.options.n, self.options.m, self.options.seed, self.options.window,
                                    self.options.noise)


if __name__ == "__main__":
    MRFingerprint.run()
