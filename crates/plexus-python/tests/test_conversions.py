"""pandas, Arrow and NetworkX conversions, checked against NetworkX and pandas computing the same answers."""

import datetime as dt
import json

import numpy as np
import pytest

import plexus

nx = pytest.importorskip("networkx")
pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")


@pytest.fixture
def loaded(db, edges):
    src, dst, weight = edges
    db.import_edges(src, dst, weight=weight)
    return db


def test_networkx_matches_the_input_graph(loaded, nx_graph):
    g = loaded.execute("MATCH (a:Node)-[r:EDGE]->(b:Node) RETURN a, r, b").networkx()
    assert isinstance(g, nx.MultiDiGraph)
    assert g.number_of_edges() == nx_graph.number_of_edges()
    # Nodes are keyed by database id; relabel by the `id` property to compare with the input.
    g = nx.relabel_nodes(g, {n: d["id"] for n, d in g.nodes(data=True)})
    assert set(g.nodes) == set(nx_graph.nodes)
    for n in nx_graph.nodes:
        assert g.out_degree(n) == nx_graph.out_degree(n)
        assert g.in_degree(n) == nx_graph.in_degree(n)
        assert g.out_degree(n, weight="weight") == pytest.approx(nx_graph.out_degree(n, weight="weight"))
    assert all(d["type"] == "EDGE" for *_, d in g.edges(data=True))
    assert all(d["labels"] == ["Node"] for _, d in g.nodes(data=True))


def test_arrow_keeps_the_offsets_of_times(db):
    t = db.execute("UNWIND [time('01:00+05:00'), time('01:00-05:00'), null] AS t RETURN t").arrow()
    assert t.column("t").to_pylist() == ["01:00:00+05:00", "01:00:00-05:00", None]


def test_networkx_keeps_properties_named_like_its_arguments(db):
    db.execute(
        "CREATE (:A {labels: 'mine', node_for_adding: 1})-[:R {key: 7, type: 'own'}]->(:B {name: 'b'})"
    )
    g = db.execute("MATCH (a)-[r]->(b) RETURN a, r, b").networkx()
    (a, b, key, edge), = g.edges(keys=True, data=True)
    assert edge == {"key": 7, "type": "own", "_type": "R"}
    assert g.nodes[a] == {"labels": "mine", "node_for_adding": 1, "_labels": ["A"]}
    assert g.nodes[b] == {"name": "b", "labels": ["B"]}


def test_cypher_answers_match_networkx(loaded, nx_graph):
    degrees = loaded.execute(
        "MATCH (a:Node) RETURN a.id AS id, COUNT { (a)-->() } AS out, COUNT { (a)<--() } AS inc"
    ).df()
    for row in degrees.itertuples():
        assert (row.out, row.inc) == (nx_graph.out_degree(row.id), nx_graph.in_degree(row.id))
    # Shortest path lengths for a few pairs.
    nodes = sorted(nx_graph.nodes)
    for a, b in [(nodes[0], nodes[-1]), (nodes[3], nodes[7]), (nodes[5], nodes[5 + 20])]:
        got = loaded.execute(
            "MATCH p = shortestPath((a:Node {id: $a})-[*]->(b:Node {id: $b})) RETURN length(p)", {"a": a, "b": b}
        ).scalar()
        try:
            want = nx.shortest_path_length(nx_graph, a, b)
        except nx.NetworkXNoPath:
            want = None
        if a == b:
            continue
        assert got == want
    # Distinct successors and two-hop reach.
    rows = loaded.execute("MATCH (a:Node)-->(b) RETURN a.id AS id, count(DISTINCT b) AS n").tuples()
    assert dict(rows) == {n: len(set(nx_graph.successors(n))) for n in nx_graph if nx_graph.out_degree(n)}
    a = nodes[0]
    two = loaded.execute("MATCH (:Node {id: $a})-->()-->(c) RETURN collect(DISTINCT c.id)", {"a": a}).scalar()
    want = {c for b in nx_graph.successors(a) for c in nx_graph.successors(b)}
    assert set(two) == want


def test_networkx_from_paths_and_lists(db):
    db.execute("CREATE (a:P {n: 1})-[:R]->(b:P {n: 2})-[:R]->(c:P {n: 3})")
    g = db.execute("MATCH p = (:P {n: 1})-[:R*2]->() RETURN p").networkx()
    assert g.number_of_nodes() == 3 and g.number_of_edges() == 2
    g = db.execute("MATCH (a)-[r]->() RETURN collect(r) AS rels").networkx()
    assert g.number_of_edges() == 2 and all(g.nodes[n] == {} for n in g.nodes)


def test_df_matches_pandas(loaded, edges):
    src, dst, weight = edges
    df = loaded.execute(
        "MATCH (a:Node)-[r]->() RETURN a.id AS id, count(r) AS n, sum(r.weight) AS w ORDER BY id"
    ).df()
    want = pd.DataFrame({"id": src, "w": weight}).groupby("id").agg(n=("w", "size"), w=("w", "sum")).reset_index()
    assert list(df.columns) == ["id", "n", "w"]
    assert df["id"].dtype == np.int64 and df["n"].dtype == np.int64 and df["w"].dtype == np.float64
    np.testing.assert_array_equal(df["id"], want["id"])
    np.testing.assert_array_equal(df["n"], want["n"])
    np.testing.assert_allclose(df["w"], want["w"])


def test_df_nulls_and_objects(db):
    df = db.execute(
        "UNWIND [1, null, 3] AS x RETURN x AS i, x * 1.5 AS f, x > 1 AS b, toString(x) AS s, [x] AS l, "
        "localdatetime({year: 2020, month: coalesce(x, 1), day: 1}) AS t"
    ).df()
    assert df["i"].dtype == "Int64" and df["i"].isna().tolist() == [False, True, False]
    assert np.isnan(df["f"][1]) and df["f"][2] == 4.5
    assert df["b"].dtype == "boolean" and df["b"][2]
    assert df["s"][0] == "1" and pd.isna(df["s"][1]) and df["l"].tolist() == [[1], [None], [3]]
    assert df["t"].dtype.kind == "M" and df["t"][2] == pd.Timestamp(2020, 3, 1)


def test_arrow_types_and_values(db):
    t = db.execute(
        """UNWIND [1, 2, null] AS x
           RETURN x AS i, x / 2.0 AS f, x = 1 AS b, 'v' + toString(x) AS s, date({year: 2000, month: coalesce(x, 1)}) AS d,
                  localtime({hour: coalesce(x, 0)}) AS lt, localdatetime({year: 2020, month: 1, day: 1, hour: coalesce(x, 0)}) AS ldt,
                  datetime({year: 2020, month: 1, day: 1, timezone: '+01:00'}) AS zdt, duration({months: coalesce(x, 0), seconds: 1}) AS dur,
                  null AS nothing, [x] AS list, CASE WHEN x = 1 THEN 1 ELSE 'one' END AS mixed"""
    ).arrow()
    assert isinstance(t, pa.Table) and t.num_rows == 3
    schema = {f.name: f.type for f in t.schema}
    assert schema["i"] == pa.int64() and schema["f"] == pa.float64() and schema["b"] == pa.bool_()
    assert schema["s"] == pa.large_string() and schema["d"] == pa.date32() and schema["lt"] == pa.time64("ns")
    assert schema["ldt"] == pa.timestamp("ns") and schema["zdt"] == pa.timestamp("ns", tz="UTC")
    assert schema["dur"] == pa.month_day_nano_interval() and schema["nothing"] == pa.null()
    assert t["i"].to_pylist() == [1, 2, None]
    assert t["b"].to_pylist() == [True, False, None]
    assert t["s"].to_pylist() == ["v1", "v2", None]
    assert t["d"].to_pylist() == [dt.date(2000, 1, 1), dt.date(2000, 2, 1), dt.date(2000, 1, 1)]
    assert t["lt"].to_pylist()[0] == dt.time(1)
    assert t["zdt"].to_pylist()[0] == dt.datetime(2019, 12, 31, 23, tzinfo=dt.timezone.utc)
    assert t["dur"].to_pylist()[1] == pa.MonthDayNano([2, 0, 1_000_000_000])
    assert t["list"].to_pylist() == [[1], [2], [None]]
    assert t["mixed"].to_pylist() == ["1", "one", "one"]
    for col in t.columns:
        col.validate(full=True)


def test_arrow_points_are_structs(db):
    t = db.execute(
        """UNWIND [point({x: 1.5, y: 2.0}), point({longitude: 12.5, latitude: 56.0, height: 3.0}), null] AS p
           RETURN p, [p] AS ps"""
    ).arrow()
    assert pa.types.is_struct(t.schema.field("p").type)
    assert t["p"].to_pylist() == [
        {"srid": 7203, "x": 1.5, "y": 2.0, "z": None},
        {"srid": 4979, "x": 12.5, "y": 56.0, "z": 3.0},
        None,
    ]
    assert t["ps"].to_pylist()[0] == [{"srid": 7203, "x": 1.5, "y": 2.0, "z": None}]


def test_arrow_of_nodes(db):
    db.execute("CREATE (:A {x: 1}), (:A {x: 2})")
    t = db.execute("MATCH (a:A) RETURN a ORDER BY a.x").arrow()
    assert [r["properties"]["x"] for r in t["a"].to_pylist()] == [1, 2]


def test_arrow_large_result(db):
    n = 200_000
    r = db.execute("UNWIND range(0, $n - 1) AS i RETURN i, i * 0.5 AS f, toString(i) AS s", {"n": n})
    t = r.arrow()
    assert t.num_rows == n and t["i"].to_numpy()[-1] == n - 1 and t["s"][12345].as_py() == "12345"
    assert t["f"].to_numpy().sum() == pytest.approx(0.5 * n * (n - 1) / 2)


def test_arrow_columns_whose_kind_changes_late(db):
    # Columns are built as the kind of their first value; one that changes kind at its last row is built again
    # (large enough to take the parallel path).
    n = 50_000
    t = db.execute(
        """UNWIND range(0, $n - 1) AS i
           RETURN CASE WHEN i = $n - 1 THEN 0.5 ELSE i END AS num,
                  CASE WHEN i = $n - 1 THEN 7 ELSE toString(i) END AS s,
                  CASE WHEN i = $n - 1 THEN 1 ELSE i % 2 = 0 END AS b, i AS plain""",
        {"n": n},
    ).arrow()
    schema = {f.name: f.type for f in t.schema}
    assert schema["num"] == pa.float64() and schema["plain"] == pa.int64()
    assert t["num"].to_pylist()[-2:] == [n - 2, 0.5]
    assert t["s"].to_pylist()[-2:] == [str(n - 2), "7"]
    assert t["b"].to_pylist()[-2:] == ["True", "1"]
    assert t["plain"].to_numpy()[-1] == n - 1
    for col in t.columns:
        col.validate(full=True)


def test_integers_beyond_float_precision_are_not_rounded_in_mixed_columns(db):
    result = db.execute("UNWIND [9007199254740993, 2.5, null] AS v RETURN v")
    assert result.df()["v"].tolist()[:2] == [9007199254740993, 2.5]
    assert result.arrow()["v"].to_pylist()[:2] in ([9007199254740993, 2.5], ["9007199254740993", "2.5"])
    # Integers a float holds exactly still make a float column.
    mixed = db.execute("UNWIND [9007199254740992, 2.5] AS v RETURN v")
    assert mixed.df()["v"].dtype == np.float64
    assert mixed.arrow()["v"].type == pa.float64()


def test_mixed_columns_keep_every_value_as_text_rather_than_coerce_it(db):
    cases = [
        "UNWIND [date('2020-01-01'), localdatetime('2020-01-01T05:00')] AS v RETURN v",
        "UNWIND [duration('PT1H'), 5] AS v RETURN v",
        "UNWIND [1.5, true] AS v RETURN v",
        "UNWIND [localdatetime('2020-01-01T05:00'), datetime('2020-01-01T05:00+05:00')] AS v RETURN v",
        "UNWIND [[1.5, true], [2.5]] AS v RETURN v",
    ]
    for query in cases:
        column = db.execute(query).arrow()["v"]
        assert column.type == pa.large_string(), f"{query}: {column.type}"
    dates = db.execute("UNWIND [date('2020-01-01'), localdatetime('2020-01-01T05:00')] AS v RETURN v").arrow()
    assert "05:00" in dates["v"].to_pylist()[1], "the time of day is kept"
    texts = db.execute("UNWIND [1.5, true] AS v RETURN v").arrow()["v"].to_pylist()
    assert texts == ["1.5", "True"]
    # Lists and maps in such a column are JSON text, not Python reprs.
    lists = db.execute("UNWIND [[1.5, true], {a: 1, b: [null]}] AS v RETURN v").arrow()["v"].to_pylist()
    assert lists == ["[1.5, true]", '{"a": 1, "b": [null]}']
    # Values nested deeper than Python's stack (999 levels, the engine's limit is 1,000): text too, not a
    # RecursionError, and the same text as the encoder writes for shallower ones.
    deep = db.execute("RETURN reduce(acc = [], i IN range(1, 998) | [acc]) AS v").arrow()["v"]
    assert deep.type == pa.large_string() and deep.to_pylist()[0] == "[" * 999 + "]" * 999
    deep_map = db.execute("RETURN reduce(acc = {}, i IN range(1, 998) | {k: acc, n: [i, 1.5, null]}) AS v")
    text = deep_map.arrow()["v"].to_pylist()[0]
    assert text.startswith('{"k": {"k": ') and text.endswith(', "n": [998, 1.5, null]}')
    from plexus._frames import _json_without_recursion

    keys = {True: 1, False: 2, None: 3, 7: 4, 1.5: 5, float("nan"): 6, float("inf"): [float("-inf")]}
    shallow = [{"a": [1, 2.5, None, True, "x\u00e9"], "b": {}}, [], "s", {"c": [[]]}, dt.date(2020, 1, 2), keys]
    assert _json_without_recursion(shallow) == json.dumps(shallow, default=str, ensure_ascii=False)
    # One type, nulls included, still makes a typed column.
    typed = db.execute("UNWIND [date('2020-01-01'), null] AS v RETURN v").arrow()["v"]
    assert typed.type == pa.date32()
