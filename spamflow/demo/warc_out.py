"""Write the synthetic web as WARC/1.1 files, label tables and ``truth.json``.

Output is byte-identical for the same seed: record ids are uuid5 of (seed, snapshot,
record type, URL), dates come from the page fetch times, and warcio's gzip members carry
mtime 0.  A revisit's ``WARC-Refers-To`` can therefore be computed, not looked up.
"""

from __future__ import annotations

import base64
import hashlib
import json
import uuid
from collections import Counter
from datetime import datetime
from email.utils import format_datetime
from io import BytesIO
from pathlib import Path

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from .build import SNAPSHOTS, DemoPage, SyntheticWeb, build_web

NAMESPACE = uuid.UUID("5f0c1d1e-8a39-4d51-9a57-2b8f7a1e0d11")  # fixed: spamflow demo records
HTML_TYPES = ("text/html", "application/xhtml+xml")
PROFILES = {
    "server-not-modified": "http://netpreserve.org/warc/1.1/revisit/server-not-modified",
    "identical-payload-digest": "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest",
}
REASONS = {200: "OK", 304: "Not Modified", 404: "Not Found"}
FILES_PER_SNAPSHOT = 2


def record_id(seed: int, snapshot: str, rtype: str, url: str) -> str:
    return f"<urn:uuid:{uuid.uuid5(NAMESPACE, f'{seed}|{snapshot}|{rtype}|{url}')}>"


def warc_date(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def sha1_digest(data: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode()


def is_html(content_type: str) -> bool:
    return content_type.split(";")[0].strip().lower() in HTML_TYPES


def _server(ip: str) -> str:
    return "nginx/1.24.0" if int(ip.split(".")[-1]) % 2 else "Apache/2.4.57 (Debian)"


def _write_page(w: WARCWriter, seed: int, pg: DemoPage, first: dict[str, DemoPage]) -> None:
    path = pg.url.split("/", 3)[3] if pg.url.count("/") >= 3 else ""
    req_headers = [
        ("Host", pg.host),
        ("User-Agent", "spamflow-demo/1.0 (+http://127.0.0.1/)"),
        ("Accept", "*/*"),
        ("Connection", "close"),
    ]
    old = first.get(pg.url) if pg.record == "revisit" else None
    if old is not None:
        req_headers.append(("If-Modified-Since", format_datetime(old.fetch_time, usegmt=True)))
    req = w.create_warc_record(
        pg.url,
        "request",
        http_headers=StatusAndHeaders(f"GET /{path} HTTP/1.1", req_headers, protocol="HTTP/1.1", is_http_request=True),
        warc_headers_dict={
            "WARC-Record-ID": record_id(seed, pg.snapshot, "request", pg.url),
            "WARC-Date": warc_date(pg.fetch_time),
            "WARC-IP-Address": pg.ip,
        },
    )
    headers = [
        ("Date", format_datetime(pg.fetch_time, usegmt=True)),
        ("Server", _server(pg.ip)),
        ("Content-Type", pg.content_type),
        ("Content-Length", str(len(pg.body))),
    ]
    if pg.status == 304:
        headers = headers[:2]
    http = StatusAndHeaders(
        f"{pg.status} {REASONS[pg.status]}", headers + [("Connection", "close")], protocol="HTTP/1.1"
    )
    wh = {
        "WARC-Record-ID": record_id(seed, pg.snapshot, pg.record, pg.url),
        "WARC-Date": warc_date(pg.fetch_time),
        "WARC-IP-Address": pg.ip,
    }
    if pg.record == "revisit":
        assert old is not None, pg.url
        wh["WARC-Refers-To"] = record_id(seed, old.snapshot, "response", pg.url)
        resp = w.create_revisit_record(
            pg.url, sha1_digest(old.body), pg.url, warc_date(old.fetch_time), http_headers=http, warc_headers_dict=wh
        )
        profile = "server-not-modified" if pg.status == 304 else "identical-payload-digest"
        resp.rec_headers.replace_header("WARC-Profile", PROFILES[profile])
    else:
        resp = w.create_warc_record(
            pg.url, "response", payload=BytesIO(pg.body), length=len(pg.body), http_headers=http, warc_headers_dict=wh
        )
    w.write_request_response_pair(req, resp)


def _warcinfo(w: WARCWriter, seed: int, snapshot: str, name: str, when: datetime) -> None:
    fields = (
        f"software: spamflow-demo\r\nformat: WARC File Format 1.1\r\n"
        f"description: spamflow synthetic demo web, snapshot {snapshot}, seed {seed}\r\n"
        f"robots: obey\r\nisPartOf: spamflow-demo-{snapshot}\r\n"
    ).encode()
    rec = w.create_warc_record(
        "",
        "warcinfo",
        payload=BytesIO(fields),
        length=len(fields),
        warc_content_type="application/warc-fields",
        warc_headers_dict={
            "WARC-Record-ID": record_id(seed, snapshot, "warcinfo", name),
            "WARC-Date": warc_date(when),
            "WARC-Filename": name,
        },
    )
    w.write_record(rec)


def write_warcs(web: SyntheticWeb, outdir: Path, seed: int) -> list[Path]:
    """Two files per snapshot; hosts alternate between them, each host's records stay together."""
    written = []
    first: dict[str, DemoPage] = {p.url: p for p in web.snapshots[SNAPSHOTS[0]] if p.record == "response"}
    for snap in SNAPSHOTS:
        pages = web.snapshots[snap]
        hosts = list(dict.fromkeys(p.host for p in pages))
        groups = [set(hosts[i::FILES_PER_SNAPSHOT]) for i in range(FILES_PER_SNAPSHOT)]
        d = outdir / "warc" / snap
        d.mkdir(parents=True, exist_ok=True)
        for n, group in enumerate(groups, 1):
            name = f"demo-{snap}-{n:05d}.warc.gz"
            part = [p for p in pages if p.host in group]
            with open(d / name, "wb") as f:
                w = WARCWriter(f, gzip=True, warc_version="1.1")
                _warcinfo(w, seed, snap, name, part[0].fetch_time)
                for pg in part:
                    _write_page(w, seed, pg, first)
            written.append(d / name)
    return written


def write_labels(web: SyntheticWeb, outdir: Path) -> list[Path]:
    d = outdir / "labels"
    d.mkdir(parents=True, exist_ok=True)
    rows = ["snapshot\turl\tlabel\tkind"]
    for snap in SNAPSHOTS:
        rows += [
            f"{snap}\t{p.url}\t{p.label}\t{p.kind}"
            for p in web.snapshots[snap]
            if is_html(p.content_type)  # revisits too: parse makes them pages of their snapshot
        ]
    (d / "pages.tsv").write_text("\n".join(rows) + "\n", "utf-8")
    hrows = ["host\tip\tlabel\tkind"] + [f"{h.host}\t{h.ip}\t{h.label}\t{h.kind}" for h in web.hosts]
    (d / "hosts.tsv").write_text("\n".join(hrows) + "\n", "utf-8")
    return [d / "pages.tsv", d / "hosts.tsv"]


def write_demo(outdir: Path, seed: int = 0) -> dict:
    """Build the demo web and write WARCs, labels and truth; return a summary."""
    outdir = Path(outdir)
    web = build_web(seed)
    files = write_warcs(web, outdir, seed) + write_labels(web, outdir)
    (outdir / "truth.json").write_text(json.dumps(web.truth, indent=1, sort_keys=True) + "\n", "utf-8")
    files.append(outdir / "truth.json")
    html = {s: [p for p in ps if p.record == "response" and is_html(p.content_type)] for s, ps in web.snapshots.items()}
    return {
        "seed": seed,
        "files": [str(f) for f in files],
        "warc_bytes": sum(f.stat().st_size for f in files if f.name.endswith(".warc.gz")),
        "html_responses": {s: len(ps) for s, ps in html.items()},
        "pages": {s: sum(is_html(p.content_type) for p in ps) for s, ps in web.snapshots.items()},
        "records": {s: dict(Counter(p.record for p in ps)) for s, ps in web.snapshots.items()},
        "html_by_kind": {s: dict(Counter(p.kind for p in ps)) for s, ps in html.items()},
        "hosts_by_kind": dict(Counter(h.kind for h in web.hosts)),
    }
