"""The real-page spam benchmark's corpus builder (benchmarks/eval_real_spam.py) on a tiny slice:
the WARC holds exactly the hosts, pages and labels it says it built, counted again with warcio."""

from __future__ import annotations

import csv
import json
import sys
import tarfile
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from warcio.archiveiterator import ArchiveIterator

from conftest import shared_data

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))


def _clough_documents() -> tuple[tuple[str, ...], ...]:
    """A few real texts (the Clough-Stevenson corpus only: the benchmark's full text pool,
    with PAN-13, takes ~15 s to read)."""
    docs = []
    with tarfile.open(shared_data("clough-stevenson-plagiarism-corpus", "corpus-20090418.tar.gz")) as tar:
        for member in sorted(tar.getmembers(), key=lambda m: m.name):
            if member.isfile() and member.name.endswith(".txt"):
                words = tar.extractfile(member).read().decode("utf-8", "replace").split()
                if len(words) >= 80:
                    docs.append(tuple(words))
    return tuple(docs[:40])


@pytest.mark.slow  # ~5 s: the first pages of the 146 MB trafilatura xz stream, the real kit
def test_tiny_corpus_is_as_built(tmp_path, monkeypatch):
    for part in ("doorway-spam-gambling", "html-trafilatura-eval", "html-mozilla-readability",
                 "html-article-extraction-benchmark", "pan13-text-alignment-no-obfuscation-subset"):
        shared_data(part)
    import doorway_families
    import eval_real_spam

    monkeypatch.setattr(doorway_families, "_documents", _clough_documents)
    truth = eval_real_spam.build_corpus(tmp_path, seed=3, kit_pages=4, pages_per_family=2, family_domains=1,
                                        network=4, honest_limit=3)

    pages: Counter[str] = Counter()
    urls = []
    ids_seen: dict[str, set[str]] = {}
    with open(tmp_path / "corpus" / "real-spam.warc.gz", "rb") as fh:
        for record in ArchiveIterator(fh):
            assert record.rec_type == "response"
            assert record.http_headers.get_statuscode() == "200"
            url = record.rec_headers.get_header("WARC-Target-URI")
            host = urlsplit(url).hostname
            assert record.rec_headers.get_header("WARC-IP-Address")
            body = record.content_stream().read().decode("utf-8", "replace")
            ids_seen[host] = {k for k, v in eval_real_spam.NETWORK_IDS.items() if v in body}
            pages[host] += 1
            urls.append(url)
    assert len(urls) == len(set(urls))
    assert pages == Counter({h: t["pages"] for h, t in truth.items()})

    with open(tmp_path / "labels.csv", newline="", encoding="utf-8") as fh:
        labels = {row["host"]: row["label"] for row in csv.DictReader(fh)}
    assert labels == {h: t["label"] for h, t in truth.items()}
    assert json.loads((tmp_path / "truth.json").read_text()) == truth

    kinds = Counter(t["kind"] for t in truth.values())
    kind_pages = Counter()
    for t in truth.values():
        kind_pages[t["kind"]] += t["pages"]
    assert kinds["kit"] == 1 and truth[doorway_families.KIT_HOST]["label"] == "spam"
    assert kind_pages["kit"] == 4
    assert kinds["network"] == 4 and kinds["family"] == 12  # 6 skeletons x (whole, lean), one domain each
    assert kind_pages["family"] == 24
    assert kind_pages["trafilatura"] == kind_pages["article"] == kind_pages["readability"] == 3
    network_ids = set()
    for host, t in truth.items():
        assert t["label"] == ("nonspam" if t["kind"] in ("trafilatura", "article", "readability") else "spam")
        if t["kind"] == "network":  # every network host carries the bta and at least one more id
            assert "bta" in ids_seen[host] and len(ids_seen[host]) >= 2
            network_ids |= ids_seen[host]
        else:
            assert not ids_seen[host]
    assert network_ids == set(eval_real_spam.NETWORK_IDS)
