"""The official Neo4j Python driver against Plexus over Bolt: everything an application does with it."""

import datetime
import math
import threading
import warnings

import neo4j
import neo4j.spatial
import pytest
from neo4j import GraphDatabase
from neo4j.exceptions import AuthError, ClientError, CypherSyntaxError, TransientError


def test_server_identifies_as_neo4j_compatible(driver):
    driver.verify_connectivity()
    info = driver.get_server_info()
    assert info.agent.startswith("Neo4j/")
    assert "Plexus" in info.agent


def test_auto_commit_query_with_parameters(driver, tag):
    records, summary, keys = driver.execute_query(
        f"CREATE (a:{tag} {{name: $name, age: $age}}) RETURN a.name AS name, a.age AS age", name="Ann", age=42
    )
    assert keys == ["name", "age"]
    assert records[0]["name"] == "Ann" and records[0]["age"] == 42
    assert summary.counters.nodes_created == 1
    assert summary.counters.properties_set == 2
    records, _, _ = driver.execute_query(f"MATCH (a:{tag}) RETURN count(a) AS c")
    assert records[0]["c"] == 1


def test_nodes_relationships_and_paths(driver, tag):
    records, _, _ = driver.execute_query(
        f"CREATE p = (a:{tag}:Person {{name: 'a'}})-[r:KNOWS {{since: 2020}}]->(b:{tag} {{name: 'b'}})"
        f"<-[s:LIKES]-(c:{tag} {{name: 'c'}}) "
        "RETURN a, r, b, p, id(a) AS ida, elementId(a) AS eida, elementId(r) AS eidr"
    )
    rec = records[0]
    a, r, b, p = rec["a"], rec["r"], rec["b"], rec["p"]
    assert set(a.labels) == {tag, "Person"}
    assert a["name"] == "a"
    assert a.element_id == rec["eida"]
    assert r.type == "KNOWS" and r["since"] == 2020
    assert r.element_id == rec["eidr"]
    assert r.start_node.element_id == a.element_id and r.end_node.element_id == b.element_id
    assert len(p) == 2
    assert [n["name"] for n in p.nodes] == ["a", "b", "c"]
    assert [rel.type for rel in p.relationships] == ["KNOWS", "LIKES"]
    # The second relationship is walked against its direction: it starts at c.
    assert p.relationships[1].start_node["name"] == "c"


VALUES = [
    None,
    True,
    False,
    0,
    -1,
    127,
    -129,
    2**31,
    -(2**63),
    2**63 - 1,
    1.5,
    -0.0,
    float("inf"),
    "",
    "héllo wörld ✓",
    "x" * 70000,
    b"\x00\x01\xff",
    [],
    [1, 2, 3],
    ["a", None, 1.5],
    {"k": [1, {"n": "v"}]},
    neo4j.time.Date(2024, 2, 29),
    neo4j.time.Time(23, 59, 59, 999999999),
    neo4j.time.DateTime(2021, 3, 4, 5, 6, 7, 8),
    neo4j.time.DateTime(2021, 3, 4, 5, 6, 7, 8, tzinfo=datetime.timezone(datetime.timedelta(hours=-5))),
    neo4j.time.Duration(months=14, days=3, seconds=5, nanoseconds=7),
    datetime.date(1969, 7, 20),
    datetime.datetime(2000, 1, 1, 0, 0, 1),
    neo4j.spatial.CartesianPoint((1.5, -2.0)),
    neo4j.spatial.CartesianPoint((1.0, 2.0, 3.0)),
    neo4j.spatial.WGS84Point((12.5, 56.25)),
    neo4j.spatial.WGS84Point((12.5, 56.25, 100.0)),
]


@pytest.mark.parametrize("value", VALUES, ids=lambda v: type(v).__name__ + ":" + repr(v)[:20])
def test_every_value_type_round_trips(driver, value):
    records, _, _ = driver.execute_query("RETURN $v AS v", v=value)
    got = records[0]["v"]
    if isinstance(value, float) and math.isnan(value):
        assert math.isnan(got)
    elif isinstance(value, datetime.date) and not isinstance(value, neo4j.time.Date):
        assert got.to_native() == value
    else:
        assert got == value
        assert type(got) is type(value) or isinstance(value, (bytes,)) and isinstance(got, (bytes, bytearray))


def test_times_with_offsets_round_trip(driver):
    # The drivers build zoned times with their own tzinfo: take one from the server and send it back.
    records, _, _ = driver.execute_query("RETURN time('12:30:15.123456789+02:00') AS t")
    t = records[0]["t"]
    assert (t.hour, t.minute, t.second, t.nanosecond) == (12, 30, 15, 123456789)
    assert t.utc_offset() == datetime.timedelta(hours=2)
    records, _, _ = driver.execute_query("RETURN $t AS t, $t = time('12:30:15.123456789+02:00') AS same", t=t)
    assert records[0]["t"] == t and records[0]["same"] is True


def test_values_stored_as_properties_round_trip(driver, tag):
    props = {
        "i": 7,
        "f": 2.5,
        "s": "text",
        "b": True,
        "ints": [1, 2],
        "strs": ["x", "y"],
        "d": neo4j.time.Date(2020, 1, 1),
        "dt": neo4j.time.DateTime(2020, 1, 1, 12, 0, 0, tzinfo=datetime.timezone.utc),
        "du": neo4j.time.Duration(days=1),
    }
    driver.execute_query(f"CREATE (n:{tag}) SET n = $props", props=props)
    records, _, _ = driver.execute_query(f"MATCH (n:{tag}) RETURN n")
    assert dict(records[0]["n"]) == props


def test_points_are_made_stored_and_measured(driver, tag):
    records, _, _ = driver.execute_query(
        "RETURN point({x: 3, y: 4}) AS c, point({longitude: 12.78, latitude: 56.7, height: 100}) AS g, "
        "point.distance(point({x: 0, y: 0}), point({x: 3, y: 4})) AS d"
    )
    c, g = records[0]["c"], records[0]["g"]
    assert isinstance(c, neo4j.spatial.CartesianPoint) and (c.x, c.y, c.srid) == (3.0, 4.0, 7203)
    assert isinstance(g, neo4j.spatial.WGS84Point) and (g.longitude, g.latitude, g.height) == (12.78, 56.7, 100.0)
    assert g.srid == 4979 and records[0]["d"] == 5.0
    here, there = neo4j.spatial.WGS84Point((12.78, 56.7)), neo4j.spatial.WGS84Point((13.0, 56.0))
    driver.execute_query(
        f"UNWIND $places AS p CREATE (:{tag} {{name: p.name, at: p.at}})",
        places=[{"name": "here", "at": here}, {"name": "there", "at": there}],
    )
    records, _, _ = driver.execute_query(
        f"MATCH (a:{tag} {{name: 'here'}}), (b:{tag} {{name: 'there'}}) "
        "RETURN a.at AS at, round(point.distance(a.at, b.at)) AS metres, a.at.latitude AS lat"
    )
    assert records[0]["at"] == here and records[0]["metres"] == 79096.0 and records[0]["lat"] == 56.7
    with pytest.raises(ClientError):
        driver.execute_query("RETURN point({longitude: 1, latitude: 95}) AS p")


def test_zoned_datetimes_keep_their_zone(driver):
    records, _, _ = driver.execute_query("RETURN datetime('2021-06-01T12:00:00[Europe/Stockholm]') AS dt")
    dt = records[0]["dt"]
    assert dt.tzinfo is not None and "Stockholm" in str(dt.tzinfo)
    assert dt.utcoffset() == datetime.timedelta(hours=2)
    records, _, _ = driver.execute_query("RETURN $dt AS dt, $dt.timezone AS zone", dt=dt)
    assert records[0]["dt"] == dt and records[0]["zone"] == "Europe/Stockholm"


def test_managed_transactions(driver, tag):
    def create(tx, name):
        return tx.run(f"CREATE (n:{tag} {{name: $name}}) RETURN n.name AS name", name=name).single()["name"]

    def count(tx):
        return tx.run(f"MATCH (n:{tag}) RETURN count(n) AS c").single()["c"]

    with driver.session() as session:
        assert session.execute_write(create, "x") == "x"
        assert session.execute_write(create, "y") == "y"
        assert session.execute_read(count) == 2


def test_read_transactions_refuse_writes(driver, tag):
    with driver.session(default_access_mode=neo4j.READ_ACCESS) as session:
        with pytest.raises(ClientError) as e:
            session.execute_read(lambda tx: tx.run(f"CREATE (:{tag})").consume())
        assert "AccessMode" in e.value.code


def test_conflicting_writes_are_retried(driver, tag):
    driver.execute_query(f"CREATE (:{tag} {{n: 0}})")
    attempts = []

    def increment(tx):
        attempts.append(1)
        value = tx.run(f"MATCH (c:{tag}) SET c.n = c.n + 1 RETURN c.n AS n").single()["n"]
        if len(attempts) == 1:
            # Someone else changes the same node and commits first: our commit must fail and be retried.
            driver.execute_query(f"MATCH (c:{tag}) SET c.n = c.n + 100")
        return value

    with driver.session() as session:
        session.execute_write(increment)
    assert len(attempts) == 2
    records, _, _ = driver.execute_query(f"MATCH (c:{tag}) RETURN c.n AS n")
    assert records[0]["n"] == 101


def test_conflict_errors_are_transient(driver, tag):
    driver.execute_query(f"CREATE (:{tag} {{n: 0}})")
    with driver.session() as s1, driver.session() as s2:
        tx1 = s1.begin_transaction()
        tx2 = s2.begin_transaction()
        tx1.run(f"MATCH (c:{tag}) SET c.n = 1").consume()
        tx2.run(f"MATCH (c:{tag}) SET c.n = 2").consume()
        tx1.commit()
        with pytest.raises(TransientError):
            tx2.commit()


def test_explicit_transactions_commit_and_roll_back(driver, tag):
    with driver.session() as session:
        tx = session.begin_transaction()
        tx.run(f"CREATE (:{tag} {{v: 1}})")
        result = tx.run(f"MATCH (n:{tag}) RETURN count(n) AS c")
        assert result.single()["c"] == 1
        tx.rollback()
        assert session.run(f"MATCH (n:{tag}) RETURN count(n) AS c").single()["c"] == 0

        with session.begin_transaction() as tx:
            tx.run(f"CREATE (:{tag} {{v: 2}})")
            tx.run(f"CREATE (:{tag} {{v: 3}})")
            tx.commit()
        assert session.run(f"MATCH (n:{tag}) RETURN sum(n.v) AS s").single()["s"] == 5
        bookmarks = session.last_bookmarks()
        assert bookmarks


def test_failed_statement_in_a_transaction_rolls_it_back(driver, tag):
    with driver.session() as session:
        tx = session.begin_transaction()
        tx.run(f"CREATE (:{tag})").consume()
        with pytest.raises(CypherSyntaxError):
            tx.run("RETURN (").consume()
        tx.close()
        assert session.run(f"MATCH (n:{tag}) RETURN count(n) AS c").single()["c"] == 0


def test_several_results_open_in_one_transaction(driver):
    with driver.session() as session:
        with session.begin_transaction() as tx:
            a = tx.run("UNWIND range(1, 3) AS x RETURN x")
            b = tx.run("UNWIND range(10, 12) AS y RETURN y")
            assert [r["y"] for r in b] == [10, 11, 12]
            assert [r["x"] for r in a] == [1, 2, 3]


def test_large_results_stream_in_batches(bolt_uri, auth):
    with GraphDatabase.driver(bolt_uri, auth=auth, fetch_size=100) as d:
        with d.session() as session:
            result = session.run("UNWIND range(1, 25000) AS x RETURN x, toString(x) AS s")
            total = 0
            n = 0
            for record in result:
                total += record["x"]
                n += 1
            assert n == 25000 and total == 25000 * 25001 // 2
            # Consuming part of a result and discarding the rest leaves the connection usable.
            result = session.run("UNWIND range(1, 10000) AS x RETURN x")
            assert next(iter(result))["x"] == 1
            summary = result.consume()
            assert summary is not None
            assert session.run("RETURN 1 AS one").single()["one"] == 1


def test_results_are_produced_as_they_are_pulled(bolt_uri, auth):
    with GraphDatabase.driver(bolt_uri, auth=auth, fetch_size=1000) as d:
        with d.session() as session:
            # A billion rows: the server produces only the batches pulled, so the first records come at once
            # and consuming the result discards the rest without producing it.
            result = session.run("UNWIND range(1, 1000000000) AS x RETURN x")
            firsts = [record["x"] for _, record in zip(range(2500), result)]
            assert firsts == list(range(1, 2501))
            result.consume()
            # An error in a later row ends the stream after the records before it.
            result = session.run("UNWIND range(1, 5000) AS x RETURN 100 / (4000 - x) AS q")
            seen = 0
            with pytest.raises(ClientError) as error:
                for record in result:
                    seen += 1
                    assert record["q"] == 100 // (4000 - seen)
            assert "ArithmeticError" in error.value.code
            assert 1000 <= seen < 3999
            assert session.run("RETURN 2 AS two").single()["two"] == 2
        # A read transaction's stream keeps its snapshot while another session writes.
        with d.session() as setup:
            setup.run("UNWIND range(1, 3000) AS i CREATE (:StreamSnap {i: i})").consume()
        with d.session(default_access_mode=neo4j.READ_ACCESS) as reader, d.session() as writer:
            with reader.begin_transaction() as tx:
                result = tx.run("MATCH (n:StreamSnap) RETURN n.i AS i")
                first = [r["i"] for _, r in zip(range(1500), result)]
                writer.run("MATCH (n:StreamSnap) DETACH DELETE n").consume()
                rest = [r["i"] for r in result]
                assert sorted(first + rest) == list(range(1, 3001))
            assert writer.run("MATCH (n:StreamSnap) RETURN count(n) AS c").single()["c"] == 0


def test_many_concurrent_sessions(driver, tag):
    errors = []

    def worker(i):
        try:
            with driver.session() as session:
                for j in range(20):
                    session.execute_write(
                        lambda tx: tx.run(f"CREATE (:{tag} {{w: $w, j: $j}})", w=i, j=j).consume()
                    )
                    session.execute_read(lambda tx: tx.run(f"MATCH (n:{tag}) RETURN count(n) AS c").single())
        except Exception as e:  # noqa: BLE001 - collected and reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    records, _, _ = driver.execute_query(f"MATCH (n:{tag}) RETURN count(n) AS c")
    assert records[0]["c"] == 16 * 20


def test_bad_credentials_are_refused(bolt_uri, auth):
    with GraphDatabase.driver(bolt_uri, auth=(auth[0], "wrong password")) as d:
        with pytest.raises(AuthError) as e:
            d.verify_connectivity()
        assert e.value.code == "Neo.ClientError.Security.Unauthorized"
    with GraphDatabase.driver(bolt_uri, auth=("nobody", auth[1])) as d:
        with pytest.raises(AuthError):
            d.verify_connectivity()


def test_neo4j_scheme_routes_to_this_server(bolt_uri, auth, tag):
    routed = bolt_uri.replace("bolt://", "neo4j://")
    with GraphDatabase.driver(routed, auth=auth) as d:
        d.verify_connectivity()
        d.execute_query(f"CREATE (:{tag})")
        records, _, _ = d.execute_query(f"MATCH (n:{tag}) RETURN count(n) AS c", routing_=neo4j.RoutingControl.READ)
        assert records[0]["c"] == 1
        with d.session(default_access_mode=neo4j.READ_ACCESS) as s:
            assert s.execute_read(lambda tx: tx.run(f"MATCH (n:{tag}) RETURN count(n) AS c").single()["c"]) == 1
        # Database names are case-insensitive through routing too.
        records, _, _ = d.execute_query(f"MATCH (n:{tag}) RETURN count(n) AS c", database_="NEO4J")
        assert records[0]["c"] == 1


def test_errors_carry_neo4j_codes_and_positions(driver):
    with pytest.raises(CypherSyntaxError) as e:
        driver.execute_query("MATCH (n)\nRETURN n.name AS x,\n  nope(n)")
    assert e.value.code == "Neo.ClientError.Statement.SyntaxError"
    assert "line 3" in e.value.message
    with pytest.raises(ClientError) as e:
        driver.execute_query("RETURN $missing")
    assert e.value.code == "Neo.ClientError.Statement.ParameterMissing"
    with pytest.raises(ClientError) as e:
        driver.execute_query("RETURN 1 / 0")
    assert e.value.code.startswith("Neo.ClientError.Statement.")
    # The connection stays usable after errors.
    assert driver.execute_query("RETURN 2 AS two").records[0]["two"] == 2


def test_unknown_database_is_refused(driver):
    with pytest.raises(ClientError) as e:
        driver.execute_query("RETURN 1", database_="nosuchdb")
    assert "DatabaseNotFound" in e.value.code


def test_system_database_and_health_procedures(bolt_uri, auth):
    # Tools list databases on `system` and health checks call dbms.components(); neither is Cypher over the graph.
    routed = bolt_uri.replace("bolt://", "neo4j://")
    with GraphDatabase.driver(routed, auth=auth) as d:
        records, _, keys = d.execute_query("SHOW DEFAULT DATABASE", database_="system")
        assert keys[:3] == ["name", "type", "aliases"]
        assert records[0]["name"] == "neo4j" and records[0]["currentStatus"] == "online"
        records, _, _ = d.execute_query("SHOW DATABASES YIELD name ORDER BY name", database_="system")
        assert [r["name"] for r in records] == ["neo4j", "system"]
        records, _, _ = d.execute_query("CALL dbms.components() YIELD versions, edition RETURN versions[0] AS v, edition")
        assert d.get_server_info().agent.startswith("Neo4j/" + records[0]["v"])
        assert records[0]["edition"] == "community"
        with pytest.raises(ClientError) as e:
            d.execute_query("MATCH (n) RETURN n", database_="system")
        assert e.value.code == "Neo.ClientError.Statement.NotSystemDatabaseError"


def test_users_are_managed_on_the_system_database(bolt_uri, auth, tag):
    # As Neo4j 5's tools do it: user commands on `system`, names and passwords as parameters.
    user = f"user_{tag}".lower()
    with GraphDatabase.driver(bolt_uri, auth=auth) as admin:
        # Changing users writes: refused in a read transaction, as Neo4j refuses writes to `system` there.
        with pytest.raises(ClientError) as e:
            admin.execute_query(
                "CREATE USER $u SET PASSWORD $p", u=user, p="first", database_="system", routing_=neo4j.RoutingControl.READ
            )
        assert e.value.code == "Neo.ClientError.Statement.AccessMode"
        admin.execute_query("CREATE USER $u SET PASSWORD $p CHANGE NOT REQUIRED", u=user, p="first", database_="system")
        records, _, _ = admin.execute_query("SHOW USERS YIELD user, roles WHERE user = $u", u=user, database_="system")
        assert [(r["user"], r["roles"]) for r in records] == [(user, ["reader"])]
        with GraphDatabase.driver(bolt_uri, auth=(user, "first")) as d:
            assert d.execute_query("RETURN 1 AS one").records[0]["one"] == 1
            with pytest.raises(ClientError) as e:
                d.execute_query(f"CREATE (:{tag})")
            assert e.value.code == "Neo.ClientError.Security.Forbidden"
            d.execute_query("ALTER CURRENT USER SET PASSWORD FROM 'first' TO 'second'", database_="system")
        with GraphDatabase.driver(bolt_uri, auth=(user, "second")) as d:
            d.verify_connectivity()
        admin.execute_query(f"GRANT ROLE writer TO `{user}`", database_="system")
        with GraphDatabase.driver(bolt_uri, auth=(user, "second")) as d:
            d.execute_query(f"CREATE (:{tag})")
        admin.execute_query("DROP USER $u", u=user, database_="system")
        with GraphDatabase.driver(bolt_uri, auth=(user, "second")) as d:
            with pytest.raises(AuthError):
                d.verify_connectivity()


def test_schema_listings_run_in_read_transactions(driver, tag):
    driver.execute_query(f"CREATE INDEX {tag}_name IF NOT EXISTS FOR (n:{tag}) ON (n.name)")
    driver.execute_query(f"CREATE (:{tag} {{name: 'x', born: date('2000-01-01')}})")

    def listings(tx):
        indexes = tx.run("SHOW INDEXES YIELD name, type, labelsOrTypes WHERE $tag IN labelsOrTypes", tag=tag).data()
        procedures = [r["name"] for r in tx.run("SHOW PROCEDURES YIELD name").data()]
        functions = tx.run("SHOW FUNCTIONS YIELD name, category WHERE name = 'toUpper'").data()
        schema = tx.run(
            "CALL db.schema.nodeTypeProperties() YIELD nodeLabels, propertyName, propertyTypes "
            "WHERE $tag IN nodeLabels RETURN propertyName, propertyTypes ORDER BY propertyName",
            tag=tag,
        ).data()
        return indexes, procedures, functions, schema

    with driver.session() as session:
        indexes, procedures, functions, schema = session.execute_read(listings)
    assert indexes == [{"name": f"{tag}_name", "type": "RANGE", "labelsOrTypes": [tag]}]
    assert {"db.labels", "db.schema.nodeTypeProperties", "dbms.components"} <= set(procedures)
    assert functions == [{"name": "toUpper", "category": "String"}]
    assert schema == [{"propertyName": "born", "propertyTypes": ["Date"]}, {"propertyName": "name", "propertyTypes": ["String"]}]


def test_database_names_ignore_case_and_query_types_follow_the_plan(driver, tag):
    _, summary, _ = driver.execute_query(f"CREATE (n:{tag}) RETURN n", database_="NEO4J")
    assert summary.database == "neo4j"
    assert summary.query_type == "rw"
    _, summary, _ = driver.execute_query(f"MATCH (n:{tag}) WHERE n.none = 1 SET n.x = 1")
    assert summary.query_type == "w"


def test_unknown_procedures_and_impersonation_are_refused(driver):
    with pytest.raises(ClientError) as e:
        driver.execute_query("CALL no.such.procedure()")
    assert e.value.code == "Neo.ClientError.Procedure.ProcedureNotFound"
    with pytest.raises(ClientError) as e:
        driver.execute_query("RETURN 1", impersonated_user_="someone")
    assert e.value.code == "Neo.ClientError.Security.Forbidden"


def test_constraint_violations(driver, tag):
    driver.execute_query(f"CREATE CONSTRAINT FOR (n:{tag}) REQUIRE n.key IS UNIQUE")
    driver.execute_query(f"CREATE (:{tag} {{key: 1}})")
    with pytest.raises(ClientError) as e:
        driver.execute_query(f"CREATE (:{tag} {{key: 1}})")
    assert e.value.code == "Neo.ClientError.Schema.ConstraintValidationFailed"


def test_transaction_timeouts(driver):
    with driver.session() as session:
        with pytest.raises(ClientError) as e:
            session.run(
                neo4j.Query(
                    "UNWIND range(1, 3000) AS a UNWIND range(1, 3000) AS b WITH a WHERE a < 0 RETURN count(*)",
                    timeout=0.05,
                )
            ).consume()
        assert "TransactionTimedOut" in e.value.code
        assert session.run("RETURN 1 AS one").single()["one"] == 1


def operators(plan):
    """The operators of a plan tree, root first along the first children, as (type, rows)."""
    out = []
    while plan:
        out.append((plan["operatorType"], plan.get("rows")))
        plan = plan["children"][0] if plan["children"] else None
    return out


def test_explain_and_profile(driver):
    plan = driver.execute_query("EXPLAIN MATCH (n) RETURN n").summary.plan
    types = [t for t, _ in operators(plan)]
    assert types[0] == "ProduceResults@neo4j" and "AllNodesScan@neo4j" in types
    assert "string-representation" in plan["args"]
    profile = driver.execute_query("PROFILE UNWIND range(1, 5) AS x WITH x WHERE x > 2 RETURN x").summary.profile
    ops = operators(profile)
    assert ops[0] == ("ProduceResults@neo4j", 3) and ("Filter@neo4j", 3) in ops and ("Unwind@neo4j", 5) in ops
    assert profile["time"] >= 0 and "dbHits" in profile


def test_tls(auth):
    import os

    uri = os.environ.get("PLEXUS_TLS_BOLT_URI")
    if not uri:
        pytest.skip("no TLS server (openssl missing)")
    with GraphDatabase.driver(uri, auth=auth) as d:
        assert d.execute_query("RETURN 'over tls' AS s").records[0]["s"] == "over tls"


def _codes(summary):
    # Bolt 5.4 carries notifications; the 6.x driver reads them too but calls the attribute deprecated in favour of
    # GQL status objects, which it makes from them.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        notifications = summary.notifications or []
    codes = [n["code"] if isinstance(n, dict) else n.code for n in notifications]
    return [c.rsplit(".", 1)[1] for c in codes]


def test_notifications_reach_the_summary_as_the_client_filters_them(bolt_uri, auth, tag):
    # A label no node ever had: the driver is told where, as Neo4j tells it.
    with GraphDatabase.driver(bolt_uri, auth=auth) as d:
        with d.session() as s:
            summary = s.run(f"MATCH (n:{tag}Missing) RETURN n").consume()
            assert _codes(summary) == ["UnknownLabelWarning"]
            summary = s.run(f"MATCH (a:{tag}), (b:{tag}) RETURN count(*)").consume()
            assert "CartesianProduct" in _codes(summary)
        with d.session(notifications_min_severity="WARNING") as s:
            summary = s.run(f"MATCH (a:{tag}A), (b:{tag}A) RETURN count(*)").consume()
            assert _codes(summary) == ["UnknownLabelWarning"]
        with d.session(notifications_min_severity="OFF") as s:
            assert _codes(s.run(f"MATCH (n:{tag}Missing) RETURN n").consume()) == []
