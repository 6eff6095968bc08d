"""spin's pair job orders its pages a batch at a time (``--batch-pages``, ``order_pages``): the
same map records and job output as ordering each page by itself, with one df lookup per
distinct immutable of a batch."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest
from test_spin import _brute_force, _random_sets

from spamflow.errors import SpamflowError
from spamflow.mr import run_job
from spamflow_spin.mr_candidate_pairs import MRCandidatePairs, order_pages, prefix_length

ODD = ["é", "e", "z", "Z", "ß", "ss", "ä", "a", "😀", "🙂", "中", "ａ", "zz", "é#2"]
"""Immutables whose code point order is not their look: ties in df are broken by it."""
SPACES = [" ", " ", " ", "\t", "  ", "\u3000", "\x1c", "\xa0", " \x0b\r "]
"""Separators str.split() splits at (and runs of them; no line break: the lines are a job's input)."""


def _corpus(seed: int, pages: int = 120) -> tuple[list[str], dict[str, int]]:
    """Page lines with Zipfian immutables (odd ones included), repeats within a page, repeated
    lines, empty pages and odd whitespace, and a side file of df >= 2 (the corpus's own, plus
    a few immutables on no page)."""
    rng = random.Random(seed)
    vocabulary = ODD + [f"w{i}" for i in range(300)]
    weights = [1 / (rank + 1) for rank in range(len(vocabulary))]
    lines, texts = [], []
    doc = 10
    for _ in range(pages):
        size = rng.choice([0, 1, 2, 5, 12, 30, 60])
        words = rng.choices(vocabulary, weights, k=size) + [f"own{doc}-{i}" for i in range(rng.randint(0, 3))]
        rng.shuffle(words)
        text = "".join(word + rng.choice(SPACES) for word in words)
        if rng.random() < 0.2:
            text = rng.choice(SPACES) + text
        else:
            text = text.rstrip()
        texts.append(text)
        lines.append(f"{doc}\t{text}")
        if rng.random() < 0.1:
            lines.append(lines[-1])  # the same line twice
        doc += rng.randint(1, 3)
    df = Counter(word for text in texts for word in set(text.split()))
    side = {word: n for word, n in df.items() if n > 1}
    side.update({f"absent{i}": rng.randint(2, 9) for i in range(5)})
    return lines, side


def _reference_order(text: str, df: dict[str, int]) -> list[tuple[int, str]]:
    """A page's shared immutables (df >= 2) in the global order (df, immutable)."""
    return sorted((df[word], word) for word in text.split() if word in df)


class PageByPage(MRCandidatePairs):
    """The mapper as the docstring defines it, one page at a time: all of a page's immutables
    in the order (dropped, df, immutable), df 1 for those missing from the side file; its
    probe prefix, df-1 immutables skipped, stopped at the first dropped one."""

    def prefix(self, _, line):
        doc, tab, text = line.partition("\t")
        if not tab or not doc.lstrip("-").isdigit():
            raise ValueError(f"not a page line 'doc<TAB>immutables': {line[:80]!r}")
        opts = self.options
        words = text.split()
        n = len(words)
        dfs = {word: self.df.get(word, 1) for word in words}
        order = sorted(words, key=lambda word: (dfs[word] > opts.max_pages, dfs[word], word))
        probe = prefix_length(n, opts.threshold, opts.min_shared)
        singles = sum(dfs[word] == 1 for word in words)
        if probe - singles <= 0:
            return
        for pos, word in enumerate(order[:probe]):
            if dfs[word] == 1:
                continue
            if dfs[word] > opts.max_pages:
                self.prefix_dropped += 1
                break
            self.postings.setdefault(word, []).append(f"{doc} {n} {pos}")
        self.held += probe - singles
        if self.held >= opts.flush_postings:
            yield from self.flush_postings()


def _map_records(job_class: type[MRCandidatePairs], lines: list[str], frequencies: Path,
                 args: list[str]) -> list[tuple[str, str]]:
    """One map task's records, in the order it sends them."""
    job = job_class(args + ["--frequencies", str(frequencies)])
    job.start_postings()
    records = [record for line in lines for record in job.prefix(None, line)]
    return records + list(job.finish_postings())


def _write_side_file(path: Path, df: dict[str, int]) -> Path:
    path.write_text("".join(f"{word}\t{n}\n" for word, n in df.items()), encoding="utf-8")
    return path


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_order_pages_equals_each_page_sorted_by_df_then_code_point(seed):
    lines, df = _corpus(seed)
    texts = [line.partition("\t")[2] for line in lines]
    ordered = order_pages(texts, df, max_pages=4)
    assert ordered.sizes.tolist() == [len(text.split()) for text in texts]
    for i, text in enumerate(texts):
        assert ordered.page(i) == _reference_order(text, df)
    # hand-worked ties by code point: 'Z' < 'z' < 'ß' < 'é' < '中' < '😀'
    tied = order_pages(["é z 😀 ß Z 中 single é"], dict.fromkeys("é z 😀 ß Z 中".split(), 2), max_pages=9)
    assert [word for _, word in tied.page(0)] == ["Z", "z", "ß", "é", "é", "中", "😀"]
    assert tied.sizes.tolist() == [8]


def test_order_pages_of_no_immutables():
    ordered = order_pages(["", "   ", "\t"], {"a": 2}, max_pages=9)
    assert ordered.sizes.tolist() == [0, 0, 0] and ordered.starts.tolist() == [0, 0, 0, 0]


@pytest.mark.parametrize("seed, args", [
    (1, ["--threshold", "0.5", "--max-pages", "1000"]),
    (2, ["--threshold", "0.6", "--max-pages", "4", "--min-shared", "3"]),  # dropped immutables in prefixes
    (3, ["--threshold", "0.9", "--max-pages", "6", "--min-shared", "2", "--flush-postings", "1"]),
    (4, ["--threshold", "0.3", "--max-pages", "3", "--flush-postings", "40"]),  # flushes inside batches
    (5, ["--threshold", "1.0", "--max-pages", "5", "--min-shared", "5", "--flush-postings", "7"]),
])
@pytest.mark.parametrize("batch", ["1", "7", "1000"])
def test_map_records_equal_the_page_by_page_definition(tmp_path, seed, args, batch):
    """Every record the map task sends, in order: posting lists (same entries, positions and
    order), flushes after the same pages, ``#prefix_dropped``."""
    lines, df = _corpus(seed)
    frequencies = _write_side_file(tmp_path / "df.tsv", df)
    expected = _map_records(PageByPage, lines, frequencies, args)
    got = _map_records(MRCandidatePairs, lines, frequencies, args + ["--batch-pages", batch])
    assert got == expected
    assert any(key.isdigit() for key, _ in got)
    if seed in (2, 4):
        assert int(dict(got)["#prefix_dropped"]) > 0


@pytest.mark.parametrize("batch", ["1", "3", "2000"])
def test_job_output_equals_the_page_by_page_job(tmp_path, batch):
    lines, df = _corpus(7, pages=150)
    (tmp_path / "imm.tsv").write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    frequencies = _write_side_file(tmp_path / "df.tsv", df)
    args = ["--threshold", "0.5", "--max-pages", "6", "--min-shared", "2", "--frequencies", str(frequencies)]
    expected = run_job(PageByPage, [tmp_path / "imm.tsv"], tmp_path / "old.tsv", runner="inline", args=args)
    got = run_job(MRCandidatePairs, [tmp_path / "imm.tsv"], tmp_path / "new.tsv", runner="inline",
                  args=args + ["--batch-pages", batch])
    assert got.read_text(encoding="utf-8") == expected.read_text(encoding="utf-8")
    assert sum(not line.startswith("#") for line in got.read_text(encoding="utf-8").splitlines()) > 0


@pytest.mark.parametrize("batch", [1, 2, 1000])
def test_candidate_pairs_with_batches_contain_every_pair_above_threshold(tmp_path, batch):
    docs = _random_sets(21)
    lines, frequencies = tmp_path / "imm.tsv", tmp_path / "df.tsv"
    lines.write_text("".join(f"{d}\t{' '.join(sorted(s))}\n" for d, s in docs.items()))
    _write_side_file(frequencies, {x: n for x, n in Counter(x for s in docs.values() for x in s).items() if n > 1})
    out = run_job(MRCandidatePairs, [lines], tmp_path / "out.tsv", runner="inline",
                  args=["--threshold", "0.5", "--max-pages", "10000", "--min-shared", "2",
                        "--frequencies", str(frequencies), "--batch-pages", str(batch)])
    pairs = {tuple(map(int, line.split("\t")[0].split())) for line in out.read_text().splitlines()
             if not line.startswith("#")}
    assert _brute_force(docs, 0.5) <= pairs


class CountingDict(dict):
    """The side file's dictionary, counting the lookups made in it."""

    lookups = 0

    def get(self, key, default=None):
        CountingDict.lookups += 1
        return super().get(key, default)

    def __getitem__(self, key):
        CountingDict.lookups += 1
        return super().__getitem__(key)

    def __contains__(self, key):
        CountingDict.lookups += 1
        return super().__contains__(key)


@pytest.mark.parametrize("batch", [5, 40])
def test_mapper_looks_each_distinct_immutable_of_a_batch_up_once(tmp_path, batch):
    lines, df = _corpus(8, pages=100)
    frequencies = _write_side_file(tmp_path / "df.tsv", df)
    job = MRCandidatePairs(["--threshold", "0.6", "--max-pages", "10", "--frequencies", str(frequencies),
                            "--batch-pages", str(batch)])
    job.start_postings()
    job.df = CountingDict(job.df)
    CountingDict.lookups = 0
    for line in lines:
        list(job.prefix(None, line))
    list(job.finish_postings())
    batches = [lines[i:i + batch] for i in range(0, len(lines), batch)]
    distinct = sum(len({word for line in part for word in line.partition("\t")[2].split()}) for part in batches)
    occurrences = sum(len(line.partition("\t")[2].split()) for line in lines)
    assert CountingDict.lookups == distinct < occurrences


def test_batched_mapper_names_a_bad_line(tmp_path):
    lines, frequencies = tmp_path / "imm.tsv", _write_side_file(tmp_path / "df.tsv", {"a": 2})
    lines.write_text("1\ta b c\n2\ta b\nnot a page line\n3\ta\n")
    with pytest.raises(SpamflowError, match="MRCandidatePairs.*not a page line 'doc<TAB>immutables': 'not a page line'"):
        run_job(MRCandidatePairs, [lines], tmp_path / "out.tsv", runner="inline",
                args=["--threshold", "0.5", "--max-pages", "10", "--frequencies", str(frequencies)])
