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
    escapes it (``\\x00``, ``\\n``, ``\\xe9``), and the rest cut with a count of the characters cut."""
    if text.isascii() and text.isprintable() and len(text) <= limit:
        return text
    shown: list[str] = []
    width = 0
    for c in text:  # escapes only what is shown: a 50 MB reason costs what 200 characters cost
        piece = c if " " <= c <= "~" else c.encode("unicode_escape").decode("ascii")
        if width + len(piece) > limit:
            return f"{''.join(shown)}... ({len(text) - len(shown)} more characters)"
        shown.append(piece)
        width += len(piece)
    return "".join(shown)
