"""Exceptions that carry what a user needs to fix the problem: the file, the key or record."""


class SpamflowError(Exception):
    """Base class: the CLI prints these as one clear message, without a traceback."""


class ConfigError(SpamflowError):
    """The YAML config is wrong; the message names the file, the key and what is allowed."""


class PluginError(SpamflowError):
    """A plugin could not be loaded or two plugins claim one name."""


class BadInputError(SpamflowError):
    """A record could not be read (raised only in --strict mode; otherwise it is counted)."""
