"""Parse-stage benchmark: WARC -> Parquet page table, on one core.

Run from the repository root (any directory works)::

    /work/venv/bin/python benchmarks/bench_parse.py            # ~2,000 pages, about 2-3 minutes
    /work/venv/bin/python benchmarks/bench_parse.py --quick    # ~300 pages, well under a minute
    /work/venv/bin/python benchmarks/bench_parse.py --pages 5000

What it does, all in one run (see benchmarks/README.md for the figures):

1. Builds a gzip WARC of ~50 KB HTML pages in a temporary directory: real pages from
   ``<repo>/../shared/data/html-trafilatura-eval/trafilatura-tests-html.tar.xz`` when that
   file exists (the smallest pages whose mean stays at ~50 KB, repeated under new URLs and
   record ids up to N), else synthetic pages (the output says which).
2. Runs ``spamflow.parse.warc_file.parse_warc_file`` end to end on N pages in a fresh subprocess
   pinned to one CPU: pages/s, MB/s of HTML, peak RSS.  Then the same on 4N pages to show
   that memory does not grow with the number of pages.
3. Splits the time of one pass over the stage's steps (WARC read + gunzip, charset decode,
   HTML extract, HTML noise, the rest of the row, Arrow conversion, Parquet write) by timing
   the same functions one after the other on the same records, and splits ``extract`` itself.
4. Compares HTML parsers on the same decoded HTML in the same process, each producing what
   ``spamflow.parse.html_text.extract`` produces (title, visible words, links): selectolax Lexbor
   (the chosen one), lxml.html, BeautifulSoup(html.parser), resiliparse (selectolax 1.0 removed
   its Modest backend).
   A parser that cannot be imported is skipped and named.
5. Prints the machine and a verdict against the targets: >= 1,000 pages/s on one core for
   ~50 KB pages; peak RSS < 1 GB and flat in the number of pages.

Nothing is fetched; the benchmark only reads the local data file if it is there.
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import os
import platform
import random
import re
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BASELINE_SRC = "BENCH_PARSE_SRC"  # environment: a baseline's source tree, which a --baseline child imports instead
sys.path.insert(0, os.environ.get(BASELINE_SRC) or str(REPO))

from selectolax.lexbor import LexborHTMLParser  # noqa: E402
from warcio.statusandheaders import StatusAndHeaders  # noqa: E402
from warcio.warcwriter import WARCWriter  # noqa: E402

from spamflow.parse.html_text import INVISIBLE_TAGS, HtmlText, Link, absolute_url, extract  # noqa: E402
from spamflow.parse.warc_file import BATCH_ROWS  # noqa: E402
from spamflow.words import words  # noqa: E402

DATA = REPO.parent / "shared" / "data" / "html-trafilatura-eval"
TARBALL = DATA / "trafilatura-tests-html.tar.xz"
TARGET_MEAN = 50 * 1024  # bytes of HTML per page
TARGET_PAGES_PER_S = 1000
TARGET_VS_BARE = 0.6  # of a bare loop (fastest WARC reader + selectolax, same title/words/links) in the same run
TARGET_RSS = 1 << 30
MAX_BYTES = 5_000_000  # parse.max_bytes default (spamflow/config.py)
MB = 1_000_000



# ---------------------------------------------------------------------------------------------
# corpus


def real_pages(limit_mean: int) -> tuple[list[tuple[str, bytes]], str]:
    """(url, html bytes) of the trafilatura evaluation pages whose mean size is ~limit_mean:
    the pages sorted by size, the largest prefix whose mean does not exceed the target."""
    urls: dict[str, str] = {}
    index = DATA / "index.tsv"
    if index.exists():
        for line in index.read_text(encoding="utf-8").splitlines()[1:]:
            parts = line.split("\t")
            if len(parts) >= 4:
                urls[f"{parts[2]}/{parts[3]}"] = parts[0]
    pages: list[tuple[str, bytes]] = []
    with tarfile.open(TARBALL, "r:xz") as tar:
        for member in tar:
            if not member.isfile() or not member.name.endswith(".html"):
                continue
            fh = tar.extractfile(member)
            if fh is None:
                continue
            body = fh.read()
            if not body.strip():
                continue
            key = member.name.lstrip("./")
            stem = re.sub(r"[^a-z0-9]+", "-", Path(key).stem.lower()).strip("-") or "page"
            url = urls.get(key, "").replace(" ", "%20")
            if not url.startswith(("http://", "https://")):  # no URL recorded (or a "hard::..." key)
                url = f"https://{stem[:50]}.example/"
            pages.append((url, body))
    total = len(pages)
    pages.sort(key=lambda p: len(p[1]))
    kept, size = 0, 0
    for i, (_, body) in enumerate(pages):
        if (size + len(body)) / (i + 1) > limit_mean:
            break
        kept, size = i + 1, size + len(body)
    chosen = pages[:kept]
    random.Random(7).shuffle(chosen)
    largest = max(len(b) for _, b in chosen)
    note = (f"real pages: trafilatura evaluation corpus ({TARBALL.name}), the {kept} smallest of {total} "
            f"(<= {largest / 1024:.0f} KB each) so that the mean is ~{limit_mean // 1024} KB")
    return chosen, note


_VOCAB_RNG = random.Random(11)
_VOCAB = ["".join(_VOCAB_RNG.choice("abcdefghijklmnopqrstuvwxyzäöüé") for _ in range(_VOCAB_RNG.randint(2, 11)))
          for _ in range(5000)]


def synthetic_pages(count: int, mean: int) -> tuple[list[tuple[str, bytes]], str]:
    """Pages shaped like real ones: head with CSS and scripts, navigation, article, footer."""
    rng = random.Random(5)
    pages = []
    for i in range(count):
        target = int(rng.lognormvariate(0, 0.35) * mean * 0.94)
        host = f"site{i % 97}.example"

        def para(n: int) -> str:
            return " ".join(rng.choice(_VOCAB) for _ in range(n))

        nav = "".join(f'<li><a href="/section/{rng.choice(_VOCAB)}/{j}.html">{para(2)}</a></li>' for j in range(40))
        foot = "".join(f'<a href="https://other{j}.example/{rng.choice(_VOCAB)}" rel="nofollow">{para(1)}</a> '
                       for j in range(25))
        css = "".join(f".c{j}{{margin:{j}px;color:#{j:06x}}}" for j in range(120))
        js = "var d=" + json.dumps({str(j): para(3) for j in range(90)}) + ";"
        head = (f'<head><meta charset="utf-8"><title>{para(6)}</title><style>{css}</style>'
                f'<script>{js}</script></head>')
        body = [f'<body><header><nav><ul>{nav}</ul></nav></header><main><article><h1>{para(8)}</h1>']
        size = len(head) + len(body[0]) + len(foot) + 200
        while size < target:
            p = (f'<p class="c{rng.randint(0, 119)}">{para(40)} <a href="/a/{rng.randint(0, 9999)}.html">'
                 f'{para(3)}</a> <b>{para(4)}</b> {para(30)}</p>\n')
            body.append(p)
            size += len(p)
        body.append(f"</article></main><footer>{foot}</footer><noscript>{para(5)}</noscript></body>")
        pages.append((f"https://{host}/page/{i}.html",
                       f"<!doctype html><html>{head}{''.join(body)}</html>".encode()))
    return pages, "SYNTHETIC pages (the trafilatura tarball was not found beside the repo)"


def copy_of(url: str, body: bytes, copy: int) -> tuple[str, bytes]:
    """Copy number ``copy`` of a page: its URL and every absolute URL in its HTML moved to the
    host ``c<copy>.<host>``, so that it resolves to links no earlier page had (link caches
    see new URLs, as in a crawl where pages rarely share links; the registered domain stays)."""
    if not copy:
        return url, body
    prefix = f"://c{copy}."
    return url.replace("://", prefix, 1), body.replace(b"://", prefix.encode())


def write_warc(path: Path, pages: list[tuple[str, bytes]], count: int, copy_base: int = 0) -> int:
    """Write ``count`` response records cycling over ``pages``, each with a new record id
    (and new URLs, see ``copy_of``, when a page repeats); returns the bytes of HTML written."""
    html_bytes = 0
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True, warc_version="WARC/1.1")
        for i in range(count):
            url, body = copy_of(*pages[i % len(pages)], copy_base + i // len(pages))
            http = StatusAndHeaders("200 OK", [("Content-Type", "text/html"), ("Content-Length", str(len(body)))],
                                    protocol="HTTP/1.1")
            headers = {"WARC-Record-ID": f"<urn:uuid:{uuid.uuid4()}>", "WARC-Date": "2026-11-22T10:00:00Z",
                       "WARC-IP-Address": "192.0.2.1"}
            rec = writer.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=http,
                                            warc_headers_dict=headers)
            writer.write_record(rec)
            html_bytes += len(body)
    return html_bytes


def clear_caches() -> None:
    """Empty spamflow's memo caches (link normalisation, domains) so that every measurement
    starts cold, whatever ran before it in this process."""
    import spamflow.domains
    import spamflow.parse.html_text

    for module in (spamflow.parse.html_text, spamflow.domains):
        for value in vars(module).values():
            if callable(getattr(value, "cache_clear", None)):
                value.cache_clear()


# ---------------------------------------------------------------------------------------------
# end to end, in a fresh subprocess


def _rss_now() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def child_parse(warc: str, out: str) -> None:
    """The subprocess: parse one WARC file as the stage does, print JSON with time and memory."""
    from spamflow.parse.warc_file import parse_warc_file

    baseline = _rss_now()
    t0 = time.perf_counter()
    cpu0 = time.process_time()
    result = parse_warc_file(warc, "bench", out, max_bytes=MAX_BYTES)
    seconds = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
    print(json.dumps({"seconds": seconds, "cpu_seconds": cpu, "baseline_rss": baseline, "peak_rss": peak,
                      "counts": dict(result.counts), "bad": len(result.bad_records)}))


def bare_page(body: bytes, url: str) -> tuple[str, list[str], list[Link]]:
    """The bare loop's work on one page: title, words and links as ``extract`` gives them,
    from the payload bytes as they are."""
    tree = LexborHTMLParser(body)
    title_node = tree.css_first("title")
    title = " ".join(title_node.text(deep=True).split()) if title_node else ""
    links = []
    for a in tree.css("a[href]"):
        attrs = a.attributes
        target = absolute_url(attrs.get("href") or "", url)
        if target is not None:
            links.append(Link(target, " ".join(a.text(deep=True, separator=" ").split()),
                              "nofollow" in (attrs.get("rel") or "").lower().split()))
    tree.strip_tags(INVISIBLE_TAGS)
    root = tree.body or tree.root
    return title, words(root.text(deep=True, separator=" ") if root is not None else ""), links


def child_bare(warc: str) -> None:
    """The subprocess: the bare loop the stage is measured against, no framework around it:
    the fastest WARC reader (FastWARC, else warcio's ArchiveIterator) and selectolax giving
    the same title, words and links as ``extract`` (spamflow's ``words`` and
    ``absolute_url``), with the payload bytes handed to Lexbor as they are (no charset
    decision, no HTML noise, no bad-record checks, no Arrow or Parquet)."""
    try:
        from fastwarc.warc import ArchiveIterator, WarcRecordType
    except ImportError:
        ArchiveIterator = None  # noqa: N806
    t0, cpu0 = time.perf_counter(), time.process_time()
    pages = 0
    if ArchiveIterator is not None:
        reader = "FastWARC"
        with open(warc, "rb") as fh:
            for rec in ArchiveIterator(fh, record_types=WarcRecordType.response, parse_http=True):
                bare_page(rec.reader.read(), rec.headers.get("WARC-Target-URI") or "")
                pages += 1
    else:
        from warcio.archiveiterator import ArchiveIterator as WarcioIterator

        reader = "warcio"
        with open(warc, "rb") as fh:
            for rec in WarcioIterator(fh):
                if rec.rec_type == "response":
                    bare_page(rec.content_stream().read(), rec.rec_headers.get_header("WARC-Target-URI") or "")
                    pages += 1
    print(json.dumps({"seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - cpu0, "pages": pages,
                      "reader": reader}))


def run_child(warc: Path, out: Path | None, src: Path | None = None) -> dict:
    """``child_parse`` (``child_bare`` when ``out`` is None) in a fresh process; ``src``: the
    source tree whose spamflow it imports (a ``--baseline`` commit's), else this one."""
    mode = ["--child-parse", str(warc), str(out)] if out is not None else ["--child-bare", str(warc)]
    env = {**os.environ, BASELINE_SRC: str(src)} if src is not None else None
    proc = subprocess.run([sys.executable, __file__, *mode], capture_output=True, text=True, check=False, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"child parse failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------------------------------
# time split of one pass, in this process


def baseline_tree(rev: str, into: Path) -> Path:
    """The ``spamflow`` package of commit ``rev``, extracted under ``into``."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "spamflow"], capture_output=True, check=False)
    if archive.returncode != 0:
        raise SystemExit(f"--baseline {rev}: git archive failed: {archive.stderr.decode(errors='replace').strip()}")
    into.mkdir()
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def same_table(before: Path, after: Path) -> str:
    """Whether two page tables hold the same rows, column by column, in the same order."""
    import pyarrow.parquet as pq

    old, new = pq.read_table(before), pq.read_table(after)
    if not old.schema.equals(new.schema):
        return f"DIFFERENT schema from the baseline's:\n{old.schema}\n--\n{new.schema}"
    differ = [name for name in old.column_names if not old.column(name).equals(new.column(name))]
    if differ:
        return f"DIFFERENT from the baseline's in {', '.join(differ)}"
    return f"identical to the baseline's ({new.num_rows} rows, every one of {new.num_columns} columns)"


def time_split(warc: Path, out: Path) -> tuple[dict[str, float], dict[str, float], Counter[str], int]:
    """The stage's steps timed one after the other over all records of ``warc``, caches cold."""
    import pyarrow.parquet as pq

    import spamflow.parse.pages as pages_mod
    from spamflow.parse.charset import decode_html
    from spamflow.parse.html_text import LexborHTMLParser, extract_spaced
    from spamflow.parse.pages import (
        PAGE_SCHEMA,
        PARQUET_OPTIONS,
        PageBatch,
        _utf8_bytes,
        is_html_response,
        parse_record,
    )
    from spamflow.parse.warc_records import iter_records
    from spamflow.words import html_noise_utf8

    split: dict[str, float] = {}
    clock = time.perf_counter
    clear_caches()
    t = clock()
    items = [it for it in iter_records(warc, wants_payload=is_html_response, max_bytes=MAX_BYTES)]
    split["WARC read + gunzip (iter_records)"] = clock() - t
    items = [it for it in items if getattr(it, "payload", None)]
    html_bytes = sum(len(it.payload) for it in items)

    t = clock()
    decoded = [decode_html(it.payload, it.http_header("Content-Type")) for it in items]
    split["charset decode"] = clock() - t
    sources = Counter(d.source for d in decoded)
    urls = [(it.header("WARC-Target-URI") or "").strip().strip("<>") for it in items]

    clear_caches()
    inputs = [d.text if (b := _utf8_bytes(it.payload, d)) is None else b for it, d in zip(items, decoded)]
    t = clock()
    extracted = [extract_spaced(h, u) for h, u in zip(inputs, urls)]
    split["HTML extract (Lexbor, links, word text)"] = clock() - t

    t = clock()
    noise = [html_noise_utf8(d.text, _utf8_bytes(it.payload, d)) for it, d in zip(items, decoded)]
    split["HTML noise"] = clock() - t

    # the rest of parse_record: the three steps above replaced by their results
    by_payload = {id(it.payload): d for it, d in zip(items, decoded)}
    by_input = {id(h): x for h, x in zip(inputs, extracted)}
    by_text = {id(d.text): z for d, z in zip(decoded, noise)}
    saved = pages_mod.decode_html, pages_mod.extract_spaced, pages_mod.html_noise_utf8
    pages_mod.decode_html = lambda body, content_type=None: by_payload[id(body)]
    pages_mod.extract_spaced = lambda html, url: by_input[id(html)]
    pages_mod.html_noise_utf8 = lambda html, utf8=None: by_text[id(html)]
    try:
        clear_caches()
        t = clock()
        rows = [parse_record(it, "bench") for it in items]
        split["rest of the row (ids, host, domain, date)"] = clock() - t
    finally:
        pages_mod.decode_html, pages_mod.extract_spaced, pages_mod.html_noise_utf8 = saved

    t = clock()
    tables = []
    for i in range(0, len(rows), BATCH_ROWS):
        batch = PageBatch()
        for page in rows[i:i + BATCH_ROWS]:
            batch.append(page)
        tables.append(batch.to_table())
    split["Arrow columns (PageBatch)"] = clock() - t
    t = clock()
    with pq.ParquetWriter(str(out), PAGE_SCHEMA, **PARQUET_OPTIONS) as writer:
        for table in tables:
            writer.write_table(table)
    split["Parquet write (zstd)"] = clock() - t
    del tables, rows

    # inside extract, page by page (a tree is dropped before the next is built, as in extract)
    sub = dict.fromkeys(["Lexbor parse", "css queries, attributes, anchor text", "absolute_url, caches cold",
                         "absolute_url, same links again (caches warm)", "strip_tags + body text()",
                         "words()"], 0.0)
    n_links = 0
    clear_caches()
    for h, u in zip(inputs, urls):
        t0 = clock()
        tree = LexborHTMLParser(h)
        t1 = clock()
        tree.css_first("title")
        tree.css_first("base[href]")
        found = [(a.attributes.get("href") or "", a.attributes.get("rel") or "", a.text(deep=True, separator=" "))
                 for a in tree.css("a[href]")]
        t2 = clock()
        for href, _rel, _anchor in found:
            absolute_url(href, u)
        t3 = clock()
        for href, _rel, _anchor in found:
            absolute_url(href, u)
        t3b = clock()
        tree.strip_tags(INVISIBLE_TAGS)
        root = tree.body or tree.root
        text = root.text(deep=True, separator=" ") if root is not None else ""
        t4 = clock()
        words(text)
        t5 = clock()
        del tree
        n_links += len(found)
        for key, secs in zip(sub, (t1 - t0, t2 - t1, t3 - t2, t3b - t3, t4 - t3b, t5 - t4)):
            sub[key] += secs
    sub["_links per page"] = n_links / max(1, len(items))
    return split, sub, sources, html_bytes


def time_readers(warc: Path) -> list[tuple[str, float]]:
    """Seconds to read every response record with its HTTP payload: spamflow's reader (with
    its FastWARC fast path when FastWARC is installed), the same with warcio alone, and
    FastWARC alone if installed."""
    import spamflow.parse.fast_records as fast_records
    from spamflow.parse.pages import is_html_response
    from spamflow.parse.warc_records import iter_records

    out = []
    fast_iterator = fast_records.FastIterator
    for label, iterator in (("spamflow.parse.warc_records.iter_records", fast_iterator),
                            ("the same, warcio alone (no fast path)", None)):
        if label.startswith("spamflow") and iterator is None:
            label += " (FastWARC not installed: warcio)"
        fast_records.FastIterator = iterator
        try:
            t = time.perf_counter()
            for _ in iter_records(warc, wants_payload=is_html_response, max_bytes=MAX_BYTES):
                pass
            out.append((label, time.perf_counter() - t))
        finally:
            fast_records.FastIterator = fast_iterator
    try:
        from fastwarc.warc import ArchiveIterator, WarcRecordType
    except ImportError:
        return out
    t = time.perf_counter()
    with open(warc, "rb") as fh:
        for rec in ArchiveIterator(fh, record_types=WarcRecordType.response, parse_http=True):
            rec.headers.get("WARC-Target-URI")
            rec.http_headers.get("Content-Type")
            rec.reader.read(MAX_BYTES + 1)
    out.append(("FastWARC (ArchiveIterator, parse_http)", time.perf_counter() - t))
    return out


# ---------------------------------------------------------------------------------------------
# alternative parsers, each giving what spamflow.parse.html_text.extract gives


def _link(href: str | None, rel: str | list[str] | None, anchor: str, base: str) -> Link | None:
    target = absolute_url(href or "", base)
    if target is None:
        return None
    if isinstance(rel, list):
        rel = " ".join(rel)
    return Link(target, " ".join(anchor.split()), "nofollow" in (rel or "").lower().split())


def make_lxml() -> Callable[[str, str], HtmlText]:
    import lxml.html
    from lxml import etree

    xml_decl = re.compile(r"^\s*<\?xml[^>]*\?>")

    def extract_lxml(html: str, url: str) -> HtmlText:
        try:
            doc = lxml.html.document_fromstring(html)
        except ValueError:  # a str with an <?xml encoding=...?> declaration
            doc = lxml.html.document_fromstring(xml_decl.sub("", html, count=1))
        except etree.ParserError:  # empty document
            return HtmlText("", [], [])
        title_node = doc.find(".//title")
        title = " ".join(title_node.text_content().split()) if title_node is not None else ""
        base = url
        base_node = doc.find(".//base[@href]")
        if base_node is not None:
            base = absolute_url(base_node.get("href") or "", url) or url
        links = []
        for a in doc.iter("a"):
            href = a.get("href")
            if href is not None and (lk := _link(href, a.get("rel"), " ".join(a.itertext()), base)):
                links.append(lk)
        etree.strip_elements(doc, *INVISIBLE_TAGS, with_tail=False)
        root = doc.find("body")
        root = doc if root is None else root
        return HtmlText(title, words(" ".join(root.itertext())), links)

    return extract_lxml


def make_bs4() -> Callable[[str, str], HtmlText]:
    from bs4 import BeautifulSoup

    def extract_bs4(html: str, url: str) -> HtmlText:
        soup = BeautifulSoup(html, "html.parser")
        title_node = soup.find("title")
        title = " ".join(title_node.get_text(" ").split()) if title_node else ""
        base = url
        base_node = soup.find("base", href=True)
        if base_node is not None:
            base = absolute_url(base_node.get("href") or "", url) or url
        links = [lk for a in soup.find_all("a", href=True)
                 if (lk := _link(a.get("href"), a.get("rel"), a.get_text(" "), base))]
        for tag in soup.find_all(INVISIBLE_TAGS):
            if not tag.decomposed:
                tag.decompose()
        root = soup.body or soup
        return HtmlText(title, words(root.get_text(" ")), links)

    return extract_bs4


def make_resiliparse() -> Callable[[str, str], HtmlText]:
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.html import HTMLTree, traverse_dom

    skip = [t for t in INVISIBLE_TAGS if t not in ("script", "style", "noscript", "head")]

    def extract_resiliparse(html: str, url: str) -> HtmlText:
        tree = HTMLTree.parse(html)
        title = " ".join((tree.title or "").split())
        doc = tree.document
        base = url
        base_node = doc.query_selector("base[href]")
        if base_node is not None:
            base = absolute_url(base_node.getattr("href") or "", url) or url
        anchors = []

        def visit(ctx) -> None:  # iterating query_selector_all("a[href]") costs ~0.15 ms per element in 2.0.1
            node = ctx.node
            if node.tag == "a" and node.hasattr("href"):
                anchors.append(node)

        if doc.first_element_child is not None:
            traverse_dom(doc.first_element_child, visit, elements_only=True)
        links = [lk for a in anchors if (lk := _link(a.getattr("href"), a.getattr("rel"), a.text, base))]
        text = extract_plain_text(tree, preserve_formatting=False, main_content=False, list_bullets=False,
                                  alt_texts=False, links=False, form_fields=False, noscript=False,
                                  skip_elements=skip)
        return HtmlText(title, words(text), links)

    return extract_resiliparse


PARSERS: list[tuple[str, Callable[[], Callable[[str, str], HtmlText]]]] = [
    ("selectolax Lexbor (chosen)", lambda: extract),
    ("lxml.html (libxml2)", make_lxml),
    ("BeautifulSoup html.parser", make_bs4),
    ("resiliparse (Lexbor) html2text", make_resiliparse),
]


def compare_parsers(docs: list[tuple[str, str, int]], budget: float, rounds: int) -> tuple[list[dict], list[str]]:
    """Time each parser over ``docs`` (decoded HTML, url, bytes of HTML), stopping after
    ``budget`` seconds, in ``rounds`` interleaved rounds (best round kept), and compare its
    output with the chosen parser's."""
    fns, skipped = [], []
    for name, factory in PARSERS:
        try:
            fn = factory()
            fn(docs[0][0], docs[0][1])  # warm up (imports)
        except ImportError as exc:
            skipped.append(f"{name}: {str(exc).splitlines()[0][:100]}")
            continue
        fns.append((name, fn))
    best: dict[str, dict] = {}
    outputs: dict[str, list[HtmlText | None]] = {}
    for _ in range(rounds):
        for name, fn in fns:
            clear_caches()  # every parser starts with cold link caches
            gc.collect()
            results: list[HtmlText | None] = []
            nbytes, elapsed, failures = 0, 0.0, 0
            for html, url, size in docs:
                t = time.perf_counter()
                try:
                    out = fn(html, url)
                except Exception:  # noqa: BLE001 - count it, keep comparing
                    out = None
                    failures += 1
                elapsed += time.perf_counter() - t
                results.append(out)
                nbytes += size
                if elapsed > budget and len(results) >= 20:
                    break
            if len(results) > len(outputs.get(name, [])):
                outputs[name] = results
            rate = len(results) / elapsed
            if name not in best or rate > best[name]["pages_s"]:
                best[name] = {"name": name, "pages": len(results), "pages_s": rate, "mb_s": nbytes / MB / elapsed,
                              "failures": failures}
    reference = outputs[fns[0][0]]
    rows = []
    for name, _ in fns:
        row, results = best[name], outputs[name]
        same_words = same_chars = same_links = 0
        for ref, got in zip(reference, results):
            if got is None or ref is None:
                continue
            same_words += got.words == ref.words
            same_chars += "".join(got.words) == "".join(ref.words)
            same_links += [lk.url for lk in got.links] == [lk.url for lk in ref.links]
        n = len(results)
        row.update(compared=n, same_words=same_words / n, same_chars=same_chars / n, same_links=same_links / n)
        rows.append(row)
    return rows, skipped


# ---------------------------------------------------------------------------------------------
# report


def versions() -> str:
    names = ["selectolax", "lxml", "beautifulsoup4", "resiliparse", "warcio", "fastwarc", "pyarrow", "charset-normalizer"]
    out = []
    for name in names:
        try:
            out.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            out.append(f"{name} (not installed)")
    return ", ".join(out)


def machine() -> str:
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{os.cpu_count()} cores ({cpu or platform.processor()}), {mem:.0f} GB RAM, "
            f"Python {platform.python_version()} on {platform.system()} {platform.release()}")


def fmt_mb(n: float) -> str:
    return f"{n / 2**20:,.0f} MiB"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Benchmark spamflow's parse stage (WARC -> Parquet page table) on one core, "
                    "against alternative HTML parsers, with peak RSS for N and 4N pages.")
    parser.add_argument("--pages", type=int, default=None, help="pages in the corpus (default 2000; 300 with --quick)")
    parser.add_argument("--quick", action="store_true", help="a short run: ~300 pages, shorter parser budgets")
    parser.add_argument("--budget", type=float, default=None,
                        help="seconds per parser per round in the comparison (default 5; 2 with --quick)")
    parser.add_argument("--repeat", type=int, default=None,
                        help="end-to-end runs on N pages and parser-comparison rounds, best one kept "
                             "(default 3; 2 with --quick); the machine may be shared, so best-of is the figure")
    parser.add_argument("--synthetic", action="store_true", help="use synthetic pages even if the real corpus exists")
    parser.add_argument("--cpu", type=int, default=None, help="CPU to pin to (default: the first allowed one)")
    parser.add_argument("--baseline", metavar="REV", default=None,
                        help="also run the parse of commit REV (its spamflow package) right before each N run, "
                             "and print its figures beside these: before and after in the same machine state")
    parser.add_argument("--child-parse", nargs=2, metavar=("WARC", "OUT"), help=argparse.SUPPRESS)
    parser.add_argument("--child-bare", metavar="WARC", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child_parse:
        child_parse(*args.child_parse)
        return 0
    if args.child_bare:
        child_bare(args.child_bare)
        return 0

    n = args.pages or (300 if args.quick else 2000)
    budget = args.budget if args.budget is not None else (2.0 if args.quick else 5.0)
    repeats = args.repeat or (2 if args.quick else 3)
    if hasattr(os, "sched_setaffinity"):
        cpu = args.cpu if args.cpu is not None else min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})  # this process and every child on one core
        pinned = f"pinned to CPU {cpu}"
    else:
        pinned = "not pinned (no sched_setaffinity)"

    print("spamflow parse benchmark")
    print(f"machine : {machine()}")
    print(f"libs    : {versions()}")
    print(f"run     : {n} pages (4N = {4 * n} for the memory check), {pinned}")
    t_start = time.perf_counter()

    if TARBALL.exists() and not args.synthetic:
        pages, note = real_pages(TARGET_MEAN)
    else:
        pages, note = synthetic_pages(min(n, 400), TARGET_MEAN)
    sizes = [len(b) for _, b in pages]
    print(f"corpus  : {note}")
    print(f"          {len(pages)} distinct pages, HTML size mean {statistics.mean(sizes) / 1024:.1f} KB, "
          f"median {statistics.median(sizes) / 1024:.1f} KB, min {min(sizes) / 1024:.1f} KB, "
          f"max {max(sizes) / 1024:.1f} KB; repeated up to N under new record ids, with every URL")
    print("          of a repeat moved to a new host (c<k>.<host>) so link caches see new URLs")

    with tempfile.TemporaryDirectory(prefix="spamflow-bench-") as tmp:
        tmpdir = Path(tmp)
        warc_n, warc_4n = tmpdir / "n.warc.gz", tmpdir / "4n.warc.gz"
        t = time.perf_counter()
        bytes_n = write_warc(warc_n, pages, n)
        bytes_4n = write_warc(warc_4n, pages, 4 * n, copy_base=1000)
        print(f"          WARC written in {time.perf_counter() - t:.1f} s: N {warc_n.stat().st_size / MB:.1f} MB gz "
              f"({bytes_n / MB:.1f} MB HTML), 4N {warc_4n.stat().st_size / MB:.1f} MB gz ({bytes_4n / MB:.1f} MB HTML)")

        # 1. end to end, fresh subprocesses
        print(f"\n== end to end: parse_warc_file, fresh process on one core (N: best of {repeats} runs) ==")
        runs = {}
        bare: list[dict] = []
        base_runs: list[dict] = []
        old_src = baseline_tree(args.baseline, tmpdir / "baseline") if args.baseline else None
        for label, warc, count, nbytes, times in (("N", warc_n, n, bytes_n, repeats), ("4N", warc_4n, 4 * n, bytes_4n, 1)):
            results = []
            for _ in range(times):
                if label == "N":  # the bare loop (and the baseline) right before each N run: all see the same load
                    bare.append(run_child(warc, None))
                    if old_src is not None:
                        base_runs.append(run_child(warc, tmpdir / "baseline.parquet", old_src))
                res = run_child(warc, tmpdir / f"{label}.parquet")
                pages_done = res["counts"].get("pages", 0)
                if pages_done != count:
                    print(f"  WARNING: {label}: {pages_done} pages parsed of {count} (counts {res['counts']})")
                res.update(pages=pages_done, pages_s=pages_done / res["seconds"], mb_s=nbytes / MB / res["seconds"])
                results.append(res)
            if label == "N":
                runs_n = results
            res = min(results, key=lambda r: r["seconds"])
            res["median_pages_s"] = statistics.median(r["pages_s"] for r in results)
            res["peak_rss"] = max(r["peak_rss"] for r in results)
            runs[label] = res
            spread = f" (median {res['median_pages_s']:.0f})" if times > 1 else ""
            print(f"  {label:>2} = {count:>5} pages: {res['seconds']:5.1f} s wall, {res['cpu_seconds']:5.1f} s CPU  "
                  f"{res['pages_s']:5.0f} pages/s{spread}  {res['mb_s']:5.1f} MB/s HTML  "
                  f"RSS after imports {fmt_mb(res['baseline_rss'])}, peak {fmt_mb(res['peak_rss'])}")
        bare_best = min(bare, key=lambda r: r["seconds"])
        bare_pages_s = bare_best["pages"] / bare_best["seconds"]
        paired = statistics.median(b["seconds"] / r["seconds"] for b, r in zip(bare, runs_n))
        print(f"  bare loop ({bare_best['reader']} + selectolax, same title/words/links, nothing else; best of {len(bare)} "
              f"runs, each right before an N run): {bare_pages_s:5.0f} pages/s")
        cpu_ratio = min(b["cpu_seconds"] for b in bare) / min(r["cpu_seconds"] for r in runs_n)
        print(f"  spamflow / bare loop = {runs['N']['pages_s'] / bare_pages_s:.2f} (best runs, wall), "
              f"{paired:.2f} (median of the paired runs, wall), {cpu_ratio:.2f} (best runs, CPU time)")
        if base_runs:
            best_base = min(base_runs, key=lambda r: r["seconds"])
            base_paired = statistics.median(b["seconds"] / r["seconds"] for b, r in zip(bare, base_runs))
            base_cpu = min(b["cpu_seconds"] for b in bare) / min(r["cpu_seconds"] for r in base_runs)
            print(f"  baseline {args.baseline} (its parse_warc_file, each run right before an N run): "
                  f"{n / best_base['seconds']:5.0f} pages/s, {n / min(r['cpu_seconds'] for r in base_runs):.0f} per CPU second")
            print(f"  baseline / bare loop = {n / best_base['seconds'] / bare_pages_s:.2f} (best runs, wall), "
                  f"{base_paired:.2f} (median of the paired runs, wall), {base_cpu:.2f} (best runs, CPU time)")
            print(f"  CPU time now / baseline = {min(r['cpu_seconds'] for r in runs_n) / min(r['cpu_seconds'] for r in base_runs):.2f} (best runs)")
            print(f"  page table: {same_table(tmpdir / 'baseline.parquet', tmpdir / 'N.parquet')}")
        ratio = runs["4N"]["peak_rss"] / runs["N"]["peak_rss"]
        growth = runs["4N"]["peak_rss"] - runs["N"]["peak_rss"]
        print(f"  peak RSS 4N / N = {ratio:.2f}; growth {fmt_mb(growth)} for {3 * n} more pages "
              f"({growth / (3 * n) / 1024:.1f} KiB/page; flat means ~0)")
        if n < 2 * BATCH_ROWS:
            print(f"  note: N < {2 * BATCH_ROWS} pages: the N run barely fills the {BATCH_ROWS}-row Parquet batch "
                  "that sets the peak; use N >= 1024 to judge flatness")

        # 2. time split
        print("\n== where the time goes (same functions, one step at a time over the N corpus) ==")
        split, sub, sources, html_bytes = time_split(warc_n, tmpdir / "split.parquet")
        total = sum(split.values())
        for step, secs in split.items():
            print(f"  {step:<50} {secs:6.2f} s  {100 * secs / total:5.1f} %  {1e3 * secs / n:6.2f} ms/page")
        print(f"  {'sum':<50} {total:6.2f} s  -> {n / total:.0f} pages/s "
              f"(end to end measured {runs['N']['pages_s']:.0f})")
        print(f"  inside extract, timed piece by piece ({sub.pop('_links per page'):.0f} <a href> per page):")
        for step, secs in sub.items():
            print(f"    {step:<48} {secs:6.2f} s          {1e3 * secs / n:6.2f} ms/page")
        print(f"  charset decided by: {', '.join(f'{k} {v}' for k, v in sources.most_common())}")
        print("  WARC readers, same file, every response with its payload:")
        for name, secs in time_readers(warc_n):
            print(f"    {name:<48} {secs:6.2f} s          {1e3 * secs / n:6.2f} ms/page  "
                  f"{html_bytes / MB / secs:6.0f} MB/s HTML")

        # 3. parser comparison on the same decoded HTML
        from spamflow.parse.charset import decode_html

        distinct = pages[:n]
        docs = [(decode_html(body, "text/html").text, url, len(body)) for url, body in distinct]
        print(f"\n== HTML parsers on the same decoded HTML ({len(docs)} distinct pages, one core, "
              f"best of {repeats} rounds of <= {budget:.0f} s each) ==")
        print("  each gives title, visible words (script/style/noscript/template/svg/... removed), "
              "links (absolute URL, anchor, nofollow)")
        rows, skipped = compare_parsers(docs, budget, repeats)
        chosen = rows[0]
        head = f"  {'parser':<32} {'pages':>5} {'pages/s':>8} {'MB/s':>6} {'vs chosen':>9} " \
               f"{'same words':>10} {'same chars':>10} {'same links':>10}"
        print(head)
        print("  " + "-" * (len(head) - 2))
        for r in rows:
            fail = f"  ({r['failures']} failed)" if r["failures"] else ""
            print(f"  {r['name']:<32} {r['pages']:>5} {r['pages_s']:>8.0f} {r['mb_s']:>6.1f} "
                  f"{r['pages_s'] / chosen['pages_s']:>8.2f}x {100 * r['same_words']:>9.1f}% "
                  f"{100 * r['same_chars']:>9.1f}% {100 * r['same_links']:>9.1f}%{fail}")
        for s in skipped:
            print(f"  skipped: {s}")
        print("  same words = identical word list to the chosen parser; same chars = identical once word breaks")
        print("  are ignored (parsers differ on whether inline tags split words); same links = identical link URLs")

    # 4. verdict
    e2e = runs["N"]["pages_s"]  # best of the N runs
    peak = max(runs["N"]["peak_rss"], runs["4N"]["peak_rss"])
    flat = ratio < 1.15
    print("\n== verdict ==")
    cpu_pages_s = runs["N"]["pages"] / min(r["cpu_seconds"] for r in runs_n)
    print(f"  throughput: {e2e:.0f} pages/s (best run; median {runs['N']['median_pages_s']:.0f}; {cpu_pages_s:.0f} per CPU second, "
          f"the figure to read when the machine is shared) on one core for {statistics.mean(sizes) / 1024:.0f} KB pages "
          f"-> {'MEETS' if e2e >= TARGET_PAGES_PER_S else 'MISSES'} the >= {TARGET_PAGES_PER_S:,} pages/s target"
          + ("" if e2e >= TARGET_PAGES_PER_S else f" ({e2e / TARGET_PAGES_PER_S:.0%} of it)"))
    vs_bare = e2e / bare_pages_s
    print(f"  vs bare   : {vs_bare:.2f}x the bare loop ({bare_best['reader']} + selectolax, {bare_pages_s:.0f} pages/s, same run) "
          f"-> {'MEETS' if vs_bare >= TARGET_VS_BARE else 'MISSES'} the >= {TARGET_VS_BARE}x target")
    print(f"  memory    : peak RSS {fmt_mb(peak)} -> {'MEETS' if peak < TARGET_RSS else 'MISSES'} < 1 GB; "
          f"4N/N = {ratio:.2f} -> {'flat' if flat else 'NOT flat'} in the number of pages"
          + ("" if n >= 2 * BATCH_ROWS else " (N too small to judge, see note)"))
    print(f"  (corpus: {'real' if 'real' in note else 'SYNTHETIC'} pages; whole run {time.perf_counter() - t_start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
