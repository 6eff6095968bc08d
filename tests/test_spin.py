"""The spin detector's pure parts against hand-worked examples and brute force (DSpin, NDSS 2014)."""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from itertools import combinations
from pathlib import Path

import pytest

from spamflow.config import parse_config
from spamflow.demo.spinner import parse_dictionary as spinner_dictionary
from spamflow.demo.spinner import spin
from spamflow.demo.texts import spin_article, spin_dictionary_text
from spamflow.errors import ConfigError, SpamflowError
from spamflow.mr import run_job
from spamflow.words import words
from spamflow_spin.article import article_words
from spamflow_spin.campaigns import components, promoted_sites
from spamflow_spin.candidates import Candidates, find_candidates
from spamflow_spin.detector import Page, describe_campaigns, find_spin, host_features
from spamflow_spin.dictionary import SynonymDictionary, load_dictionary
from spamflow_spin.mr_candidate_pairs import MRCandidatePairs, index_length, prefix_length
from spamflow_spin.mr_immutable_frequency import MRImmutableFrequency
from spamflow_spin.params import SpinParams
from spamflow_spin.partition import partition
from spamflow_spin.similarity import jaccard
from spamflow_spin.verifier import mutable_overlap, overlap_levels

DEMO_DICTIONARY = "package:spamflow.demo/texts/spin-dictionary.txt"


def _dictionary(tmp_path: Path, *texts: str) -> SynonymDictionary:
    paths = []
    for i, text in enumerate(texts):
        paths.append(tmp_path / f"d{i}.txt")
        paths[-1].write_text(text, encoding="utf-8")
    return load_dictionary(paths)


# ---------------------------------------------------------------- dictionary

def test_dictionary_merges_heads_across_lines_and_files_and_splits_phrases(tmp_path):
    d = _dictionary(tmp_path, "Big|large|huge\n\nwell-known|famous\n", "big|Great\nturn into|become\n")
    assert d.heads == {"big", "well known", "turn into"}
    assert d.synonyms("big") == {"large", "huge", "great"}
    assert d.synonyms("large") == {"big"}  # edges go both ways
    assert d.second_level("large") == {"huge", "great"}
    assert "well known" in d and "famous" in d and "become" in d
    assert d.prefixes == {"well", "turn"}
    assert d.max_words == 2 and d.lines == 4 and len(d) == 8


def test_dictionary_counts_phrases_longer_than_six_words(tmp_path):
    d = _dictionary(tmp_path, "one two three four five six seven|x\n")
    assert d.too_long == 1 and d.max_words == 1
    assert partition("one two three four five six seven".split(), d).mutables == []


# what each kind of bad line gets: tests/test_spin_dictionary.py


def test_dictionary_path_is_relative_to_the_config_file(tmp_path, plugins):
    (tmp_path / "dicts").mkdir()
    (tmp_path / "dicts" / "tbs.txt").write_text("big|large\n")
    text = "workdir: w\ninput: {demo: {}}\ndetectors:\n  spin: {dictionary: [dicts/tbs.txt, DEMO]}\n".replace(
        "DEMO", DEMO_DICTIONARY)
    config = parse_config(text, plugins, path=tmp_path / "c.yaml")
    params = config.detectors["spin"]
    assert params.dictionary == [str(tmp_path / "dicts" / "tbs.txt"), DEMO_DICTIONARY]
    with pytest.raises(ConfigError, match=r"detectors.spin.dictionary.*'dicts/none.txt' not found"):
        parse_config(text.replace("tbs.txt", "none.txt"), plugins, path=tmp_path / "c.yaml")


# ---------------------------------------------------------------- partition

def test_partition_greedy_quirk_of_the_paper(tmp_path):
    """Section IV-B: {a} and {a,b,c} both in the dictionary; the paper marks only {a} mutable."""
    d = _dictionary(tmp_path, "a|x\na b c|y\n")
    paper = partition(["a", "b", "c", "d"], d, "paper")
    assert paper.mutables == ["a"] and paper.immutables == ["b", "c", "d"]
    longest = partition(["a", "b", "c", "d"], d, "longest")
    assert longest.mutables == ["a b c"] and longest.immutables == ["d"]
    # a word not in the dictionary still starts a phrase in the paper's scan
    d2 = _dictionary(tmp_path, "turn into|become\n")
    assert partition(["they", "turn", "into", "frogs"], d2, "paper").mutables == ["turn into"]


def test_partition_hand_worked_sentence_with_phrases_and_duplicate_immutables(tmp_path):
    d = _dictionary(tmp_path, "quick|fast|speedy\nbrown fox|red fox\njumps over|leaps over\nlazy|idle\n")
    text = words("The quick brown fox jumps over the lazy dog; the dog sleeps.")
    p = partition(text, d)
    # The | quick | brown fox | jumps over | the | lazy | dog | the | dog | sleeps
    assert p.mutables == ["quick", "brown fox", "jumps over", "lazy"]
    assert p.immutables == ["the", "the#2", "dog", "the#3", "dog#2", "sleeps"]
    assert len(set(p.immutables)) == len(p.immutables)


def _brute_longest(text: list[str], entries: set[str]) -> tuple[list[str], list[str]]:
    """Reference of the longest-first scan: try every length 6..1 at every position."""
    imm: list[str] = []
    mut: list[str] = []
    seen: dict[str, int] = {}
    i = 0
    while i < len(text):
        for n in range(min(6, len(text) - i), 0, -1):
            if " ".join(text[i:i + n]) in entries:
                mut.append(" ".join(text[i:i + n]))
                i += n
                break
        else:
            seen[text[i]] = seen.get(text[i], 0) + 1
            imm.append(text[i] if seen[text[i]] == 1 else f"{text[i]}#{seen[text[i]]}")
            i += 1
    return imm, mut


def test_partition_matches_brute_force_on_random_texts(tmp_path):
    rng = random.Random(5)
    vocab = [f"w{i}" for i in range(12)]
    groups = []
    for _ in range(15):
        head = " ".join(rng.choices(vocab, k=rng.randint(1, 4)))
        groups.append(f"{head}|{rng.choice(vocab)}")
    d = _dictionary(tmp_path, "\n".join(groups) + "\n")
    for _ in range(200):
        text = rng.choices(vocab, k=rng.randint(0, 40))
        p = partition(text, d, "longest")
        assert (p.immutables, p.mutables) == _brute_longest(text, set(d.neighbours))


# ---------------------------------------------------------------- verifier

def test_verifier_three_levels_hand_worked(tmp_path):
    d = _dictionary(tmp_path, "home|house|residence\nhouse|household\nbig|large\nquick|fast\n")
    # A: home big quick dog   B: home large household fast fast
    a = ["home", "big", "quick", "house"]
    b = ["home", "large", "household", "fast", "cat"]
    # pass 1: home; pass 2: big~large, quick~fast, house~household; nothing is left for pass 3
    assert overlap_levels(a, b, d) == (1, 3, 0)
    assert mutable_overlap(a, b, d) == pytest.approx(4 / (4 + 5 - 4))
    # second level: residence - home - house (both synonyms of 'home', not of each other)
    assert overlap_levels(["residence"], ["house"], d) == (0, 0, 1)
    assert overlap_levels(["residence"], ["household"], d) == (0, 0, 0)  # three steps away
    assert mutable_overlap([], [], d) == 0.0


def test_verifier_sees_synonyms_added_after_a_first_use():
    d = SynonymDictionary()
    d.add_group("big", ["large"])
    d.add_group("fast", ["quick"])
    assert overlap_levels(["big"], ["fast"], d) == (0, 0, 0)
    d.add_group("big", ["fast"])  # an edge between two existing entries
    assert overlap_levels(["big"], ["fast"], d) == (0, 1, 0)


def test_verifier_counts_repeats_once_each(tmp_path):
    d = _dictionary(tmp_path, "big|large\n")
    assert overlap_levels(["big", "big", "big"], ["big", "large"], d) == (1, 1, 0)
    assert mutable_overlap(["big", "big", "big"], ["big", "large"], d) == pytest.approx(2 / 3)


def _reference_overlap_levels(mutables_a, mutables_b, d):
    """The verifier's three passes as docs/spin.md states them, on Counters, one unit at a time
    (the implementation before the verifier kept its counts in dicts and sorted lists per entry)."""
    def match(left, right, related):
        matched = 0
        for entry in sorted(left):
            for _ in range(left[entry]):
                partner = next((s for s in sorted(related(entry)) if right[s] > 0), None)
                if partner is None:
                    break
                right[partner] -= 1
                left[entry] -= 1
                matched += 1
        left += Counter()
        right += Counter()
        return matched

    a, b = Counter(mutables_a), Counter(mutables_b)
    shared = a & b
    a -= shared
    b -= shared
    first = match(a, b, d.synonyms) + match(b, a, d.synonyms)
    second = match(a, b, d.second_level) + match(b, a, d.second_level)
    return sum(shared.values()), first, second


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_verifier_equals_the_three_passes_on_random_pages(tmp_path, seed):
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(40)]
    groups = {"|".join(rng.sample(vocab, rng.randint(2, 4))) for _ in range(25)}
    d = _dictionary(tmp_path, "\n".join(sorted(groups)) + "\n")
    for _ in range(300):
        a = rng.choices(vocab, k=rng.randint(0, 30))
        b = rng.choices(vocab, k=rng.randint(0, 30))
        assert overlap_levels(a, b, d) == _reference_overlap_levels(a, b, d)


# ---------------------------------------------------------------- article text, campaigns

def test_article_words_cut_anchors_in_order():
    text = words("Home About Read more about spinning at my shop and at my shop again Home")
    out, missing = article_words(text, ["Home", "About", "my shop", "Home", "Contact us"])
    assert out == words("Read more about spinning at and at my shop again")
    assert missing == 1


def test_article_words_find_anchors_as_a_scan_of_every_position():
    """Random words and anchors (repeats, anchors at the end, longer than the rest, absent):
    each anchor cut at its first occurrence after the previous cut, as a scan of every position
    finds it."""
    from spamflow.article import find_phrase

    def scan(words, part, start):
        return next((i for i in range(start, len(words) - len(part) + 1) if words[i:i + len(part)] == part), -1)

    rng = random.Random(3)
    for _ in range(500):
        words = rng.choices("abc", k=rng.randint(0, 12))
        part = rng.choices("abc", k=rng.randint(1, 4))
        start = rng.randint(0, len(words) + 1)
        assert find_phrase(words, part, start) == scan(words, part, start)
        assert find_phrase(tuple(words), tuple(part), start) == scan(words, part, start)


def test_components_and_promoted_sites():
    assert components([(5, 6), (1, 2), (2, 3), (9, 9)]) == [[1, 2, 3], [5, 6], [9]][:2] + [[9]]
    pages = [{"domain": "a.com", "link_targets": [("shop.com", "shop.com"), ("a.com", "a.com")]},
             {"domain": "b.com", "link_targets": [("shop.com", "shop.com"), ("x.org", "x.org")]},
             {"domain": "shop.com", "link_targets": [("www.shop.com", "shop.com")]}]
    assert promoted_sites(pages, 0.5) == [{"host": "shop.com", "pages": 2}]
    assert promoted_sites(pages, 0.3) == [{"host": "shop.com", "pages": 2}, {"host": "x.org", "pages": 1}]


# ---------------------------------------------------------------- candidate pairs (mrjob) vs brute force

def _random_sets(seed: int, n_docs: int = 60) -> dict[int, set[str]]:
    """Clusters of near-copies (random edits of a base set) plus unrelated sets over a shared vocabulary."""
    rng = random.Random(seed)
    common = [f"c{i}" for i in range(30)]
    docs: dict[int, set[str]] = {}
    doc = 1000
    while len(docs) < n_docs:
        base = {f"r{rng.randrange(400)}" for _ in range(rng.randint(3, 25))} | set(rng.sample(common, 8))
        for _ in range(rng.randint(1, 5)):
            copy = {x for x in sorted(base) if rng.random() > 0.25} | {f"r{rng.randrange(400)}" for _ in range(rng.randint(0, 4))}
            if len(copy) > 1:
                docs[doc] = copy
                doc += rng.randint(1, 3)
    return docs


ONE_TASK = ("--num-cores", "1", "--jobconf", "mapreduce.job.maps=1", "--jobconf", "mapreduce.job.reduces=1")
"""Local runner options: one task per step (each task is a new Python process)."""


def _candidates(docs: dict[int, set[str]], tmp_path: Path, t: float, runner: str, max_pages: int = 10000,
                k: int = 1, runner_args: tuple[str, ...] = ()) -> tuple[set[tuple[int, int]], Candidates]:
    lines = tmp_path / "imm.tsv"
    lines.write_text("".join(f"{d}\t{' '.join(sorted(s))}\n" for d, s in docs.items()))
    found = find_candidates(lines, tmp_path / runner, threshold=t, max_pages=max_pages, min_shared=k, runner=runner,
                            runner_args=runner_args or (ONE_TASK if runner == "local" else ()))
    assert all(a < b for a, b in found.pairs)
    return set(found.pairs), found


def _brute_force(docs: dict[int, set[str]], t: float) -> set[tuple[int, int]]:
    return {(a, b) for a, b in combinations(sorted(docs), 2) if jaccard(docs[a], docs[b]) >= t}


@pytest.mark.parametrize("seed, t, k", [(1, 0.5, 1), (2, 0.3, 1), (3, 0.8, 1), (4, 1.0, 1), (5, 0.6, 3),
                                        (6, 0.5, 5), (8, 0.9, 2)])
def test_candidate_pairs_contain_every_pair_above_threshold_inline(tmp_path, seed, t, k):
    docs = _random_sets(seed)
    brute = _brute_force(docs, t)
    pairs, found = _candidates(docs, tmp_path, t, "inline", k=k)
    assert brute <= pairs
    assert {(a, b) for a, b in pairs if jaccard(docs[a], docs[b]) >= t} == brute
    assert len(pairs) < len(docs) * (len(docs) - 1) / 2  # fewer than all pairs
    assert found.dropped == 0 and found.prefix_dropped == 0


def test_candidate_pairs_equal_the_filters_applied_to_all_pairs(tmp_path):
    """The job's candidates are exactly the pairs that the rule in its docstring admits, computed
    here pair by pair from the global order (an independent implementation of the same filters)."""
    docs = _random_sets(9, n_docs=60)
    t, k = 0.6, 2
    pairs, found = _candidates(docs, tmp_path, t, "inline", k=k)
    df = Counter(x for s in docs.values() for x in s)
    order = {d: sorted(s, key=lambda x: (df[x], x)) for d, s in docs.items()}
    expected, counted, pruned = set(), 0, 0
    for a, b in combinations(sorted(docs), 2):
        y, x = sorted((a, b), key=lambda d: (len(docs[d]), d))
        n_x, n_y = len(docs[x]), len(docs[y])
        if n_y < t * n_x - 1e-9:
            continue
        need = math.ceil(t / (1 + t) * (n_x + n_y) - 1e-9)
        probe = order[x][:prefix_length(n_x, t, k)]
        index = order[y][:index_length(n_y, t, k)]
        at = [(probe.index(w), order[y].index(w)) for w in set(probe) & set(index) if df[w] > 1
              and min(probe.index(w), order[y].index(w)) + 1
              + min(n_x - probe.index(w) - 1, n_y - order[y].index(w) - 1) >= need]
        counted += len(at)
        if len(at) >= min(k, need):
            # what can still be shared after the last immutable counted (largest positions)
            i, j = max(at)
            if len(at) + min(n_x - i - 1, n_y - j - 1) >= need:
                expected.add((a, b))
            else:
                pruned += 1
    assert expected == pairs
    assert found.pairs_counted == counted
    assert found.bound_pruned == pruned > 0


def test_candidate_pairs_pruned_by_the_accumulated_positional_bound_hand_worked(tmp_path):
    """Pages 1 = {b1 s z zz}, 2 = {a1 a2 s z}, 3 = {zz d1 d2 d3}; t = 0.5, k = 1.
    df: s, z, zz 2, the rest 1, so the orders (df, word) are 1: b1 s z zz, 2: a1 a2 s z,
    3: d1 d2 d3 zz.  n = 4 everywhere: alpha = ceil(0.5 / 1.5 * 8) = 3, probe prefix
    4 - 2 + 1 = 3, index prefix 4 - ceil(2/3 * 4) + 1 = 2.  Pair (1, 2), y = 1 (same n, smaller
    doc): s is in 1's index prefix (position 1) and 2's probe prefix (position 2); the positional
    filter passes (min(2, 1) + 1 + min(4 - 2 - 1, 4 - 1 - 1) = 3 >= 3), z is past both prefixes:
    count 1 >= min(k, 3), so the count filter alone keeps the pair.  But after s at most
    min(1, 2) = 1 more immutable can be shared: 1 + 1 = 2 < 3 -- dropped by the bound (its
    Jaccard is 2 / 6).  zz is past both prefixes of 1 and 3: no other pair is counted."""
    lines = tmp_path / "imm.tsv"
    lines.write_text("1\tb1 s z zz\n2\ta1 a2 s z\n3\tzz d1 d2 d3\n")
    found = find_candidates(lines, tmp_path / "w", threshold=0.5, max_pages=100, min_shared=1, runner="inline")
    assert found.pairs == [] and found.pairs_counted == 1 and found.bound_pruned == 1
    assert jaccard({"b1", "s", "z", "zz"}, {"a1", "a2", "s", "z"}) == pytest.approx(2 / 6, abs=1e-12)


@pytest.mark.parametrize("buckets", [1, 3, 4096])
def test_candidate_pairs_same_with_reducer_flushes(tmp_path, buckets):
    """In-reducer combining flushed after every immutable, and in-mapper combining of posting
    lists flushed after every page, give the same pairs, whatever the number of buckets."""
    docs = _random_sets(12, n_docs=60)
    pairs, _ = _candidates(docs, tmp_path, 0.5, "inline", k=2)
    lines, frequencies = tmp_path / "imm.tsv", tmp_path / "inline" / "frequencies.tsv"
    out = run_job(MRCandidatePairs, [lines], tmp_path / "flushed.tsv", runner="inline",
                  args=["--threshold", "0.5", "--max-pages", "10000", "--min-shared", "2",
                        "--frequencies", str(frequencies), "--flush-at", "1", "--flush-postings", "1",
                        "--buckets", str(buckets)])
    flushed = {tuple(map(int, line.split("\t")[0].split())) for line in out.read_text().splitlines()
               if not line.startswith("#")}
    assert flushed == pairs and pairs


@pytest.mark.slow
def test_candidate_pairs_local_runner_and_dropped_immutables(tmp_path):
    docs = _random_sets(7, n_docs=40)
    t = 0.5
    pairs, _ = _candidates(docs, tmp_path, t, "local", k=3)
    assert _brute_force(docs, t) <= pairs
    df = Counter(x for s in docs.values() for x in s)
    _, dropped = _candidates(docs, tmp_path, t, "inline", max_pages=5)
    assert dropped.dropped == sum(n > 5 for n in df.values())
    assert dropped.shared_immutables == sum(n > 1 for n in df.values())
    expected_prefix_dropped = 0
    for s in docs.values():
        order = sorted(s, key=lambda x: (df[x] > 5, df[x], x))
        expected_prefix_dropped += any(df[x] > 5 for x in order[:prefix_length(len(s), t, 1)])
    assert dropped.prefix_dropped == expected_prefix_dropped


@pytest.mark.parametrize("flush_at, buckets", [(3, 4096), (500_000, 4096), (500_000, 1), (7, 5)])
def test_immutable_frequency_job_counts_pages_per_immutable(tmp_path, flush_at, buckets):
    docs = _random_sets(11, n_docs=50)
    lines = tmp_path / "imm.tsv"
    lines.write_text("".join(f"{d}\t{' '.join(sorted(s))}\n" for d, s in docs.items()))
    out = run_job(MRImmutableFrequency, [lines], tmp_path / "df.tsv", runner="inline",
                  args=["--flush-at", str(flush_at), "--buckets", str(buckets)])
    got = dict(line.split("\t") for line in out.read_text().splitlines())
    df = Counter(x for s in docs.values() for x in s)
    assert {x: int(n) for x, n in got.items()} == {x: n for x, n in df.items() if n > 1}


def test_candidate_job_names_a_bad_line_of_its_frequency_file(tmp_path):
    lines, frequencies = tmp_path / "imm.tsv", tmp_path / "df.tsv"
    lines.write_text("1\ta b c\n2\ta b d\n")
    frequencies.write_text("a\t2\nb\ttwo\n")
    with pytest.raises(SpamflowError, match="MRCandidatePairs.*" + re.escape("df.tsv:2: not 'immutable<TAB>df': 'b\\ttwo'")):
        run_job(MRCandidatePairs, [lines], tmp_path / "out.tsv", runner="inline",
                args=["--threshold", "0.5", "--max-pages", "10", "--frequencies", str(frequencies)])
    frequencies.write_text("a\t2\nb\t2")  # no final newline: read all the same
    out = run_job(MRCandidatePairs, [lines], tmp_path / "out.tsv", runner="inline",
                  args=["--threshold", "0.5", "--max-pages", "10", "--frequencies", str(frequencies)])
    assert "1 2\t1" in out.read_text().splitlines()  # counted at a (c, df 1, comes first)


def test_candidate_jobs_name_a_bad_line(tmp_path):
    lines = tmp_path / "imm.tsv"
    lines.write_text("1\ta b c\nnot a page line\n")
    with pytest.raises(SpamflowError, match="MRImmutableFrequency.*not a page line"):
        find_candidates(lines, tmp_path / "w", threshold=0.5, max_pages=10, min_shared=1, runner="inline")


# The pair job with its side file on Spark local[2]: tests/test_spin_mapreduce.py runs it there with
# the other two jobs, against the in-memory engine (whose pairs these tests hold to the brute force).


# ---------------------------------------------------------------- find_spin end to end, against exhaustive comparison

def test_find_spin_equals_exhaustive_comparison_on_spun_copies(tmp_path):
    spinner = spinner_dictionary(spin_dictionary_text())
    rng = random.Random(3)
    article = spin_article()
    texts = [spin(article, spinner, rng) for _ in range(6)] + [article, article]  # 6 spun copies, 2 duplicates
    paragraphs = article.split("\n\n")
    texts += [paragraphs[0], " ".join(reversed(article.split()))]  # partial reuse, same words in another order
    pages = [Page(100 + i, f"http://h{i}.example/", f"h{i}.example", f"h{i}.example", [], words(t))
             for i, t in enumerate(texts)]
    params = SpinParams.model_validate({"dictionary": [DEMO_DICTIONARY]})
    from spamflow_spin.params import resolve_dictionary_path
    d = load_dictionary([resolve_dictionary_path(DEMO_DICTIONARY, None)])
    pairs, counts = find_spin(pages, d, params, tmp_path / "work", "inline")
    got = {(p["doc_a"], p["doc_b"]): p for p in pairs}
    # exhaustive reference over distinct texts, straight from the definitions
    parts = {p.doc_id: partition(p.words, d) for p in pages}
    expected = {}
    for a, b in combinations(sorted(parts), 2):
        if pages[a - 100].words == pages[b - 100].words:
            expected[(a, b)] = "duplicate"
            continue
        if 107 in (a, b):  # the second copy of the original: only its duplicate pair is reported
            continue
        ja = jaccard(set(parts[a].immutables), set(parts[b].immutables))
        overlap = mutable_overlap(parts[a].mutables, parts[b].mutables, d)
        if ja >= params.immutable_threshold and overlap >= params.verifier_threshold:
            expected[(a, b)] = "spun"
    assert {k: v["kind"] for k, v in got.items()} == expected
    spun_docs = {d for (a, b), k in expected.items() if k == "spun" for d in (a, b)}
    # every copy and the original, not the excerpt; the shuffled words too: immutables are a set,
    # so word order is invisible to DSpin (docs/spin.md, limits)
    assert spun_docs == set(range(100, 107)) | {109}
    assert counts["duplicate_pairs"] == 1 and counts["articles"] == 9


# ---------------------------------------------------------------- copies of one article on many hosts

def _demo_dictionary() -> SynonymDictionary:
    from spamflow_spin.params import resolve_dictionary_path
    return load_dictionary([resolve_dictionary_path(DEMO_DICTIONARY, None)])


def _article(rng: random.Random, heads: list[str], size: int) -> str:
    """Made-up words with one word in four a spinner dictionary head (so copies differ in mutables)."""
    return " ".join(rng.choice(heads) if rng.random() < 0.25 else f"x{rng.randrange(3000)}" for _ in range(size))


def _copies_corpus(seed: int) -> list[Page]:
    """Texts spun onto 5-20 hosts each (some copies verbatim twice, some with a few words changed,
    so their immutables differ), each campaign linking to its money site; unrelated pages; a page
    of one word. Hosts hold several pages, of several campaigns."""
    spinner = spinner_dictionary(spin_dictionary_text())
    heads = sorted(" ".join(h) for h in spinner if len(h) == 1)
    rng = random.Random(seed)
    texts: list[tuple[str, list[str]]] = []
    for campaign in range(6):
        base = _article(rng, heads, rng.randint(60, 150))
        money = f"www.money{campaign}.com"
        for _ in range(rng.randint(5, 20)):
            text = spin(base, spinner, rng)
            if rng.random() < 0.2:  # an edited copy: other immutables, still close
                cut = text.split()
                del cut[rng.randrange(len(cut))]
                text = " ".join(cut) + f" x{rng.randrange(3000)}"
            texts.append((text, [money]))
            if rng.random() < 0.15:
                texts.append((text, [money]))  # the same copy verbatim on another host
    texts += [(_article(rng, heads, rng.randint(40, 120)), [f"www.other{i}.org"]) for i in range(15)]
    texts.append(("alone", []))
    rng.shuffle(texts)
    pages = []
    for i, (text, targets) in enumerate(texts):
        host = f"h{rng.randrange(len(texts) // 2)}.example"
        links = [(t, t.removeprefix("www.")) for t in targets] + [(host, host)]
        pages.append(Page(10 + 3 * i, f"http://{host}/{i}", host, host, links, words(text)))
    return pages


def _reference_pairs(pages: list[Page], d: SynonymDictionary, params: SpinParams) -> list[tuple]:
    """The pairs straight from the definitions, over every pair of pages: a verbatim copy is a
    duplicate of the first page of its text; distinct texts are spun if immutable Jaccard >= t
    and the verifier's overlap >= v; a text of one immutable or less is never compared."""
    first: dict[tuple[str, ...], int] = {}
    out = []
    for page in sorted(pages, key=lambda p: p.doc_id):
        rep = first.setdefault(tuple(page.words), page.doc_id)
        if rep != page.doc_id and len(partition(page.words, d).immutables) > 1:
            out.append((rep, page.doc_id, 1.0, 1.0, "duplicate"))
    parts = {doc: partition(list(text), d) for text, doc in first.items()}
    for a, b in combinations(sorted(parts), 2):
        if len(parts[a].immutables) <= 1 or len(parts[b].immutables) <= 1:
            continue
        ja = jaccard(set(parts[a].immutables), set(parts[b].immutables))
        overlap = mutable_overlap(parts[a].mutables, parts[b].mutables, d)
        if ja >= params.immutable_threshold and overlap >= params.verifier_threshold:
            out.append((a, b, ja, overlap, "spun"))
    return sorted(out)


@pytest.mark.parametrize("seed", [1, 2])
def test_find_spin_with_many_copies_equals_the_definitions(tmp_path, seed):
    """Grouping copies with the same immutables before the candidate jobs changes no output:
    pairs, campaigns (with promoted sites) and the per-host table equal those of the exhaustive
    reference, fed through the same campaign and host code."""
    pages = _copies_corpus(seed)
    d = _demo_dictionary()
    params = SpinParams.model_validate({"dictionary": [DEMO_DICTIONARY], "verifier_threshold": 0.7})
    pairs, counts = find_spin(pages, d, params, tmp_path / "work", "inline")
    got = sorted((p["doc_a"], p["doc_b"], p["immutable_jaccard"], p["mutable_overlap"], p["kind"]) for p in pairs)
    expected = _reference_pairs(pages, d, params)
    assert [(a, b, k) for a, b, _, _, k in got] == [(a, b, k) for a, b, _, _, k in expected]
    for g, e in zip(got, expected):
        assert g[2:4] == pytest.approx(e[2:4], abs=1e-12)
    # the corpus is what the test is about: big groups of equal immutables, and pairs between groups
    assert counts["same_immutable_pairs"] > 100 and counts["immutable_groups"] < counts["articles"] / 2
    assert counts["candidate_pairs"] > 0 and counts["pairs_above_immutable_threshold"] > counts["same_immutable_pairs"]
    reference = [{"doc_a": a, "doc_b": b, "immutable_jaccard": j, "mutable_overlap": o, "kind": k}
                 for a, b, j, o, k in expected]
    campaigns = describe_campaigns(pairs, pages, "s1", params.promoted_fraction)
    assert campaigns == describe_campaigns(reference, pages, "s1", params.promoted_fraction)
    assert host_features(pages, pairs, campaigns, "s1") == host_features(pages, reference, campaigns, "s1")
    assert {s["host"] for c in campaigns for s in c["promoted_sites"]} == {f"www.money{i}.com" for i in range(6)}


@pytest.mark.parametrize("k", [5, 20])
def test_pairs_made_for_a_text_on_k_hosts_do_not_grow_with_k(tmp_path, k):
    """k spun copies of one text (same immutables, other mutables) among 10 unrelated texts: the
    candidate jobs see the copies as one page, so the pairs they make do not depend on k (before
    grouping: k(k - 1)/2 candidate pairs and more pair counts); every copy pair is still spun."""
    spinner = spinner_dictionary(spin_dictionary_text())
    heads = sorted(" ".join(h) for h in spinner if len(h) == 1)
    rng = random.Random(4)
    others = [_article(rng, heads, 100) for _ in range(10)]
    base = _article(rng, heads, 120)
    copies = [spin(base, spinner, random.Random(100 + i)) for i in range(k)]
    d = _demo_dictionary()
    assert len({frozenset(partition(words(t), d).immutables) for t in copies}) == 1  # the premise
    assert len({tuple(words(t)) for t in copies}) == k  # no verbatim copies: these are spun
    pages = [Page(i, f"http://h{i}.example/", f"h{i}.example", f"h{i}.example", [], words(t))
             for i, t in enumerate(others + copies)]
    params = SpinParams.model_validate({"dictionary": [DEMO_DICTIONARY], "verifier_threshold": 0.7})
    pairs, counts = find_spin(pages, d, params, tmp_path / "work", "inline")
    assert counts["immutable_groups"] == 11
    assert counts["candidate_pairs"] == 0  # unrelated texts; the copies are one group
    assert counts["candidate_pair_counts"] < 11  # independent of k (k = 20 used to make 190 pairs)
    assert counts["same_immutable_pairs"] == k * (k - 1) // 2
    assert sorted((p["doc_a"], p["doc_b"]) for p in pairs) == list(combinations(range(10, 10 + k), 2))
    lines = (tmp_path / "work" / "immutables.tsv").read_text().splitlines()
    assert len(lines) == 11  # one line per group goes to the jobs
