"""Real spinner dictionaries: what each kind of line gets (docs/spin.md, "Synonym dictionary").

A head with no synonyms spins nothing (DSpin: mutables are the words the spinner can
replace, so such a head stays immutable); alternatives without words are dropped and
counted; a line whose head has no words or that is not UTF-8 is skipped and reported with
its file and line (the spin stage's counts and bad_records), or under --strict is an error.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spamflow.detector import RunSettings, StageContext, StageOutputs
from spamflow.errors import BadInputError
from spamflow_spin.detector import SpinDetector
from spamflow_spin.dictionary import DictionaryError, load_dictionary
from spamflow_spin.params import SpinParams
from spamflow_spin.partition import partition

from warc_factory import Resp, html, write_warc

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"

# The lines a published dictionary has, one of each kind (CRLF and LF line ends mixed).
REAL_WORLD = (
    "\ufeffBig|large|huge\r\n"  # 1  group (after a byte-order mark)
    "one of the\r\n"            # 2  head without synonyms
    "%|percent\n"               # 3  head without words: skipped
    "\n"                        # 4  blank
    "   \t\n"                   # 5  blank
    "fast||quick|\n"            # 6  group; two empty alternatives
).encode("utf-8") + (
    b"caf\xe9|coffee shop\n"    # 7  Latin-1, not UTF-8: skipped
) + (
    "same|Same\n"               # 8  its only alternative is itself: head without synonyms
    "|orphan\n"                 # 9  empty head: skipped
    "well-known|famous|%\n"     # 10 group; '%' has no words
    "café|bistro\n"             # 11 group (UTF-8)
    "one of the|"               # 12 head without synonyms, one empty alternative; no final newline
).encode()

EXPECTED_NEIGHBOURS = {
    "big": {"large", "huge"}, "large": {"big"}, "huge": {"big"},
    "fast": {"quick"}, "quick": {"fast"},
    "well known": {"famous"}, "famous": {"well known"},
    "café": {"bistro"}, "bistro": {"café"},
}


def _expected_bad(path: Path) -> list[dict[str, object]]:
    return [
        {"file": str(path), "offset": REAL_WORLD.index(b"%|percent"), "line": 3, "kind": "dictionary_no_head",
         "reason": "the head (text before the first '|') has no words: '%|percent'"},
        {"file": str(path), "offset": REAL_WORLD.index(b"caf\xe9"), "line": 7, "kind": "dictionary_not_utf8",
         "reason": "not UTF-8 (invalid continuation byte at byte 3): b'caf\\xe9|coffee shop'; "
                   "convert the file to UTF-8"},
        {"file": str(path), "offset": REAL_WORLD.index(b"|orphan"), "line": 9, "kind": "dictionary_no_head",
         "reason": "the head (text before the first '|') has no words: '|orphan'"},
    ]


EXPECTED_COUNTS = {
    "dictionary_entries": 9, "dictionary_heads": 4, "dictionary_too_long": 0,
    "dictionary_lines": 7,  # lines 1, 2, 6, 8, 10, 11, 12; with 2 blank and 3 skipped: all 12
    "dictionary_blank_lines": 2, "dictionary_heads_without_synonyms": 3,  # lines 2, 8, 12
    "dictionary_empty_alternatives": 4,  # two on line 6, '%' on line 10, the trailing '|' of line 12
    "bad_dictionary_no_head": 2, "bad_dictionary_not_utf8": 1,
}


@pytest.fixture
def real_world(tmp_path) -> Path:
    path = tmp_path / "tbs.txt"
    path.write_bytes(REAL_WORLD)
    return path


def test_every_line_of_a_real_world_dictionary_is_parsed_or_skipped_exactly(real_world):
    d = load_dictionary([real_world])
    assert d.neighbours == EXPECTED_NEIGHBOURS
    assert d.heads == {"big", "fast", "well known", "café"}
    assert d.bad_lines == _expected_bad(real_world)
    assert d.counts() == EXPECTED_COUNTS


def test_a_head_without_synonyms_stays_immutable_unless_another_line_gives_it_some(tmp_path, real_world):
    text = "it is one of the same big ideas".split()
    part = partition(text, load_dictionary([real_world]))
    # the paper's partition: mutables are the dictionary's words; "one of the" and "same" spin nothing
    assert part.mutables == ["big"]
    assert part.immutables == ["it", "is", "one", "of", "the", "same", "ideas"]
    more = tmp_path / "more.txt"
    more.write_text("same|alike\n", encoding="utf-8")
    for order in ([real_world, more], [more, real_world]):  # merging does not depend on file order
        d = load_dictionary(order)
        assert d.synonyms("same") == {"alike"} and d.synonyms("alike") == {"same"}
        assert partition(text, d).mutables == ["same", "big"]


def test_strict_makes_the_first_unusable_line_an_error_naming_file_and_line(real_world, tmp_path):
    with pytest.raises(BadInputError) as err:
        load_dictionary([real_world], strict=True)
    assert str(err.value) == (f"{real_world}:3: dictionary_no_head: the head (text before the first '|') has no "
                              "words: '%|percent' (drop --strict to count and go on)")
    latin = tmp_path / "latin.txt"
    latin.write_bytes(b"big|large\r\ncaf\xe9|bar\r\n")
    with pytest.raises(BadInputError, match=rf"^{latin}:2: dictionary_not_utf8: not UTF-8 "):
        load_dictionary([latin], strict=True)
    # heads without synonyms, blank lines and empty alternatives are not errors, even under --strict
    fine = tmp_path / "fine.txt"
    fine.write_text("one of the\n\nfast||quick|\nsame|same\n", encoding="utf-8")
    assert load_dictionary([fine], strict=True).neighbours == {"fast": {"quick"}, "quick": {"fast"}}


@pytest.mark.parametrize("content, message", [
    (b"", "no line has a synonym"),
    (b"one of the\nsame|same\n\n", "no line has a synonym"),
    # Moby Thesaurus's own format (comma-separated): every line a long head without synonyms
    (b"a la mode,advanced,avant-garde,chic\r\nabandon,abdicate,cede\r\n", "no line has a synonym"),
    (b"\xff\xfeb\x00i\x00g\x00|\x00l\x00\n\x00", "2 lines skipped, the first, line 1: not UTF-8"),  # UTF-16
    (gzip.compress(b"big|large\n", mtime=0), "is gzip-compressed; decompress it"),
    (b"UTF-8\n'tween decks|1\n(adv)|between decks\n", "is a MyThes thesaurus"),
], ids=["empty", "no-synonyms", "moby-format", "utf-16", "gzip", "mythes"])
def test_a_file_that_is_not_a_spinner_dictionary_is_refused_whole(tmp_path, content, message):
    path = tmp_path / "dict.txt"
    path.write_bytes(content)
    with pytest.raises(DictionaryError, match=rf"^{path}: .*{message}"):
        load_dictionary([path])
    with pytest.raises(DictionaryError, match="cannot read synonym dictionary"):
        load_dictionary([tmp_path / "nope.txt"])


# ---------------------------------------------------------------- the stage

def _pages(folder: Path) -> Path:
    """A page table of three pages: two copies of one text (a duplicate pair) and another."""
    texts = ["it is one of the big ideas of the year", "it is one of the big ideas of the year",
             "a fast walk in the park today"]
    folder.mkdir()
    pq.write_table(pa.Table.from_pylist([
        {"doc_id": i + 1, "url": f"http://h{i}.example/", "host": f"h{i}.example", "domain": f"h{i}.example",
         "snapshot": "2026-01", "words": text.split(), "links": []} for i, text in enumerate(texts)],
        schema=pa.schema([("doc_id", pa.int64()), ("url", pa.string()), ("host", pa.string()),
                          ("domain", pa.string()), ("snapshot", pa.string()), ("words", pa.list_(pa.string())),
                          ("links", pa.list_(pa.struct([("url", pa.string()), ("anchor", pa.string())])))])),
        folder / "part-00000.parquet")
    return folder


def _run_stage(tmp_path: Path, dictionary: Path, strict: bool, name: str):
    out = tmp_path / name
    out.mkdir()
    ctx = StageContext(params=SpinParams.model_validate({"dictionary": [str(dictionary)]}),
                       inputs={"parse": StageOutputs("parse", tmp_path, {"pages": tmp_path / "pages"}, {})},
                       outdir=out, settings=RunSettings(strict=strict, progress=False))
    return SpinDetector().run(ctx), out


def test_the_stage_counts_and_reports_the_skipped_lines_or_fails_under_strict(tmp_path, real_world):
    _pages(tmp_path / "pages")
    result, out = _run_stage(tmp_path, real_world, strict=False, name="lenient")
    assert result.bad_records == _expected_bad(real_world)
    assert {k: v for k, v in result.counts.items() if k in EXPECTED_COUNTS} == EXPECTED_COUNTS
    assert result.outputs["bad_records"] == "bad_records.jsonl"
    assert [json.loads(line) for line in (out / "bad_records.jsonl").read_text().splitlines()] == \
        _expected_bad(real_world)
    assert result.counts["duplicate_pairs"] == 1 and result.counts["pages"] == 3  # the rest of the stage ran
    with pytest.raises(BadInputError, match=rf"^{real_world}:3: dictionary_no_head: "):
        _run_stage(tmp_path, real_world, strict=True, name="strict")


@pytest.mark.slow
def test_cli_run_reports_the_lines_and_strict_fails_naming_file_and_line(tmp_path, real_world):
    texts = ["it is one of the big ideas", "a fast walk in the park today"]
    write_warc(tmp_path / "a.warc.gz", [Resp(f"http://x{i}.example.com/", html("t", f"<p>{text}</p>"))
                                        for i, text in enumerate(texts)])
    (tmp_path / "c.yaml").write_text(f"workdir: out\ninput: {{warc: ['*.warc.gz']}}\n"
                                     f"detectors:\n  spin: {{dictionary: ['{real_world}']}}\n")
    lenient = subprocess.run([sys.executable, "-m", "spamflow_workflows", "run", "-c", "c.yaml", "--no-progress",
                              "--local-scheduler"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert lenient.returncode == 0, lenient.stderr
    spin = json.loads((tmp_path / "out" / "run.json").read_text())["stages"]["spin"]
    assert spin["bad_records"] == _expected_bad(real_world) and spin["bad_records_total"] == 3
    assert spin["counts"]["bad_dictionary_no_head"] == 2 and spin["counts"]["bad_dictionary_not_utf8"] == 1
    strict = subprocess.run([sys.executable, "-m", "spamflow_workflows", "run", "-c", "c.yaml", "--no-progress",
                             "--local-scheduler", "--strict", "--workdir", "strict-out"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=600)
    assert strict.returncode == 1
    assert f"{real_world}:3: dictionary_no_head" in strict.stderr and "Traceback" not in strict.stderr
    failed = json.loads((tmp_path / "strict-out" / "run.json").read_text())
    assert failed["status"] == "failed" and failed["stages"]["spin"]["error"].startswith(f"{real_world}:3: ")


# ---------------------------------------------------------------- real thesauri, as spamflow converts them

def test_the_shipped_demo_dictionary_loads_strictly_with_every_line_a_group():
    from spamflow_spin.params import resolve_dictionary_path

    path = resolve_dictionary_path("package:spamflow.demo/texts/spin-dictionary.txt", None)
    d = load_dictionary([path], strict=True)
    assert d.lines == len(path.read_text(encoding="utf-8").splitlines()) and d.bad_lines == []
    assert d.heads_without_synonyms == d.empty_alternatives == d.blank_lines == 0


@pytest.mark.skipif(not (DATA / "moby-thesaurus" / "mthesaur_words.txt.gz").is_file(),
                    reason="needs ../shared/data/moby-thesaurus (Moby Thesaurus II)")
def test_the_demo_dictionary_built_from_moby_loads_without_a_skipped_line(tmp_path):
    from spamflow.demo.build_spin_dictionary import build

    path = tmp_path / "moby-spin.txt"
    lines = build(DATA / "moby-thesaurus" / "mthesaur_words.txt.gz")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    d = load_dictionary([path], strict=True)
    assert d.lines == len(lines) and d.bad_lines == [] and d.heads_without_synonyms == 0


def test_the_stage_writes_every_declared_output_when_no_pair_can_be_compared(tmp_path):
    """Two copies of one text: one article, so the candidate job never runs (its work folder
    was then missing, and the run failed with 'declared outputs it did not write')."""
    pages = _pages(tmp_path / "pages")
    table = pq.read_table(pages / "part-00000.parquet").slice(0, 2)
    pq.write_table(table, pages / "part-00000.parquet")
    dictionary = tmp_path / "d.txt"
    dictionary.write_text("big|large\n", encoding="utf-8")
    result, out = _run_stage(tmp_path, dictionary, strict=False, name="out")
    assert result.counts["articles"] == 1 and result.counts["duplicate_pairs"] == 1
    assert sorted(name for name, rel in result.outputs.items() if not (out / rel).exists()) == []
