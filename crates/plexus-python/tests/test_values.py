"""Every value type as a parameter and as a result."""

import datetime as dt
import math

import numpy as np
import pytest

import plexus


def roundtrip(db, value):
    return db.execute("RETURN $v AS v", {"v": value}).scalar()


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        False,
        0,
        -(2**63),
        2**63 - 1,
        1.5,
        -0.0,
        "",
        "héllo ✓",
        b"\x00\x01bytes",
        [1, 2, 3],
        ["a", None, 1.5, [True]],
        {"a": 1, "nested": {"b": [1, "x"]}},
        dt.date(2024, 2, 29),
        dt.date(1, 1, 1),
        dt.date(9999, 12, 31),
        dt.time(13, 45, 7, 123456),
        dt.time(23, 59, 59, tzinfo=dt.timezone(dt.timedelta(hours=-5))),
        dt.datetime(2021, 3, 4, 5, 6, 7, 891011),
        dt.datetime(1969, 12, 31, 23, 59, 59, 999999),
        dt.datetime(2021, 3, 4, 5, 6, 7, tzinfo=dt.timezone(dt.timedelta(hours=5, minutes=30))),
        dt.datetime(2021, 3, 4, 5, 6, 7, tzinfo=dt.timezone.utc),
        dt.timedelta(days=3, seconds=5, microseconds=7),
        dt.timedelta(days=-2, seconds=86399),
        dt.timedelta(0),
        plexus.Duration(months=14, days=3, seconds=4, nanoseconds=5),
        plexus.Duration(seconds=-1, nanoseconds=1),
        plexus.Point.cartesian(1.5, -2.0),
        plexus.Point.cartesian(1, 2, 3),
        plexus.Point.wgs84(12.5, 56.25),
        plexus.Point.wgs84(12.5, 56.25, 100.0),
    ],
)
def test_parameter_round_trip(db, value):
    got = roundtrip(db, value)
    if isinstance(value, float) and value == 0:
        assert got == 0 and math.copysign(1, got) == math.copysign(1, value)
    else:
        assert got == value and type(got) is type(value)


def test_negative_timedeltas_keep_their_sign_on_every_part(db):
    # Python holds timedelta(hours=-1) as -1 day + 23 hours; as a duration that would be P-1DT23H, which differs
    # from PT-1H across a daylight-saving change.
    row = db.execute(
        "RETURN $d AS d, $d.hours AS hours, $d.days AS days, "
        "toString(datetime('2024-03-31T12:00[Europe/Berlin]') + $d) AS across, toString($d) AS text",
        {"d": dt.timedelta(hours=-1)},
    )[0]
    assert row["d"] == dt.timedelta(hours=-1) and type(row["d"]) is dt.timedelta
    assert (row["hours"], row["days"], row["text"]) == (-1, 0, "PT-1H")
    assert row["across"] == "2024-03-31T11:00:00+02:00[Europe/Berlin]"
    assert db.execute("RETURN toString($d) AS s", {"d": dt.timedelta(microseconds=-1)}).scalar() == "PT-0.000001S"
    assert db.execute("RETURN toString($d) AS s", {"d": dt.timedelta(days=-1)}).scalar() == "P-1D"
    # A duration whose parts differ in sign has no timedelta that comes back as itself.
    assert db.execute("RETURN duration('P-1DT23H') AS d").scalar() == plexus.Duration(days=-1, seconds=23 * 3600)
    assert db.execute("RETURN duration('PT-90M') AS d").scalar() == dt.timedelta(minutes=-90)


def test_zoned_datetimes_at_the_edges_of_python_s_years(db):
    # The wall time fits Python's years though the UTC instant does not.
    early = db.execute("RETURN datetime('0001-01-01T00:30+01:00') AS d").scalar()
    assert early == dt.datetime(1, 1, 1, 0, 30, tzinfo=dt.timezone(dt.timedelta(hours=1)))
    late = db.execute("RETURN datetime('9999-12-31T23:30-02:00') AS d").scalar()
    assert late.replace(tzinfo=None) == dt.datetime(9999, 12, 31, 23, 30) and late.utcoffset() == dt.timedelta(hours=-2)
    # A repeated hour keeps the offset the value has (the later one here), as `fold` says.
    repeated = db.execute("RETURN datetime('2024-10-27T02:30+01:00[Europe/Paris]') AS d").scalar()
    assert repeated.utcoffset() == dt.timedelta(hours=1) and str(repeated.tzinfo) == "Europe/Paris"
    assert db.execute("RETURN $d = datetime('2024-10-27T02:30+01:00[Europe/Paris]') AS same", {"d": repeated}).scalar()


def test_points(db, tmp_path):
    row = db.execute(
        "RETURN point({x: 3, y: 4}) AS c, point({longitude: 181, latitude: 2}) AS g, "
        "point.distance(point({x: 0, y: 0}), point({x: 3, y: 4})) AS d, toString(point({x: 1, y: 2})) AS s"
    )[0]
    assert row["c"] == plexus.Point(7203, 3.0, 4.0) and row["c"].crs == "cartesian"
    # Longitudes wrap into [-180, 180].
    assert row["g"].longitude == -179.0 and row["g"].srid == 4326 and row["d"] == 5.0
    assert row["s"] == "point({x: 1.0, y: 2.0, crs: 'cartesian'})" == str(plexus.Point(7203, 1.0, 2.0))
    # A point of the neo4j driver is a tuple of coordinates with an SRID.
    class DriverPoint(tuple):
        srid = 4979

    assert roundtrip(db, DriverPoint((1.0, 2.0, 3.0))) == plexus.Point(4979, 1.0, 2.0, 3.0)
    with pytest.raises(plexus.ArgumentError):
        roundtrip(db, plexus.Point(4326, 0.0, 95.0))
    with pytest.raises(plexus.ArgumentError):
        roundtrip(db, plexus.Point(1234, 0.0, 0.0))
    # Stored, checkpointed and read back.
    path = str(tmp_path / "db")
    with plexus.Database(path) as d:
        d.execute("CREATE (:Place {at: $p, trail: $t})", {"p": plexus.Point.wgs84(1, 2), "t": [plexus.Point.cartesian(1, 2)]})
        with pytest.raises(plexus.QueryError):
            d.execute("CREATE (:Place {trail: [point({x: 1, y: 2}), point({longitude: 1, latitude: 2})]})")
    with plexus.Database(path) as d:
        row = d.execute("MATCH (p:Place) RETURN p.at AS at, p.trail AS trail")[0]
        assert row["at"] == plexus.Point(4326, 1.0, 2.0) and row["trail"] == [plexus.Point(7203, 1.0, 2.0)]


def test_named_zone_round_trip(db):
    zoneinfo = pytest.importorskip("zoneinfo")
    try:
        tz = zoneinfo.ZoneInfo("Europe/Paris")
    except zoneinfo.ZoneInfoNotFoundError:
        pytest.skip("no time-zone data")
    value = dt.datetime(2021, 7, 1, 12, 0, tzinfo=tz)
    got = roundtrip(db, value)
    assert got == value and got.utcoffset() == dt.timedelta(hours=2) and str(got.tzinfo) == "Europe/Paris"
    # A wall time in the spring-forward gap moves past it, as Cypher's datetime() moves it.
    gap = dt.datetime(2024, 3, 31, 2, 30, tzinfo=tz)
    row = db.execute(
        "RETURN toString($v) AS s, $v = datetime('2024-03-31T02:30:00[Europe/Paris]') AS same", {"v": gap}
    ).dicts()[0]
    assert row == {"s": "2024-03-31T03:30:00+02:00[Europe/Paris]", "same": True}
    # The repeated hour keeps the offset Python's fold gives.
    later = dt.datetime(2024, 10, 27, 2, 30, fold=1, tzinfo=tz)
    assert db.execute("RETURN toString($v) AS s", {"v": later}).scalar() == "2024-10-27T02:30:00+01:00[Europe/Paris]"
    # A zone name outside the IANA database is refused rather than stored unusable.
    class Nowhere(dt.tzinfo):
        key = "Nowhere/Land"

        def utcoffset(self, d):
            return dt.timedelta(hours=1)

    with pytest.raises(plexus.ArgumentError, match="Nowhere/Land"):
        db.execute("RETURN $v", {"v": dt.datetime(2024, 1, 1, tzinfo=Nowhere())})


def test_values_made_by_cypher(db):
    row = db.execute(
        """RETURN date('2020-02-29') AS d, localtime('12:34:56.789') AS lt, time('12:00+02:00') AS t,
                  localdatetime('2020-01-02T03:04:05') AS ldt, datetime('2020-01-02T03:04:05Z') AS zdt,
                  duration('P1Y2M3DT4H') AS months, duration('PT90M') AS mins, duration('PT0.000000001S') AS nano,
                  [1, 2.5, 'x'] AS list, {k: [true]} AS map, 7 / 2 AS int, 7 / 2.0 AS float"""
    )[0]
    assert row["d"] == dt.date(2020, 2, 29)
    assert row["lt"] == dt.time(12, 34, 56, 789000)
    assert row["t"] == dt.time(12, 0, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert row["ldt"] == dt.datetime(2020, 1, 2, 3, 4, 5)
    assert row["zdt"] == dt.datetime(2020, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
    assert row["months"] == plexus.Duration(months=14, days=3, seconds=4 * 3600)
    assert row["mins"] == dt.timedelta(minutes=90)
    # Nanoseconds a timedelta cannot hold stay exact in a Duration.
    assert row["nano"] == plexus.Duration(nanoseconds=1)
    assert row["list"] == [1, 2.5, "x"] and row["map"] == {"k": [True]}
    assert row["int"] == 3 and row["float"] == 3.5


def test_properties_keep_their_types(db):
    props = {
        "i": 1,
        "f": 2.5,
        "s": "x",
        "b": True,
        "bytes": b"ab",
        "ints": [1, 2],
        "d": dt.date(2000, 1, 1),
        "t": dt.datetime(2000, 1, 1, 12, 0),
        "dur": dt.timedelta(hours=1),
    }
    db.execute("CREATE (n:T) SET n = $props", {"props": props})
    node = db.execute("MATCH (n:T) RETURN n").scalar()
    assert isinstance(node, plexus.Node)
    assert node.labels == ["T"] and node.properties == props
    assert node["s"] == "x" and node.get("missing", 5) == 5 and "i" in node


def test_graph_entities(db):
    db.execute("CREATE (a:A {n: 1})-[:R {w: 2}]->(b:B {n: 2})")
    n, r, p = db.execute("MATCH p = (a:A)-[r:R]->(b) RETURN a, r, p").tuples()[0]
    assert isinstance(r, plexus.Relationship) and r.type == "R" and r["w"] == 2
    assert (r.start, r.end) == (n.id, p.end_node.id)
    assert isinstance(p, plexus.Path) and len(p) == 1 and p.nodes[0] == n and p.relationships[0] == r
    # Entities go back in as parameters by id.
    assert db.execute("MATCH (x) WHERE x = $n RETURN x.n", {"n": n}).scalar() == 1
    assert hash(n) == hash(db.execute("MATCH (a:A) RETURN a").scalar())


def test_graph_entities_pickle_and_copy(db):
    import copy
    import pickle

    db.execute("CREATE (a:A:B {n: 1, tags: ['x']})-[:R {w: 2.5}]->(b:B {n: 2})")
    n, r, p = db.execute("MATCH p = (a:A)-[r:R]->(b) RETURN a, r, p").tuples()[0]
    for value in (n, r, p, copy.deepcopy(p)):
        back = pickle.loads(pickle.dumps(value))
        assert type(back) is type(value) and back == value and repr(back) == repr(value)
    back = pickle.loads(pickle.dumps(n))
    assert back.labels == ["A", "B"] and back["tags"] == ["x"] and back.id == n.id
    back = pickle.loads(pickle.dumps(r))
    assert (back.type, back.start, back.end, back["w"]) == ("R", r.start, r.end, 2.5)
    with pytest.raises(plexus.ArgumentError, match="joins 2 nodes"):
        plexus.Path([n], [r])


def test_numpy_scalars_and_arrays_as_parameters(db):
    assert roundtrip(db, np.int32(5)) == 5
    assert roundtrip(db, np.float32(0.5)) == 0.5
    assert roundtrip(db, np.bool_(True)) is True
    assert roundtrip(db, np.array([1, 2, 3])) == [1, 2, 3]


def test_numpy_and_pandas_times_as_parameters(db):
    assert roundtrip(db, np.datetime64("2020-01-01T00:00:00.123456789", "ns")) == dt.datetime(2020, 1, 1, 0, 0, 0, 123456)
    # A datetime64 in whole days is a date, as NumPy's own `item()` gives it.
    assert roundtrip(db, np.datetime64("2020-01-02", "D")) == dt.date(2020, 1, 2)
    assert roundtrip(db, np.datetime64("1969-12-31", "D")) == dt.date(1969, 12, 31)
    times = np.array(["2020-01-01T00:00", "NaT"], dtype="datetime64[ns]")
    assert roundtrip(db, times) == [dt.datetime(2020, 1, 1), None]
    import pandas as pd

    assert roundtrip(db, pd.NaT) is None


def test_parameters_nested_without_end_are_refused(db):
    looped = []
    looped.append(looped)
    with pytest.raises(plexus.ArgumentError, match="levels deep"):
        db.execute("RETURN 1", {"v": looped})
    deep = []
    for _ in range(20000):
        deep = [deep]
    with pytest.raises(plexus.ArgumentError, match="levels deep"):
        db.execute("RETURN 1", {"v": deep})
    nested = {"a": [1]}
    for _ in range(50):
        nested = {"a": [nested]}
    assert db.execute("RETURN 1 AS one", {"v": nested}).scalar() == 1


def test_result_shapes(db):
    db.execute("UNWIND range(1, 5) AS i CREATE (:N {i: i})")
    r = db.execute("MATCH (n:N) RETURN n.i AS i, n.i * 2 AS j ORDER BY i")
    assert r.columns == ["i", "j"] and len(r) == 5
    assert list(r)[0] == {"i": 1, "j": 2} and r[-1] == {"i": 5, "j": 10}
    assert r.tuples()[1] == (2, 4) and r.dicts()[2] == {"i": 3, "j": 6}
    stats = db.execute("MATCH (n:N) WHERE n.i > 3 DETACH DELETE n").stats
    assert stats["nodes_deleted"] == 2
    assert db.execute("MATCH (n:Missing) RETURN n").scalar() is None


def test_out_of_range_values_raise_conversion_errors(db):
    with pytest.raises(plexus.ConversionError):
        db.execute("RETURN date('+10000-01-01') AS d").scalar()


def test_unsupported_parameter(db):
    with pytest.raises(plexus.ArgumentError, match="cannot be passed"):
        db.execute("RETURN $v", {"v": object()})
    with pytest.raises(plexus.ArgumentError, match="64 bits"):
        db.execute("RETURN $v", {"v": 2**64})
    with pytest.raises(plexus.ArgumentError, match="keys must be strings"):
        db.execute("RETURN $v", {"v": {1: 2}})
    # Numbers a float would round are refused, as integers past 64 bits are, not silently rounded.
    import decimal
    import fractions

    for exact in (decimal.Decimal("12345678901234567891"), fractions.Fraction(1, 3)):
        with pytest.raises(plexus.ArgumentError, match="cannot be passed to Plexus exactly"):
            db.execute("RETURN $v", {"v": exact})


def test_entities_as_parameters_must_still_exist(db):
    n = db.execute("CREATE (n:P {x: 1}) RETURN n").scalar()
    r = db.execute("MATCH (n:P) CREATE (n)-[r:R]->(:P) RETURN r").scalar()
    assert db.execute("RETURN $n.x AS x, type($r) AS t", {"n": n, "r": r}).tuples() == [(1, "R")]
    db.execute("MATCH (n:P {x: 1}) DETACH DELETE n")
    for params in ({"n": n}, {"n": [1, {"k": n}]}, {"n": r}):
        with pytest.raises(plexus.QueryError, match="does not exist"):
            db.execute("RETURN $n AS n", params)


def test_numpy_durations_pandas_missing_values_and_exact_duration_text(db):
    pd = pytest.importorskip("pandas")
    five_ns = db.execute("RETURN $v AS v", {"v": np.timedelta64(5, "ns")}).scalar()
    assert isinstance(five_ns, plexus.Duration) and (five_ns.seconds, five_ns.nanoseconds) == (0, 5)
    assert db.execute("RETURN $v AS v", {"v": np.timedelta64(5, "s")}).scalar() == dt.timedelta(seconds=5)
    # Days and weeks are days, as timedelta(days=1) is: across a DST change a day is not 24 hours.
    across = "RETURN toString($d) AS d, toString(datetime('2021-03-27T12:00[Europe/Berlin]') + $d) AS next"
    for d in (np.timedelta64(1, "D"), dt.timedelta(days=1)):
        assert db.execute(across, {"d": d}).tuples() == [("P1D", "2021-03-28T12:00:00+02:00[Europe/Berlin]")]
    assert db.execute("RETURN toString($d) AS d", {"d": np.timedelta64(2, "W")}).scalar() == "P14D"
    assert db.execute("RETURN toString($d) AS d", {"d": np.timedelta64(24, "h")}).scalar() == "PT24H"
    array = np.array([1, 2], dtype="timedelta64[s]").astype("timedelta64[ns]")
    got = db.execute("RETURN $v AS v", {"v": array}).scalar()
    assert got == [dt.timedelta(seconds=1), dt.timedelta(seconds=2)]
    assert db.execute("RETURN $v IS NULL AS v", {"v": np.timedelta64("NaT")}).scalar() is True
    assert db.execute("RETURN $v IS NULL AS v", {"v": pd.NA}).scalar() is True
    for d in [plexus.Duration(months=1, seconds=1234567), plexus.Duration(months=1, seconds=-1, nanoseconds=999999999)]:
        assert db.execute("RETURN duration($s) = $d AS same", {"s": str(d), "d": d}).scalar() is True, str(d)


def test_numpy_long_doubles_are_floats_and_complex_numbers_are_refused(db):
    assert db.execute("RETURN $v AS v", {"v": np.longdouble(1.5)}).scalar() == 1.5
    assert db.execute("RETURN $v AS v", {"v": np.array([np.longdouble(2.5)])}).scalar() == [2.5]
    for v in [np.clongdouble(1), np.complex128(1), complex(1, 2)]:
        with pytest.raises(plexus.ArgumentError, match="cannot be passed"):
            db.execute("RETURN $v", {"v": v})


def test_memoryviews_are_bytes_and_timestamps_keep_nanoseconds(db):
    assert db.execute("RETURN $v AS v", {"v": memoryview(b"ab")}).scalar() == b"ab"
    pd = pytest.importorskip("pandas")
    stamp = pd.Timestamp("2024-01-01 12:00:00.000000001")
    assert db.execute("RETURN toString($v) AS s", {"v": stamp}).scalar() == "2024-01-01T12:00:00.000000001"


def test_an_offset_with_a_fraction_of_a_second_is_refused(db):
    # Offsets are kept in whole seconds: cutting the fraction would move the instant.
    for offset in [dt.timedelta(seconds=1, microseconds=500000), dt.timedelta(microseconds=1)]:
        value = dt.datetime(2024, 1, 1, tzinfo=dt.timezone(offset))
        with pytest.raises(plexus.ArgumentError, match="fraction of a second"):
            db.execute("RETURN $v", {"v": value})
    whole = dt.datetime(2024, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=5, seconds=7)))
    assert db.execute("RETURN $v", {"v": whole}).scalar() == whole
