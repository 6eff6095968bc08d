"""The page table of spamflow's parse on real data, as a checksum per column, so that a
faster parse can be shown to give the same table (``tests/test_parse_reference.py``).

The corpus: every WARC/ARC file in ``../shared/data/warc-samples`` (gzip per record, one
stream, ARC, revisits, brotli bodies, ClueWeb09 quirks), and one uncompressed WARC of the
real pages of the three HTML collections (~1,340 pages, many languages and charsets) under
their real URLs where known, served as ``text/html`` without a charset.  Record ids and
dates are fixed and the WARC is not gzipped, so the file and its offsets are the same on
any machine.

Regenerate the stored reference only when a change of the page table is intended (a new
parse version, or a library upgrade that changes the parse: say so in the commit)::

    PYTHONPATH=.:plugins:workflows python tests/parse_reference.py
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq

from spamflow.parse.warc_file import parse_warc_file

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"
REFERENCE = Path(__file__).parent / "fixtures" / "parse_reference.json"
MAX_BYTES = 5_000_000


def _trafilatura() -> Iterator[tuple[str, bytes]]:
    folder = SHARED_DATA / "html-trafilatura-eval"
    urls = {}
    for line in (folder / "index.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        parts = line.split("\t")
        urls[f"{parts[2]}/{parts[3]}"] = parts[0]
    with tarfile.open(folder / "trafilatura-tests-html.tar.xz") as tar:
        for member in tar:  # archive order (an .xz tar cannot be read out of order quickly)
            if member.isfile() and member.name.endswith(".html"):
                url = urls.get(member.name.lstrip("./"), "")
                if not url.startswith(("http://", "https://")):
                    url = f"http://trafilatura.example/{member.name}"
                yield url.replace(" ", "%20"), tar.extractfile(member).read()  # type: ignore[union-attr]


def _readability() -> Iterator[tuple[str, bytes]]:
    with tarfile.open(SHARED_DATA / "html-mozilla-readability" / "readability-test-pages.tar.xz") as tar:
        for member in tar:  # archive order (an .xz tar cannot be read out of order quickly)
            if member.isfile() and member.name.endswith("source.html"):
                name = member.name.split("/")[-2]
                yield f"https://{name}.readability.example/page/index.html", \
                    tar.extractfile(member).read()  # type: ignore[union-attr]


def _article_benchmark() -> Iterator[tuple[str, bytes]]:
    folder = SHARED_DATA / "html-article-extraction-benchmark"
    urls = {}
    for line in (folder / "index.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        parts = line.split("\t")
        urls[parts[0]] = parts[1]
    with tarfile.open(folder / "html.tar") as tar:
        for member in tar:  # archive order (an .xz tar cannot be read out of order quickly)
            if member.isfile() and member.name.endswith(".html.gz"):
                key = member.name.split("/")[-1].removesuffix(".html.gz")
                yield urls.get(key, f"http://article.example/{key}"), \
                    gzip.decompress(tar.extractfile(member).read())  # type: ignore[union-attr]


def html_pages_warc(path: Path) -> int:
    """Write the real HTML pages as one uncompressed WARC; the number of pages."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    count = 0
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=False, warc_version="WARC/1.1")
        for source in (_trafilatura, _readability, _article_benchmark):
            for url, body in source():
                http = StatusAndHeaders("200 OK", [("Content-Type", "text/html"), ("Content-Length", str(len(body)))],
                                        protocol="HTTP/1.1")
                headers = {"WARC-Record-ID": f"<urn:spamflow-test:{count}>", "WARC-Date": "2026-11-24T10:00:00Z",
                           "WARC-IP-Address": "192.0.2.1"}
                writer.write_record(writer.create_warc_record(url, "response", payload=io.BytesIO(body),
                                                              http_headers=http, warc_headers_dict=headers))
                count += 1
    return count


def sources_present() -> bool:
    return all((SHARED_DATA / name).exists() for name in (
        "warc-samples", "html-trafilatura-eval", "html-mozilla-readability", "html-article-extraction-benchmark"))


def _digest(values: object) -> str:
    text = json.dumps(values, ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def digests_of(warc: Path, tmp: Path) -> dict[str, object]:
    """Parse ``warc`` (named by its file name) and describe the result: rows, a checksum per
    column, the counts and every bad record."""
    out = tmp / (warc.name + ".parquet")
    result = parse_warc_file(warc, "ref", out, max_bytes=MAX_BYTES, name=warc.name)
    table = pq.read_table(out)
    return {
        "rows": table.num_rows,
        "columns": {name: _digest(table.column(name).to_pylist()) for name in table.column_names},
        "counts": dict(sorted(result.counts.items())),
        "bad_records": _digest(sorted(result.bad_records, key=lambda b: (b["offset"], b["kind"]))),
        "revisits": _digest([repr(r) for r in result.revisits]),
    }


def corpus(tmp: Path) -> list[Path]:
    """The corpus files (the HTML pages' WARC written into ``tmp``)."""
    files = sorted(p for p in (SHARED_DATA / "warc-samples").iterdir() if p.name.endswith((".warc.gz", ".arc.gz"))
                   and ".wat." not in p.name and ".wet." not in p.name)
    pages = tmp / "real-html-pages.warc"
    html_pages_warc(pages)
    return files + [pages]


def reference_now(tmp: Path) -> dict[str, object]:
    return {warc.name: digests_of(warc, tmp) for warc in corpus(tmp)}


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        ref = reference_now(Path(tmp))
    REFERENCE.write_text(json.dumps(ref, indent=1, sort_keys=True) + "\n")
    print(f"wrote {REFERENCE}: {sum(v['rows'] for v in ref.values())} rows in {len(ref)} files")  # type: ignore[index]
