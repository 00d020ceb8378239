"""The exceptions Plexus raises. Every one is a subclass of :class:`plexus.Error`."""

from __future__ import annotations

from typing import Optional

__all__ = [
    "Error",
    "QueryError",
    "ConflictError",
    "StorageError",
    "InputError",
    "ArgumentError",
    "ConversionError",
    "ClosedError",
]


class Error(Exception):
    """Base class of every Plexus error."""


class QueryError(Error):
    """A query failed to parse, plan or run.

    Attributes:
        code: the openCypher error type, e.g. ``"SyntaxError"``, ``"TypeError"``, ``"ArgumentError"``.
        detail: the openCypher detail code, e.g. ``"UndefinedVariable"`` (may be empty).
        phase: ``"compile time"`` or ``"runtime"``.
        line, column: where in the query text (from 1), or ``None`` when the error has no place.
        offset: the byte offset in the query text, or ``None``.
        query: the query text.
    """

    code: str = ""
    detail: str = ""
    phase: str = ""
    line: Optional[int] = None
    column: Optional[int] = None
    offset: Optional[int] = None
    query: Optional[str] = None


class ConflictError(Error):
    """A write-write conflict with a concurrent transaction. Retry the whole transaction."""

    retryable = True


class StorageError(Error):
    """The storage engine failed: I/O, a corrupt or locked database directory, a refused write."""


class InputError(Error):
    """Import input could not be read or parsed.

    Attributes:
        path: the file, when one is to blame.
        line, column: where in it (from 1), when known.
    """

    path: Optional[str] = None
    line: Optional[int] = None
    column: Optional[int] = None


class ArgumentError(Error, ValueError):
    """An argument has the wrong type, dtype, shape or value."""


class ConversionError(Error, ValueError):
    """A database value has no Python equivalent (for example a date outside years 1 to 9999)."""


class ClosedError(Error):
    """The database (or transaction) has been closed."""
