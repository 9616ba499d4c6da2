"""Errors a user can act on.

Every ``GraphflowError`` is printed by the CLI as one short message and exit code 1, with no
traceback unless ``--debug`` is given. Messages name the file, section or plugin at fault and,
where there is one, the fix.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class GraphflowError(Exception):
    """Base class of errors that the CLI reports as a one-line message (exit code 1)."""

    exit_code = 1


class ConfigError(GraphflowError):
    """A pipeline file or an override is malformed, misspelt or of the wrong type."""


class UnknownComponentError(ConfigError):
    """A ``type = "..."`` names no registered component of that kind."""


class DataError(GraphflowError):
    """Input data is missing, malformed or inconsistent (bad line, NaN feature, bad id...)."""


class NumericalError(GraphflowError):
    """Training produced a NaN or an infinity (a loss, the parameters, the outputs): the run
    fails before anything is exported; the message names the stage, the epoch and the fix."""


class DeviceError(GraphflowError):
    """A device was asked for that this machine or this tensor cannot provide."""


class PluginError(GraphflowError):
    """A plugin raised inside a hook or a stage; the message names the plugin and the stage."""

    def __init__(self, message: str, *, plugin: str | None = None, stage: str | None = None):
        super().__init__(message)
        self.plugin = plugin
        self.stage = stage


class EnvironmentProblem(GraphflowError):
    """A dependency is missing or broken; the message says what to install."""


def first_line(exc: BaseException, limit: int = 200) -> str:
    """``"TypeName: first line of the message"``, cut to ``limit`` characters: a foreign
    exception made fit for a one-line message."""
    text = next((line.strip() for line in str(exc).splitlines() if line.strip()), "")
    text = text if len(text) <= limit else text[:limit] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def one_line(exc: BaseException, limit: int = 300) -> str:
    """``"TypeName: line one; line two"``: every line of the message joined, cut to ``limit``
    characters. For messages whose point is past their first line (pluggy's validation errors
    name the offending argument on the third)."""
    text = "; ".join(line.strip() for line in str(exc).splitlines() if line.strip())
    text = text if len(text) <= limit else text[:limit] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def nearest(word: str, choices: Iterable[str]) -> str | None:
    """The closest of ``choices`` to ``word`` (difflib ratio >= 0.6), or None."""
    matches = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return matches[0] if matches else None


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """' (did you mean "x"?)' when a close match exists, else ''."""
    match = nearest(word, choices)
    return f' (did you mean "{match}"?)' if match else ""
