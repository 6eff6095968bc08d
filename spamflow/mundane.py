"""Mundane pages: error pages and boilerplate-only pages, which no detector should count as
spam evidence (issue 35, item 4).  Core, so that every plugin can use the one definition
(plugins do not import each other): spin keeps them out of its campaigns (DSpin's pairs stay
as the paper defines them; these rules apply when the pairs are turned into campaigns,
``spamflow_spin.detector.describe_campaigns``), HSS keeps error pages out of its clusters
(a web server's default 404 page is one template on many domains).  The rules:

* **HTTP error page**: the page table's ``status`` is 400 or more (4xx, 5xx).
* **Soft 404**: an error page served with another status (200, a redirect, or none recorded):
  at most ``soft_404_max_words`` article words, and its title or its article words contain one
  of ``soft_404_phrases`` as a word sequence (the page table's word splitting: lower case,
  punctuation breaks words), e.g. "Page not found", "Error 404 (Not Found)!!1".
* **Boilerplate only**: fewer than ``min_article_words`` article words (the page's words
  without its link anchors, what DSpin compares): a login form, a contact form, a menu page.

The first rule that applies is the page's reason.  (Spin: then a cluster of the remaining
pairs is a campaign only if its pages span at least ``min_domains`` registered domains; the
others are dropped and counted.)  ``article``: the page's words without its link anchors
(:func:`spamflow.article.article_words`).

>>> rules = Rules.of(min_article_words=30)
>>> rules.reason(404, "Page not found", ["page", "not", "found"])
'http_error'
>>> rules.reason(200, "Oops", ["sorry", "the", "page", "was", "not", "found"])
'soft_404'
>>> rules.reason(200, "Error 404 (Not Found)!!1", ["that", "s", "all"])
'soft_404'
>>> rules.reason(200, "Terrors of the deep", ["word"] * 30) is None  # 'error' is a whole word only
True
>>> rules.reason(None, "Contact", ["your", "name", "your", "e", "mail"])
'boilerplate'
>>> rules.reason(200, "Not found: a novel", ["word"] * 101) is None  # not tiny: an article
True
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pydantic import Field

from spamflow.article import article_words, find_phrase
from spamflow.detector import DetectorParams
from spamflow.words import words as split_words

HTTP_ERROR = "http_error"
SOFT_404 = "soft_404"
BOILERPLATE = "boilerplate"
REASONS = (HTTP_ERROR, SOFT_404, BOILERPLATE)


def _contains(text: Sequence[str], phrase: Sequence[str]) -> bool:
    return find_phrase(text, phrase, 0) >= 0


@dataclass(frozen=True)
class Rules:
    exclude_error_pages: bool = True
    soft_404_max_words: int = 100
    soft_404_phrases: tuple[tuple[str, ...], ...] = ()
    min_article_words: int = 0

    @classmethod
    def of(cls, exclude_error_pages: bool = True, soft_404_max_words: int = 100,
           soft_404_phrases: Sequence[str] = ("not found", "404", "error", "not be found", "does not exist"),
           min_article_words: int = 0) -> Rules:
        phrases = tuple(p for p in (tuple(split_words(x)) for x in soft_404_phrases) if p)
        return cls(exclude_error_pages, soft_404_max_words, phrases, min_article_words)

    @classmethod
    def from_params(cls, params: object) -> Rules:
        return cls.of(params.exclude_error_pages, params.soft_404_max_words,  # type: ignore[attr-defined]
                      params.soft_404_phrases, params.min_article_words)  # type: ignore[attr-defined]

    def reason(self, status: int | None, title: str | None, article: Sequence[str]) -> str | None:
        """Why a page (HTTP status, title, article words) is kept out of campaigns, or None."""
        if self.exclude_error_pages:
            if status is not None and status >= 400:
                return HTTP_ERROR
            if len(article) <= self.soft_404_max_words:
                title_words = split_words(title or "")
                if any(_contains(title_words, p) or _contains(article, p) for p in self.soft_404_phrases):
                    return SOFT_404
        if len(article) < self.min_article_words:
            return BOILERPLATE
        return None


def page_reason(rules: Rules, status: int | None, title: str | None, words: Sequence[str],
                anchors: Iterable[str]) -> str | None:
    """:meth:`Rules.reason` from a page table row's parts: its words and its links' anchors
    (the article words are computed only when the status does not decide).

    >>> page_reason(Rules.of(), 200, "Home", ["page", "not", "found", "home"], ["Home"])
    'soft_404'
    """
    if rules.exclude_error_pages and status is not None and status >= 400:
        return HTTP_ERROR
    return rules.reason(status, title, article_words(words, anchors)[0])


class ErrorPageParams(DetectorParams):
    """The parameters of the error-page rule, for a detector whose groups (clusters,
    campaigns) error pages must not form or join: spin's and HSS's params derive from it."""

    exclude_error_pages: bool = Field(True, description=(
        "not in the papers: pages with an HTTP status of 400 or more, and soft 404s (see soft_404_max_words), "
        "never form or join a group (a campaign, a template cluster: a web server's default error page is one "
        "template on many domains); they are counted. false: the paper's behaviour (spamflow/mundane.py)"))
    soft_404_max_words: int = Field(100, ge=0, description=(
        "a page with at most this many article words (its words without link anchors) whose title or article "
        "text contains one of soft_404_phrases (as whole words) is a soft 404 (an error page served with a "
        "2xx/3xx status)"))
    soft_404_phrases: list[str] = Field(["not found", "404", "error", "not be found", "does not exist"],
                                        description=(
        "phrases that make a tiny page a soft 404, matched as word sequences after the page table's word "
        "splitting (lower case, punctuation breaks words): 'not found' matches 'Page Not Found!' but "
        "'error' does not match 'errors' or 'terror'"))
