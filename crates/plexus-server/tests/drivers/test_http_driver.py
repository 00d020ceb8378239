"""The official Neo4j Python driver (6.x) in its http:// mode, a client of the Query API, against Plexus.

The server's address and credentials come from run.sh (PLEXUS_HTTP_URI, e.g. http://127.0.0.1:7474, PLEXUS_USER
and PLEXUS_PASSWORD), through the fixtures in conftest.py. The 5.x drivers have no HTTP mode: there these tests
are skipped.
"""

import datetime
import importlib.util
import math

import neo4j
import pytest
import pytz
from neo4j import GraphDatabase
from neo4j.exceptions import AuthError, ClientError, ConstraintError, CypherSyntaxError, Neo4jError
from neo4j.graph import Node, Path, Relationship
from neo4j.spatial import CartesianPoint, WGS84Point
from neo4j.time import Date, DateTime, Duration, Time

DB = "neo4j"

pytestmark = [
    pytest.mark.filterwarnings("ignore:The Query API/HTTP support"),
    pytest.mark.skipif(int(neo4j.__version__.split(".")[0]) < 6, reason="the 5.x drivers have no HTTP mode"),
    pytest.mark.skipif(
        importlib.util.find_spec("urllib3") is None, reason="the HTTP mode needs the driver's 'http' extra"
    ),
]


@pytest.fixture(scope="module")
def http_driver(http_uri, auth):
    with GraphDatabase.driver(http_uri, auth=auth) as d:
        yield d


def test_connectivity_checks(http_driver, http_uri):
    # The driver checks with `CALL db.ping()` on the system database.
    http_driver.verify_connectivity()
    assert http_driver.get_server_info().agent.startswith("Neo4j/")
    assert http_driver.verify_authentication()
    with GraphDatabase.driver(http_uri, auth=("neo4j", "not-the-password")) as wrong:
        assert not wrong.verify_authentication()


def test_auto_commit_queries(http_driver, tag):
    records, summary, keys = http_driver.execute_query(
        f"CREATE (n:{tag} {{x: $x}}) RETURN n.x AS x", x=41, database_=DB
    )
    assert keys == ["x"]
    assert records[0]["x"] == 41
    assert summary.counters.nodes_created == 1
    assert summary.counters.properties_set == 1
    with http_driver.session(database=DB) as session:
        result = session.run(f"MATCH (n:{tag}) RETURN n.x + 1 AS y")
        assert result.single()["y"] == 42
        assert session.last_bookmarks()


def test_managed_transactions(http_driver, tag):
    def create(tx, n):
        tx.run(f"UNWIND range(1, $n) AS i CREATE (:{tag} {{i: i}})", n=n).consume()

    def total(tx):
        return tx.run(f"MATCH (n:{tag}) RETURN sum(n.i) AS s").single()["s"]

    with http_driver.session(database=DB) as session:
        session.execute_write(create, 4)
        assert session.execute_read(total) == 10


def test_explicit_transactions_commit_and_roll_back(http_driver, tag):
    with http_driver.session(database=DB) as session:
        tx = session.begin_transaction()
        tx.run(f"CREATE (:{tag} {{k: 'kept'}})").consume()
        assert tx.run(f"MATCH (n:{tag}) RETURN count(n) AS c").single()["c"] == 1
        tx.commit()

        tx = session.begin_transaction()
        tx.run(f"CREATE (:{tag} {{k: 'dropped'}})").consume()
        tx.rollback()

        # A transaction block commits when it ends normally and rolls back when it raises.
        with session.begin_transaction() as tx:
            tx.run(f"CREATE (:{tag} {{k: 'block'}})").consume()
        with pytest.raises(ZeroDivisionError):
            with session.begin_transaction() as tx:
                tx.run(f"CREATE (:{tag} {{k: 'raised'}})").consume()
                1 / 0

        keys = session.run(f"MATCH (n:{tag}) RETURN n.k AS k ORDER BY k").value()
        assert keys == ["block", "kept"]


def test_read_transactions_refuse_writes(http_driver, tag):
    with http_driver.session(database=DB, default_access_mode=neo4j.READ_ACCESS) as session:
        with pytest.raises(ClientError) as err:
            session.execute_read(lambda tx: tx.run(f"CREATE (:{tag})").consume())
        assert err.value.code == "Neo.ClientError.Statement.AccessMode"


SCALARS = [
    None,
    True,
    False,
    0,
    -(2**63),
    2**63 - 1,
    1.5,
    -0.0,
    1e300,
    math.inf,
    -math.inf,
    "",
    "grüße ✓",
    b"\x00\x01\xfe\xff",
    [1, "two", None, [3.5]],
    {"a": 1, "nested": {"b": [True]}},
]


@pytest.mark.parametrize("value", SCALARS, ids=repr)
def test_plain_values_round_trip(http_driver, value):
    records, _, _ = http_driver.execute_query("RETURN $v AS v", v=value, database_=DB)
    assert records[0]["v"] == value


POINTS = [
    CartesianPoint((1.5, -2.0)),
    CartesianPoint((1.0, 2.0, 3.0)),
    WGS84Point((12.5, 56.25)),
    WGS84Point((12.5, 56.25, 100.0)),
]


@pytest.mark.parametrize("value", POINTS, ids=repr)
def test_points_round_trip(http_driver, value):
    records, _, _ = http_driver.execute_query("RETURN $v AS v, $v.srid AS srid", v=value, database_=DB)
    assert records[0]["v"] == value and type(records[0]["v"]) is type(value)
    assert records[0]["srid"] == value.srid


def test_nan_round_trips(http_driver):
    records, _, _ = http_driver.execute_query("RETURN $v AS v", v=math.nan, database_=DB)
    assert math.isnan(records[0]["v"])


TEMPORALS = [
    Date(2024, 2, 29),
    datetime.date(1999, 12, 31),
    Time(12, 30, 15, 123456789),
    Time(23, 59, 59, 0, tzinfo=pytz.FixedOffset(60)),
    DateTime(2024, 1, 2, 3, 4, 5, 6),
    DateTime(2024, 1, 2, 3, 4, 5, 600000000, tzinfo=pytz.FixedOffset(-300)),
    pytz.timezone("Europe/Berlin").localize(DateTime(2024, 7, 1, 12, 0, 0)),
    datetime.datetime(2020, 5, 17, 8, 30, tzinfo=datetime.timezone.utc),
    Duration(years=1, months=2, days=3, hours=4, minutes=5, seconds=6, nanoseconds=7),
    Duration(seconds=-90, nanoseconds=-500000000),
]


@pytest.mark.parametrize("value", TEMPORALS, ids=str)
def test_temporal_values_round_trip(http_driver, value):
    records, _, _ = http_driver.execute_query("RETURN $v AS v", v=value, database_=DB)
    back = records[0]["v"]
    if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        value = Date.from_native(value)
    if isinstance(value, datetime.datetime):
        value = DateTime.from_native(value)
    assert back == value
    if getattr(value, "tzinfo", None) is not None:
        assert back.utcoffset() == value.utcoffset()


def test_timedelta_parameters_become_durations(http_driver):
    records, _, _ = http_driver.execute_query(
        "RETURN $v AS v", v=datetime.timedelta(days=2, seconds=3, microseconds=4), database_=DB
    )
    assert records[0]["v"] == Duration(days=2, seconds=3, microseconds=4)


def test_temporal_values_made_by_the_server(http_driver):
    records, _, _ = http_driver.execute_query(
        "RETURN date('2020-01-01') AS d, localtime('10:11:12') AS lt, time('10:11:12+02:00') AS t, "
        "localdatetime('2020-01-01T10:11:12') AS ldt, datetime('2020-01-01T10:11:12Z') AS dt, "
        "datetime('2020-06-01T10:00[Europe/Paris]') AS zdt, duration('P1DT2H') AS dur",
        database_=DB,
    )
    r = records[0]
    assert r["d"] == Date(2020, 1, 1)
    assert r["lt"] == Time(10, 11, 12)
    assert r["t"] == Time(10, 11, 12, tzinfo=pytz.FixedOffset(120))
    assert r["ldt"] == DateTime(2020, 1, 1, 10, 11, 12)
    assert r["dt"] == DateTime(2020, 1, 1, 10, 11, 12, tzinfo=pytz.utc)
    assert r["zdt"].tzinfo.zone == "Europe/Paris"
    assert r["zdt"].hour == 10
    assert r["dur"] == Duration(days=1, hours=2)


def test_nodes_relationships_and_paths(http_driver, tag):
    records, _, _ = http_driver.execute_query(
        f"CREATE p = (a:{tag}:Extra {{name: 'a', tags: ['x', 'y']}})-[r:KNOWS {{since: 2020}}]->"
        f"(b:{tag} {{name: 'b'}})<-[:LIKES]-(c:{tag} {{name: 'c'}}) RETURN a, r, b, p",
        database_=DB,
    )
    record = records[0]
    a, r, b, p = record["a"], record["r"], record["b"], record["p"]
    assert isinstance(a, Node) and isinstance(r, Relationship) and isinstance(p, Path)
    assert set(a.labels) == {tag, "Extra"}
    assert dict(a) == {"name": "a", "tags": ["x", "y"]}
    assert a.element_id.startswith("n:")
    assert r.type == "KNOWS" and r["since"] == 2020
    assert r.start_node.element_id == a.element_id
    assert r.end_node.element_id == b.element_id
    assert [n["name"] for n in p.nodes] == ["a", "b", "c"]
    assert [rel.type for rel in p.relationships] == ["KNOWS", "LIKES"]
    # The second relationship is walked against its direction.
    assert p.relationships[1].start_node.element_id == p.nodes[2].element_id
    again, _, _ = http_driver.execute_query(
        "MATCH (n) WHERE elementId(n) = $id RETURN n.name AS name", id=a.element_id, database_=DB
    )
    assert again[0]["name"] == "a"


def test_errors_raise_the_right_exception(http_driver, tag):
    with pytest.raises(CypherSyntaxError) as err:
        http_driver.execute_query("MATCH (n RETURN n", database_=DB)
    assert err.value.code == "Neo.ClientError.Statement.SyntaxError"
    with pytest.raises(ClientError) as err:
        http_driver.execute_query("RETURN 1 / 0", database_=DB)
    assert err.value.code == "Neo.ClientError.Statement.ArithmeticError"
    with pytest.raises(ClientError) as err:
        http_driver.execute_query("RETURN $missing", database_=DB)
    assert err.value.code == "Neo.ClientError.Statement.ParameterMissing"

    http_driver.execute_query(f"CREATE CONSTRAINT FOR (n:{tag}) REQUIRE n.key IS UNIQUE", database_=DB)
    http_driver.execute_query(f"CREATE (:{tag} {{key: 1}})", database_=DB)
    with pytest.raises(ConstraintError):
        http_driver.execute_query(f"CREATE (:{tag} {{key: 1}})", database_=DB)

    # An error inside a transaction ends it; the session is usable afterwards.
    with http_driver.session(database=DB) as session:
        tx = session.begin_transaction()
        with pytest.raises(Neo4jError):
            tx.run("RETURN 1 / 0").consume()
        tx.close()
        assert session.run("RETURN 2 AS two").single()["two"] == 2


def test_bad_credentials_are_an_auth_error(http_uri, auth):
    with GraphDatabase.driver(http_uri, auth=(auth[0], auth[1] + "-wrong")) as bad:
        with pytest.raises(AuthError):
            bad.execute_query("RETURN 1", database_=DB)


def test_unknown_databases_are_refused(http_driver):
    with pytest.raises(ClientError) as err:
        http_driver.execute_query("RETURN 1", database_="elsewhere")
    assert err.value.code == "Neo.ClientError.Database.DatabaseNotFound"
