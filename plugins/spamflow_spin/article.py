"""DSpin's article words (a page's words without its link anchors): defined in core
(spamflow/article.py), where the mundane-page rules use them; re-exported here."""

from spamflow.article import article_words

__all__ = ["article_words"]
