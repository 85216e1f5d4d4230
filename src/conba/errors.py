"""The base of every error conba expects: bad input, a broken model or index folder, a missing extra.

The CLI (``conba.cli.common.friendly_errors``) turns a :class:`ConbaError` into a one-line error
message (exit 1); any other exception is a bug and keeps its traceback. Each error's message is
one line naming the file (and line) or setting at fault and, where there is one, the fix.
"""

from __future__ import annotations


class ConbaError(Exception):
    """Base class of the errors conba raises on purpose (user input, files, settings, environment)."""


class ConfigError(ConbaError, ValueError):
    """A setting is invalid (a command-line option, a config file, a function argument)."""


class FormatError(ConbaError, ValueError):
    """A file conba reads is malformed or corrupt (invalid JSON, weights that do not match their config)."""


class UsageError(ConbaError, RuntimeError):
    """A request that cannot be carried out as asked (e.g. a folder in the way, mismatched settings)."""


class CodeIndexError(ConbaError, RuntimeError):
    """Base class of the code index's errors: something is wrong with the index or its input
    (:mod:`conba.index.errors` has the others)."""


class SourceError(CodeIndexError):
    """An input path cannot be indexed (missing, binary, not UTF-8, too large, unreadable...)."""
