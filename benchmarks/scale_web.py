"""A synthetic web of any size for the scale benchmark: WARC files of two snapshots, host
labels and a config that runs every detector on them.

Why not the demo generator: it plants a few hundred hand-shaped pages; the scale benchmark
needs 10^5-10^6 pages whose cost behaves like a crawl's, generated in minutes, with no file
outside the repository (the demo's bundled prose is the only source).

What a page is made of:

* **Text**: a word-bigram chain over the demo's real prose (``spamflow/demo/texts``), so word
  frequencies are real and most 5-grams are new, as on the web; 300-500 words per page.  Three
  words in ten come from the site's own vocabulary (made-up words, 2,000 a host: its people,
  products and places) and one in 12 from a Pareto law over made-up names.  Why: the prose has
  12,500 words, so without a vocabulary that grows with the web, as real vocabularies do, a
  page's rarest words would be on a fixed share of all pages and every detector that indexes
  rare words (spin's prefix filter) would cost the square of the corpus.  At 0.2 the spin
  filter's pair counts still grew 4.6x per 4x pages; at 0.3, 4.0x (linear).
* **Spin dictionary** (``spin-dictionary.txt``, written beside the WARCs): every word of the
  prose but its 200 most frequent is a head with two made-up synonyms, so immutables are
  function words and names, as with a real spinner's dictionary.
* **Hosts**: ``pages_per_host`` pages each, two hosts per registered domain
  (``www.`` and ``blog.site<d>.com``), one of 20 page templates per host (navigation and
  footer, so HSS sees template clusters).
* **Links**: 8 per page, most to the same host, a third to other hosts chosen by a power law
  (a few hosts get most in-links).
* **Copies**: a third of the honest pages carry the text of a syndicated article; there are
  ``pages / 15`` of them, so a syndicated text is on ~5 pages (1-10 for most).
* **Spam**: one host in 20. Half of its pages are quilts (passages of honest pages, the
  passages' sources recomputed from their seeds), half repeat popular terms; every spam page
  links to 12 other spam hosts (a link farm) and to the farm's promoted host.
* **Snapshots**: ``2026-01`` and ``2026-02``; one page in ten has new text in the second, and
  one spam host in four is new.

Everything is a function of ``(seed, host, page)``, so files are written in parallel and the
same arguments give the same bytes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from io import BytesIO
from pathlib import Path

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

SNAPSHOTS = ("2026-01", "2026-02")
SPAM_EVERY = 20
LINKS_PER_PAGE = 8
TEMPLATES = 20


def _rng(*parts: object) -> random.Random:
    digest = hashlib.blake2b("|".join(map(str, parts)).encode(), digest_size=8).digest()
    return random.Random(int.from_bytes(digest, "big"))


@lru_cache(maxsize=1)
def _chain() -> tuple[list[str], list[list[int]]]:
    """Words of the demo's prose (by falling frequency, ties by word) and, per word, the
    indices of the words that follow it."""
    from spamflow.demo.texts import collections
    from spamflow.words import words

    tokens: list[str] = []
    for pages in collections().values():
        for page in pages:
            for section in page.sections:
                for paragraph in section.paragraphs:
                    tokens.extend(words(paragraph))
    frequency = Counter(tokens)
    vocab = sorted(frequency, key=lambda w: (-frequency[w], w))
    index = {w: i for i, w in enumerate(vocab)}
    follow: list[list[int]] = [[] for _ in vocab]
    for a, b in zip(tokens, tokens[1:]):
        follow[index[a]].append(index[b])
    for i, nxt in enumerate(follow):
        if not nxt:
            nxt.append(i)
    return vocab, follow


SYLLABLES = ("ka", "ro", "mi", "tel", "san", "vo", "lu", "dra", "pen", "zi", "mor", "ga", "ni", "bex", "tu", "ha")
RARE_SHARE = 0.08


def rare_word(k: int) -> str:
    """The k-th made-up word (names, places, products: the web's unbounded vocabulary)."""
    out = []
    while True:
        k, digit = divmod(k, len(SYLLABLES))
        out.append(SYLLABLES[digit])
        if k == 0:
            return "".join(out)


HOST_SHARE = 0.3
HOST_WORDS = 2000
FUNCTION_WORDS = 200


def own_word(owner: int, j: int) -> str:
    """The j-th word of a host's own vocabulary (its people, products, places): made-up words
    numbered apart from :func:`rare_word`'s, so no two owners share one."""
    return rare_word(10**7 + owner * HOST_WORDS + j)


def chain_text(r: random.Random, count: int, owner: int) -> list[str]:
    """Bigram-chain prose with one word in 12 a made-up word drawn from a Pareto law (most
    are rare, as names are), and three in 10 a word of ``owner``'s own vocabulary of
    ``HOST_WORDS``: without them a 12,500-word vocabulary makes every text share its rarest words
    with thousands of others, which no real crawl does; with them, as on the web, a page's
    rarest words are its site's."""
    vocab, follow = _chain()
    w = r.randrange(len(vocab))
    out = []
    rnd = r.random
    for _ in range(count):
        roll = rnd()
        if roll < RARE_SHARE:
            out.append(rare_word(int(100 * r.paretovariate(0.8))))
            continue
        if roll < RARE_SHARE + HOST_SHARE:
            out.append(own_word(owner, int(HOST_WORDS * rnd())))
            continue
        out.append(vocab[w])
        nxt = follow[w]
        w = nxt[int(rnd() * len(nxt))]
    return out


@dataclass(frozen=True)
class Web:
    pages: int
    seed: int = 0
    pages_per_host: int = 50

    @property
    def hosts(self) -> int:
        return max(2, self.pages // self.pages_per_host)

    def host(self, i: int) -> str:
        return f"{'www' if i % 2 == 0 else 'blog'}.site{i // 2}.com"

    def is_spam(self, i: int, snapshot: str) -> bool:
        """Every 20th host (spread evenly, so that a small web has spam too); a quarter of them
        only in the second snapshot."""
        if i % SPAM_EVERY != SPAM_EVERY // 2:
            return False
        return snapshot == SNAPSHOTS[1] or (i // SPAM_EVERY) % 4 != 3

    def trust_seeds(self, count: int = 20) -> list[str]:
        """The most linked honest hosts: TrustRank's seed set, as an editor would pick it."""
        return [self.host(i) for i in range(self.hosts) if not self.is_spam(i, SNAPSHOTS[0])][:count]

    def popular_host(self, r: random.Random) -> int:
        """A host drawn from a power law over host indices (host 0 the most linked)."""
        return min(self.hosts - 1, int(self.hosts * r.random() ** 3))

    def honest_words(self, host: int, page: int, snapshot: str) -> list[str]:
        r0 = _rng(self.seed, "copy", host, page)
        if r0.random() < 1 / 3:  # a syndicated article
            article = r0.randrange(max(1, self.pages // 15))
            return chain_text(_rng(self.seed, "article", article), 300 + article % 200, self.hosts + article)
        changed = snapshot == SNAPSHOTS[1] and _rng(self.seed, "change", host, page).random() < 0.1
        r = _rng(self.seed, "text", host, page, snapshot if changed else "")
        return chain_text(r, r.randrange(300, 500), host)

    def spam_words(self, host: int, page: int, snapshot: str) -> list[str]:
        r = _rng(self.seed, "spamtext", host, page)
        if page % 2 == 0:  # a quilt of passages of honest pages
            out: list[str] = []
            while len(out) < 350:
                src = r.randrange(self.hosts)
                if self.is_spam(src, snapshot):
                    continue
                text = self.honest_words(src, r.randrange(self.pages_per_host), snapshot)
                start = r.randrange(max(1, len(text) - 40))
                out.extend(text[start:start + 40])
            return out
        vocab, _ = _chain()
        terms = [vocab[r.randrange(len(vocab))] if k % 2 else own_word(host, r.randrange(HOST_WORDS))
                 for k in range(30)]
        return [terms[int(len(terms) * r.random() ** 2)] for _ in range(r.randrange(200, 400))]

    def html(self, host: int, page: int, snapshot: str) -> bytes:
        spam = self.is_spam(host, snapshot)
        text = self.spam_words(host, page, snapshot) if spam else self.honest_words(host, page, snapshot)
        r = _rng(self.seed, "links", host, page, snapshot if spam else "")
        links = []
        for _ in range(LINKS_PER_PAGE):
            if spam:
                target = r.randrange(self.hosts)
                while not self.is_spam(target, snapshot) and r.random() < 0.95:
                    target = r.randrange(self.hosts)
            elif r.random() < 1 / 3:
                target = self.popular_host(r)
            else:
                target = host
            links.append(f"https://{self.host(target)}/p{r.randrange(self.pages_per_host)}.html")
        if spam:
            links.append(f"https://{self.host(host // 40 * 40)}/")  # the farm's promoted host
        template = _rng(self.seed, "template", host).randrange(TEMPLATES)
        nav = "".join(f'<li><a href="/s{template}-{k}.html">section {k}</a></li>' for k in range(template % 7 + 5))
        paras = "".join(f"<p>{' '.join(text[k:k + 60])}</p>" for k in range(0, len(text), 60))
        anchors = "".join(f'<a href="{u}">{" ".join(text[i:i + 3])}</a> ' for i, u in enumerate(links))
        title = " ".join(text[:6])
        return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{title}</title></head>"
                f"<body class='t{template}'><header><ul class='nav{template}'>{nav}</ul></header>"
                f"<main><h1>{title}</h1>{paras}<div class='related'>{anchors}</div></main>"
                f"<footer>site{host // 2} template {template} &copy; 2026</footer></body></html>").encode()


def _records(web: Web, hosts: range, snapshot: str) -> Iterator[tuple[str, bytes]]:
    for host in hosts:
        for page in range(web.pages_per_host):
            yield f"https://{web.host(host)}/p{page}.html", web.html(host, page, snapshot)


def write_file(args: tuple[Web, int, int, str, str]) -> int:
    web, first, last, snapshot, path = args
    day = 1 + first % 27
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        count = 0
        for url, body in _records(web, range(first, last), snapshot):
            headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8"),
                                                  ("Content-Length", str(len(body)))], protocol="HTTP/1.1")
            record = writer.create_warc_record(url, "response", payload=BytesIO(body), http_headers=headers,
                                               warc_headers_dict={"WARC-Date": f"{snapshot}-{day:02d}T12:00:00Z"})
            writer.write_record(record)
            count += 1
    return count


def write_dictionary(path: Path) -> int:
    """A spinner dictionary in which every word of the prose but its ``FUNCTION_WORDS`` most
    frequent is a head with two made-up synonyms: like a real spinner's (The Best Spinner's
    covers most content words), it leaves function words and names as immutables.  The demo's
    102-head dictionary would make nearly every word immutable."""
    vocab, _ = _chain()
    with open(path, "w", encoding="utf-8") as fh:
        for i, head in enumerate(vocab[FUNCTION_WORDS:]):
            fh.write(f"{head}|{rare_word(2 * 10**7 + 2 * i)}|{rare_word(2 * 10**7 + 2 * i + 1)}\n")
    return len(vocab) - FUNCTION_WORDS


def generate(out: Path, pages: int, *, seed: int = 0, hosts_per_file: int = 200, workers: int = 2) -> dict:
    """Write ``out/<snapshot>/part-NNNNN.warc.gz`` (``pages`` per snapshot) and ``out/labels.csv``."""
    web = Web(pages, seed)
    jobs = []
    for snapshot in SNAPSHOTS:
        (out / snapshot).mkdir(parents=True, exist_ok=True)
        for n, first in enumerate(range(0, web.hosts, hosts_per_file)):
            last = min(web.hosts, first + hosts_per_file)
            jobs.append((web, first, last, snapshot, str(out / snapshot / f"part-{n:05d}.warc.gz")))
    with ProcessPoolExecutor(max_workers=workers) as pool:
        written = sum(pool.map(write_file, jobs))
    write_dictionary(out / "spin-dictionary.txt")
    with open(out / "labels.csv", "w", encoding="utf-8") as fh:
        fh.write("host,label\n")
        for host in range(web.hosts):  # half the hosts labelled, as a judged sample would be
            if _rng(seed, "label", host).random() < 0.5:
                fh.write(f"{web.host(host)},{'spam' if web.is_spam(host, SNAPSHOTS[0]) else 'nonspam'}\n")
    return {"pages": written, "hosts": web.hosts, "files": len(jobs)}


def config_text(web: Web, out: Path, workdir: Path, runner: str = "local", runner_args: tuple[str, ...] = ()) -> str:
    return json.dumps({
        "workdir": str(workdir),
        "input": {"warc": {s: [str(out / s / "*.warc.gz")] for s in SNAPSHOTS}},
        "mapreduce": {"runner": runner, "args": list(runner_args)},
        "workers": 2,
        "detectors": {
            "obvious": {}, "quilt": {}, "hss": {}, "links": {"trust_seeds": web.trust_seeds()}, "content": {},
            "spin": {"dictionary": [str(out / "spin-dictionary.txt")]},
            "classify": {"labels": str(out / "labels.csv"), "library": "fast"},
        },
    }, indent=1)  # JSON is YAML


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, help="folder for the WARC files, labels.csv and scale.yaml")
    ap.add_argument("--pages", type=int, default=100_000, help="pages per snapshot")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args(argv)
    info = generate(args.out, args.pages, seed=args.seed, workers=args.workers)
    (args.out / "scale.yaml").write_text(config_text(Web(args.pages, args.seed), args.out, args.out / "run"))
    print(json.dumps(info))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
