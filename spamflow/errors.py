"""Exceptions that carry what a user needs to fix the problem: the file, the key or record."""


class SpamflowError(Exception):
    """Base class: the CLI prints these as one clear message, without a traceback."""


class ConfigError(SpamflowError):
    """The YAML config is wrong; the message names the file, the key and what is allowed."""


class PluginError(SpamflowError):
    """A plugin could not be loaded or two plugins claim one name."""


class BadInputError(SpamflowError):
    """A record could not be read (raised only in --strict mode; otherwise it is counted)."""


MAX_REASON_CHARS = 200
"""Reasons (bad records, errors quoting input) are cut to about this many characters."""


def plain_reason(text: str, limit: int = MAX_REASON_CHARS) -> str:
    """``text`` as one line of printable ASCII, at most about ``limit`` characters: anything
    else (binary quoted from a file, control characters, line ends) escaped as Python
    escapes it (``\\x00``, ``\\n``, ``\\xe9``), and the rest cut with a count of what was cut."""
    if text.isascii() and text.isprintable() and len(text) <= limit:
        return text
    escaped = "".join(c if " " <= c <= "~" else c.encode("unicode_escape").decode("ascii") for c in text)
    if len(escaped) <= limit:
        return escaped
    return f"{escaped[:limit]}... ({len(escaped) - limit} more characters)"
