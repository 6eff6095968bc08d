"""``noise: markup-urls`` (markup_noise.py): the markup noise with every quoted URL attribute
value cut to its first mark and line ends read as LF.  Checked against a character-by-
character scanner of the definition, on a hand-built template and its 2,000-row listing page
(apart under ``markup``, joined under ``markup-urls``, with the exact n-gram sets computed by
brute force), and through both fingerprinting engines."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spamflow.words import html_noise
from spamflow_hss.fingerprint import fingerprint, matched_dimensions
from spamflow_hss.fingerprint_table import fingerprint_pages, fingerprint_pages_mapreduce, read_fingerprints
from spamflow_hss.markup_noise import page_noise
from spamflow_hss.ngram_hash import ngram_hashes, reference_ngram_hash
from spamflow_hss.params import HSSParams
from spamflow_hss.probing import cluster_fingerprints

N, M = 32, 128


def scanned(noise: str) -> str:
    """The definition, one character at a time: line ends to LF; keep what lies between a
    ``<`` and the next ``>`` with no ``<`` between; inside a kept tag, a quoted value whose
    first characters are ``://``, ``//`` or ``/`` keeps its quotes and its first character."""
    text = noise.replace("\r\n", "\n").replace("\r", "\n")
    out = []
    start = None
    for i, ch in enumerate(text):
        if ch == "<":
            start = i
        elif ch == ">" and start is not None:
            out.append(_values_cut(text[start:i + 1]))
            start = None
    return "".join(out)


def _values_cut(tag: str) -> str:
    out, i = [], 0
    while i < len(tag):
        ch = tag[i]
        end = tag.find(ch, i + 1) if ch in "\"'" else -1
        if end < 0:
            out.append(ch)
            i += 1
            continue
        inner = tag[i + 1:end]
        is_url = inner.startswith("://") or inner.startswith("//") or inner.startswith("/")
        out.append(ch + inner[:1] + ch if is_url else tag[i:end + 1])
        i = end + 1
    return "".join(out)


def ngram_set(noise: str) -> set[int]:
    """Every distinct n-gram of ``noise`` (Python substrings) hashed one by one with Python
    integers (the brute force)."""
    return {reference_ngram_hash(gram, N) for gram in {noise[j:j + N] for j in range(len(noise) - N + 1)}}


def _words(rng: random.Random, low: int, high: int, sep: str = "-") -> str:
    return sep.join(rng.choice(["open", "data", "spend", "council", "nhs", "2013", "q4", "report", "trust", "uk"])
                    for _ in range(rng.randint(low, high)))


def template(content: str, rng: random.Random) -> str:
    """A CKAN-like page: head, navigation and footer of fixed markup around ``content``."""
    nav = "\n".join(f'    <li class="nav-item"><a href="/{_words(rng, 1, 2)}/">{_words(rng, 1, 2, " ")}</a></li>'
                    for _ in range(25))
    footer = "\n".join(f'  <p class="footer-link"><a href="https://www.example.gov.uk/{_words(rng, 1, 3)}" '
                       f'title="{_words(rng, 2, 4, " ")}">x</a> | <span>(c) 2014</span></p>' for _ in range(25))
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n  <meta charset=\"utf-8\" />\n"
            "  <link rel=\"stylesheet\" href=\"/css/ckan-main.min.css?v=1.2\" />\n"
            "  <title>Data portal</title>\n</head>\n<body class=\"page-ckan\">\n"
            "  <div id=\"header\" class=\"navbar navbar-inverse\">\n  <ul class=\"nav nav-pills\">\n"
            f"{nav}\n  </ul>\n  </div>\n  <div id=\"content\" class=\"span-9 main\">\n{content}\n  </div>\n"
            f"  <div id=\"footer\">\n{footer}\n  </div>\n</body>\n</html>\n")


def listing(rows: int, rng: random.Random) -> str:
    """A statistics table: ``rows`` rows, each linking to one item by its own path (1-3
    segments of 1-8 words, each gap a ``-``, ``_`` or ``.``, as real slugs and file names are)."""
    body = []
    for _ in range(rows):
        slug = "/".join("".join(w + rng.choice("-_.-") for w in _words(rng, 1, 8, " ").split())[:-1]
                        for _ in range(rng.randint(1, 3)))
        query = f"?id={rng.randint(1, 999)}&amp;page={rng.randint(1, 9)}" if rng.random() < 0.2 else ""
        body.append(f'<tr><td><a href="http://data.example.gov.uk/dataset/{slug}{query}">{_words(rng, 2, 6, " ")}'
                    f'</a></td><td class="count">{rng.randint(1, 90000)}</td></tr>')
    return '<table class="table table-striped">\n' + "\n".join(body) + "\n</table>"


@pytest.fixture(scope="module")
def pages() -> list[str]:
    """A template page, the same template with a 2,000-row table, and an unrelated page."""
    same = random.Random(1)  # one template: the same navigation and footer on both pages
    page = template("<h1>About</h1>\n<p>Some text, and more.</p>", same)
    same = random.Random(1)
    big = template(listing(2000, random.Random(2)), same)
    other = random.Random(3)
    unrelated = "\n".join(f'<div class="{_words(other, 1, 3)}" data-x="{_words(other, 1, 4, ":")}">'
                          f'<img src="//cdn.example.net/{_words(other, 1, 5)}.png" alt="" /></div>'
                          for _ in range(400))
    return [html_noise(page), html_noise(big), html_noise(unrelated)]


def test_the_noise_is_its_definition():
    for noise in ('< ="://..//--" ="-">\r\n, .< ="" =\'/-/?=\'\r>< =""/>', '<>< ="/" =":/"', '< ="\'/" =\'"//\'>',
                  '< ="://." <>', '<  ="//-.-"\n  ="#" ="  ">x<'):
        assert page_noise(noise, "markup-urls") == scanned(noise), noise
    rng = np.random.default_rng(0)
    for _ in range(200):
        noise = "".join(rng.choice(list('<>="\'/:-. \r\n?#'), int(rng.integers(0, 80))))
        assert page_noise(noise, "markup-urls") == scanned(noise), noise
    assert HSSParams(noise="markup-urls").noise == "markup-urls" and HSSParams().noise == "markup-urls"


@pytest.mark.slow
def test_a_listing_page_joins_its_template_under_markup_urls_only(pages):
    """The exact Jaccard of the n-gram sets (brute force), its Sim_b estimate and the
    clustering at t = 35: under ``markup`` the 2,000 rows' slugs give the listing page
    thousands of n-grams its template page lacks (Jaccard below 0.1); under ``markup-urls`` every row
    is the same markup and the two pages share most of their n-grams.  The unrelated page
    joins neither under either noise."""
    jaccards = {}
    for mode in ("markup", "markup-urls"):
        noises = [page_noise(p, mode) for p in pages]
        if mode == "markup-urls":
            assert noises == [scanned(p) for p in pages]
        sets = [ngram_set(x) for x in noises]
        assert sets == [set(ngram_hashes(x, N).tolist()) for x in noises]  # the fast hashes are the same set
        jaccard = len(sets[0] & sets[1]) / len(sets[0] | sets[1])
        jaccards[mode] = jaccard
        fps = np.stack([fingerprint(x, N, M, 0) for x in noises])
        estimate = int(matched_dimensions(fps[0], fps[1])) / M
        assert abs(estimate - jaccard) <= 4 * np.sqrt(jaccard * (1 - jaccard) / M) + 2 / M
        labels = cluster_fingerprints(fps, k=1, p=20, t=35)
        assert bool(labels[0] == labels[1]) == (mode == "markup-urls"), (mode, jaccard, estimate)
        assert labels[2] not in (labels[0], labels[1])
        assert max(len(sets[2] & s) / len(sets[2] | s) for s in sets[:2]) < 0.05
    assert jaccards["markup"] < 0.1 < 0.5 < jaccards["markup-urls"], jaccards


def test_both_engines_give_the_same_markup_urls_fingerprints(tmp_path, pages):
    rng = np.random.default_rng(4)
    noises = [*pages, *("".join(rng.choice(list('<>="\'/:-. \r\n'), int(n))) for n in rng.integers(0, 600, 9))]
    count = len(noises)
    pq.write_table(pa.table({
        "doc_id": pa.array(np.arange(count) * 3 + 1, pa.int64()), "snapshot": ["2026-01"] * count,
        "url": [f"http://h{i}.example/" for i in range(count)], "host": [f"h{i}.example" for i in range(count)],
        "domain": [f"h{i}.example" for i in range(count)], "ip": [None] * count, "noise": noises}),
        tmp_path / "p.parquet")
    fingerprint_pages([tmp_path / "p.parquet"], tmp_path / "local", N, M, 3, noise_mode="markup-urls")
    fingerprint_pages_mapreduce([tmp_path / "p.parquet"], tmp_path / "mr", tmp_path / "work", N, M, 3, "inline",
                                noise_mode="markup-urls")
    expected = np.stack([fingerprint(scanned(x), N, M, 3) for x in noises])
    for folder in ("local", "mr"):
        table = pq.read_table(tmp_path / folder / "part-00000.parquet")
        assert np.array_equal(read_fingerprints(table, M), expected)
        assert table.column("ngrams").to_pylist() == [max(len(scanned(x)) - N + 1, 0) for x in noises]
