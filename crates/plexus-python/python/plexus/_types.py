"""Value types with no exact equivalent in the standard library."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Optional

__all__ = ["Duration", "Point"]


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
        """ISO 8601, exact to the nanosecond, as Cypher's ``duration()`` reads it back."""
        total = self.seconds * 1_000_000_000 + self.nanoseconds
        whole, nanos = divmod(abs(total), 1_000_000_000)
        fraction = f".{nanos:09d}".rstrip("0") if nanos else ""
        sign = "-" if total < 0 else ""
        return f"P{self.months}M{self.days}DT{sign}{whole}{fraction}S"


_CRS_NAMES = {4326: "wgs-84", 4979: "wgs-84-3d", 7203: "cartesian", 9157: "cartesian-3d"}


@dataclass(frozen=True)
class Point:
    """A spatial point: a coordinate reference system (by SRID) and two or three coordinates.

    The systems are Neo4j's: 7203 (``cartesian``: x, y), 9157 (``cartesian-3d``: x, y, z), 4326 (``wgs-84``:
    longitude, latitude in degrees) and 4979 (``wgs-84-3d``: longitude, latitude, height in metres). Query
    results give ``Point``; parameters accept ``Point`` and the ``neo4j`` driver's spatial points alike.
    """

    srid: int
    x: float
    y: float
    z: Optional[float] = None

    @classmethod
    def cartesian(cls, x: float, y: float, z: Optional[float] = None) -> "Point":
        return cls(7203 if z is None else 9157, float(x), float(y), None if z is None else float(z))

    @classmethod
    def wgs84(cls, longitude: float, latitude: float, height: Optional[float] = None) -> "Point":
        return cls(4326 if height is None else 4979, float(longitude), float(latitude),
                   None if height is None else float(height))

    @property
    def crs(self) -> str:
        """The system's name, as Cypher's ``p.crs`` gives it."""
        return _CRS_NAMES.get(self.srid, str(self.srid))

    @property
    def longitude(self) -> float:
        return self.x

    @property
    def latitude(self) -> float:
        return self.y

    @property
    def height(self) -> Optional[float]:
        return self.z

    @property
    def coordinates(self) -> tuple:
        return (self.x, self.y) if self.z is None else (self.x, self.y, self.z)

    def __str__(self) -> str:
        names = ("x", "y", "z")
        parts = ", ".join(f"{n}: {c!r}" for n, c in zip(names, self.coordinates))
        return f"point({{{parts}, crs: '{self.crs}'}})"
