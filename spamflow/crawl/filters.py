"""Composable URL filters, written as BUbiNG's boolean expressions.

A filter is a predicate on a normalised URL.  Expressions combine filters with ``and``,
``or``, ``not`` and parentheses (short-circuit, ``not`` binds tightest, then ``and``),
exactly as in the paper's example::

    (HostEndsWith(foo.bar) and not ForbiddenHost(hosts.txt)) or NoMoreSlashesThan(10)

An argument is the raw text between the parentheses (quotes around it are optional).

>>> f = parse_filter("HostEndsWith(.example) and not PathEndsWithOneOf(.jpg,.png)")
>>> f("http://a.example/x.html"), f("http://a.example/x.png"), f("http://a.other/")
(True, False, False)
>>> max_tandem_repeats(["foo", "bar", "foo", "bar", "foo", "bar", "x"])
3
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import xxhash

from spamflow.errors import ConfigError

UrlFilter = Callable[[str], bool]


def max_tandem_repeats(segments: list[str]) -> int:
    """The largest r such that some block of consecutive segments occurs r times in a row.

    For each period k, a run of L consecutive positions with ``s[j] == s[j+k]`` holds a block
    of length k repeated ``L // k + 1`` times; O(n^2) in the number of segments (URL paths
    have few), where the paper uses suffix arrays to reach linear time.
    """
    n = len(segments)
    best = 1 if n else 0
    for k in range(1, n // 2 + 1):
        run = 0
        for j in range(n - k):
            if segments[j] == segments[j + k]:
                run += 1
                best = max(best, run // k + 1)
            else:
                run = 0
    return best


def _segments(url: str) -> list[str]:
    return [s for s in urlsplit(url).path.split("/") if s]


def _host(url: str) -> str:
    return urlsplit(url).hostname or ""


def _int_arg(name: str, arg: str) -> int:
    try:
        return int(arg)
    except ValueError:
        raise ValueError(f"{name} takes an integer (got {arg!r})") from None


def _read_hosts(path: str, base_dir: Path) -> frozenset[str]:
    file = base_dir / path
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ValueError(f"ForbiddenHost: cannot read host list {file}: {exc.strerror or exc}") from None
    return frozenset(h.strip().lower().rstrip(".") for h in lines if h.strip() and not h.startswith("#"))


def _forbidden_host(arg: str, base_dir: Path, files: list[Path]) -> UrlFilter:
    hosts = _read_hosts(arg, base_dir)
    files.append(base_dir / arg)

    def forbidden(url: str) -> bool:
        host = _host(url)
        while host:  # the host or any domain above it is listed
            if host in hosts:
                return True
            host = host.partition(".")[2]
        return False

    return forbidden


def _factories(base_dir: Path, files: list[Path]) -> dict[str, Callable[[str], UrlFilter]]:
    """The filters by name; those reading a file (ForbiddenHost) add it to ``files``."""

    def path_ends(arg: str) -> UrlFilter:
        suffixes = tuple(s.strip().lower() for s in arg.split(",") if s.strip())
        return lambda url: urlsplit(url).path.lower().endswith(suffixes)

    def regex(arg: str) -> UrlFilter:
        try:
            rx = re.compile(arg)
        except re.error as exc:
            raise ValueError(f"URLMatchesRegex: bad regular expression {arg!r}: {exc}") from None
        return lambda url: rx.search(url) is not None

    def slashes(arg: str) -> UrlFilter:
        n = _int_arg("NoMoreSlashesThan", arg)
        return lambda url: urlsplit(url).path.count("/") <= n

    def dup_segments(arg: str) -> UrlFilter:
        n = _int_arg("DuplicateSegmentsLessThan", arg)
        return lambda url: max_tandem_repeats(_segments(url)) < n

    def host_share(arg: str) -> UrlFilter:
        k, _, n = arg.partition("/")
        share, agents = _int_arg("HostHashIs", k), _int_arg("HostHashIs", n or "x")
        if not 0 <= share < agents:
            raise ValueError(f"HostHashIs takes k/n with 0 <= k < n (got {arg!r})")
        return lambda url: xxhash.xxh3_64_intdigest(_host(url).encode()) % agents == share

    return {
        "HostHashIs": host_share,
        "HostEndsWith": lambda arg: (lambda url: _host(url).endswith(arg.lower())),
        "HostEquals": lambda arg: (lambda url: _host(url) == arg.lower()),
        "PathEndsWithOneOf": path_ends,
        "URLMatchesRegex": regex,
        "ForbiddenHost": lambda arg: _forbidden_host(arg, base_dir, files),
        "NoMoreSlashesThan": slashes,
        "DuplicateSegmentsLessThan": dup_segments,
        "SchemeEquals": lambda arg: (lambda url: url.startswith(arg.lower() + "://")),
        "True": lambda arg: (lambda url: True),
        "False": lambda arg: (lambda url: False),
    }


FILTER_NAMES = tuple(_factories(Path("."), []))
_TOKEN = re.compile(r"\s*(?:(\()|(\))|(and|or|not)\b|([A-Za-z]\w*)\s*\()")


class _Parser:
    """Recursive descent over ``expr := term ('or' term)*; term := factor ('and' factor)*;
    factor := 'not' factor | '(' expr ')' | Name '(' argument ')'``."""

    def __init__(self, text: str, base_dir: Path) -> None:
        self.files: list[Path] = []
        self.text, self.pos, self.factories = text, 0, _factories(base_dir, self.files)

    def fail(self, what: str) -> ValueError:
        return ValueError(f"{what} at character {self.pos + 1} of {self.text!r}")

    def peek(self) -> re.Match[str] | None:
        return _TOKEN.match(self.text, self.pos)

    def expr(self) -> UrlFilter:
        parts = [self.term()]
        while (m := self.peek()) and m.group(3) == "or":
            self.pos = m.end()
            parts.append(self.term())
        return parts[0] if len(parts) == 1 else (lambda url: any(p(url) for p in parts))

    def term(self) -> UrlFilter:
        parts = [self.factor()]
        while (m := self.peek()) and m.group(3) == "and":
            self.pos = m.end()
            parts.append(self.factor())
        return parts[0] if len(parts) == 1 else (lambda url: all(p(url) for p in parts))

    def factor(self) -> UrlFilter:
        m = self.peek()
        if m is None:
            raise self.fail("expected a filter, '(' or 'not'")
        self.pos = m.end()
        if m.group(3) == "not":
            inner = self.factor()
            return lambda url: not inner(url)
        if m.group(1):
            inner = self.expr()
            close = self.peek()
            if close is None or not close.group(2):
                raise self.fail("expected ')'")
            self.pos = close.end()
            return inner
        if m.group(4):
            return self.call(m.group(4))
        raise self.fail("expected a filter, '(' or 'not'")

    def call(self, name: str) -> UrlFilter:
        if name not in self.factories:
            raise self.fail(f"unknown filter {name!r} (known: {', '.join(self.factories)})")
        depth, start = 1, self.pos
        while depth and self.pos < len(self.text):  # the argument may itself hold parentheses
            depth += {"(": 1, ")": -1}.get(self.text[self.pos], 0)
            self.pos += 1
        if depth:
            raise self.fail(f"{name}: missing ')'")
        arg = self.text[start:self.pos - 1].strip()
        if len(arg) >= 2 and arg[0] == arg[-1] and arg[0] in "'\"":
            arg = arg[1:-1]
        return self.factories[name](arg)


def parse_filter(text: str, base_dir: Path = Path("."), *, where: str = "filter") -> UrlFilter:
    """Compile a filter expression; a syntax error is a :class:`ConfigError` naming ``where``."""
    return _parse(text, base_dir, where)[0]


def filter_files(text: str, base_dir: Path = Path("."), *, where: str = "filter") -> list[Path]:
    """The files the expression reads (ForbiddenHost host lists), in order: the crawl stage's
    identity holds their content."""
    return _parse(text, base_dir, where)[1]


def _parse(text: str, base_dir: Path, where: str) -> tuple[UrlFilter, list[Path]]:
    parser = _Parser(text, base_dir)
    try:
        result = parser.expr()
        if parser.text[parser.pos:].strip():
            raise parser.fail("unexpected text")
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    return result, parser.files
