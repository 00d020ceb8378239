"""Value types with no exact equivalent in the standard library."""

from __future__ import annotations

import datetime
from dataclasses import dataclass

__all__ = ["Duration"]


@dataclass(frozen=True)
class Duration:
    """An openCypher duration whose parts a :class:`datetime.timedelta` cannot hold exactly.

    Cypher keeps months, days and seconds apart (a month is not a fixed number of days, nor a day a fixed
    number of seconds across a daylight-saving change). Query results give a ``datetime.timedelta`` when that
    is exact (no months, whole microseconds, and days/seconds in timedelta's normal form with
    ``0 <= seconds < 86400``), and a ``Duration`` otherwise. Both are accepted as parameters.
    """

    months: int = 0
    days: int = 0
    seconds: int = 0
    nanoseconds: int = 0

    def to_timedelta(self) -> datetime.timedelta:
        """The same length of time as a ``timedelta``; refused when there are months (they have no fixed length).
        Nanoseconds are rounded down to microseconds."""
        if self.months:
            raise ValueError(f"{self} has months, which have no fixed length as a timedelta")
        return datetime.timedelta(days=self.days, seconds=self.seconds, microseconds=self.nanoseconds // 1000)

    def __str__(self) -> str:
        secs = self.seconds + self.nanoseconds / 1e9
        return f"P{self.months}M{self.days}DT{secs:g}S"
