"""The graph view and bulk loading, checked against NetworkX on the same graph."""

import threading
import time

import numpy as np
import pytest

import plexus

nx = pytest.importorskip("networkx")


@pytest.fixture
def graph(db, edges):
    src, dst, weight = edges
    info = db.import_edges(src, dst, weight=weight)
    assert info == {"nodes_created": len(set(src) | set(dst)), "relationships_created": len(src), "bulk": True}
    return db.graph()


def ids_of(nx_graph):
    nodes = np.array(sorted(nx_graph.nodes), dtype=np.int64)
    return np.concatenate([nodes, np.array([-5, 11, 10**12], dtype=np.int64)])  # and some unknown ids


def split(offsets, values):
    return [values[offsets[i] : offsets[i + 1]].tolist() for i in range(len(offsets) - 1)]


def test_single_calls_match_networkx(graph, nx_graph):
    for u in ids_of(nx_graph).tolist():
        known = u in nx_graph
        assert graph.has_node(u) == known
        assert graph.out_degree(u) == (nx_graph.out_degree(u) if known else 0)
        assert graph.in_degree(u) == (nx_graph.in_degree(u) if known else 0)
        assert graph.degree(u) == (nx_graph.degree(u) if known else 0)
        n, w = graph.out_degree(u, weight=True)
        assert n == graph.out_degree(u)
        assert w == pytest.approx(nx_graph.out_degree(u, weight="weight") if known else 0)
        assert graph.neighbors(u) == (sorted(set(nx_graph.successors(u))) if known else [])
        assert graph.predecessors(u) == (sorted(set(nx_graph.predecessors(u))) if known else [])
        both = sorted(set(nx_graph.successors(u)) | set(nx_graph.predecessors(u))) if known else []
        assert graph.neighbors(u, direction="both") == both
        out = graph.out_edges(u)
        want = sorted((a, b, round(d["weight"], 3)) for a, b, d in nx_graph.out_edges(u, data=True)) if known else []
        assert sorted((a, b, round(w, 3)) for a, b, w in out) == want
        inc = graph.in_edges(u)
        want = sorted((a, b, round(d["weight"], 3)) for a, b, d in nx_graph.in_edges(u, data=True)) if known else []
        assert sorted((a, b, round(w, 3)) for a, b, w in inc) == want
    nodes = sorted(nx_graph.nodes)
    for a in nodes[:15]:
        for b in nodes[:15]:
            assert graph.has_edge(a, b) == nx_graph.has_edge(a, b)
            between = graph.edges_between(a, b)
            assert len(between) == nx_graph.number_of_edges(a, b)
            want = sorted(d["weight"] for d in nx_graph.get_edge_data(a, b, default={}).values())
            assert sorted(w for _, w in between) == pytest.approx(want)


def test_batched_calls_match_single_calls(graph, nx_graph):
    ids = ids_of(nx_graph)
    rng = np.random.default_rng(1)
    us, vs = rng.choice(ids, 500), rng.choice(ids, 500)
    assert graph.has_edge(us, vs).tolist() == [graph.has_edge(int(u), int(v)) for u, v in zip(us, vs)]
    assert graph.has_edge(us, int(us[0])).tolist() == [graph.has_edge(int(u), int(us[0])) for u in us]
    assert graph.has_node(ids).tolist() == [graph.has_node(int(u)) for u in ids]
    for name in ["degree", "in_degree", "out_degree"]:
        method = getattr(graph, name)
        counts = method(ids)
        assert counts.dtype == np.int64 and counts.tolist() == [method(int(u)) for u in ids]
        counts, weights = method(ids, weight=True)
        assert counts.tolist() == [method(int(u)) for u in ids]
        np.testing.assert_allclose(weights, [method(int(u), weight=True)[1] for u in ids])
    for direction in ["out", "in", "both"]:
        offsets, values = graph.neighbors(ids, direction=direction)
        assert split(offsets, values) == [graph.neighbors(int(u), direction=direction) for u in ids]
    offsets, targets, weights = graph.out_edges(ids)
    assert split(offsets, targets) == [[b for _, b, _ in graph.out_edges(int(u))] for u in ids]
    np.testing.assert_allclose(weights, [w for u in ids for *_, w in graph.out_edges(int(u))])
    offsets, sources, _ = graph.in_edges(ids)
    assert split(offsets, sources) == [[a for a, _, _ in graph.in_edges(int(u))] for u in ids]
    offsets, rels, weights = graph.edges_between(us, vs)
    assert split(offsets, rels) == [[r for r, _ in graph.edges_between(int(u), int(v))] for u, v in zip(us, vs)]
    # Empty batches answer empty, against an empty batch or a single id.
    empty = np.array([], dtype=np.int64)
    assert graph.has_edge(empty, empty).tolist() == [] and graph.has_edge(1, empty).tolist() == []
    offsets, rels, weights = graph.edges_between(empty, int(us[0]))
    assert offsets.tolist() == [0] and rels.tolist() == [] and weights.tolist() == []


def test_batched_reads_of_unknown_ids(graph, nx_graph):
    # Batches read ahead of the id they answer: unknown ids anywhere in the batch, the first and the last
    # included, answer as single calls do and disturb no neighbour's answer.
    ids = ids_of(nx_graph)
    rng = np.random.default_rng(5)
    mixed = rng.choice(ids, 300)
    mixed[rng.choice(300, 40, replace=False)] = rng.choice([-7, 10**12, max(ids) + 1], 40)
    mixed[0], mixed[-1] = -7, 10**12
    for name in ["degree", "in_degree", "out_degree"]:
        method = getattr(graph, name)
        assert method(mixed).tolist() == [method(int(u)) for u in mixed]
        counts, weights = method(mixed, weight=True)
        assert counts.tolist() == [method(int(u)) for u in mixed]
        np.testing.assert_allclose(weights, [method(int(u), weight=True)[1] for u in mixed])
    other = mixed[::-1].copy()
    assert graph.has_edge(mixed, other).tolist() == [graph.has_edge(int(u), int(v)) for u, v in zip(mixed, other)]
    offsets, targets, _ = graph.out_edges(mixed)
    assert split(offsets, targets) == [[b for _, b, _ in graph.out_edges(int(u))] for u in mixed]


def test_large_batches_run_in_parallel_and_agree(graph, nx_graph):
    ids = np.resize(ids_of(nx_graph), 100_000)
    np.random.default_rng(3).shuffle(ids)
    counts = graph.out_degree(ids)
    assert counts.tolist() == [nx_graph.out_degree(u) if u in nx_graph else 0 for u in ids.tolist()]
    # Neighbour sets are written in place up to each node's degree (repeats make them shorter) and the threads'
    # parts closed up afterwards.
    sample = np.random.default_rng(4).choice(len(ids), 300).tolist()
    for direction in ("out", "in", "both"):
        offsets, values = graph.neighbors(ids, direction=direction)
        assert offsets[-1] == len(values) and np.all(np.diff(offsets) >= 0)
        for i in sample + [0, len(ids) - 1]:
            assert values[offsets[i] : offsets[i + 1]].tolist() == graph.neighbors(int(ids[i]), direction=direction)
    # Edge lists are written straight into arrays sized from the degrees, split over threads by edge count.
    for method, end in ((graph.out_edges, 1), (graph.in_edges, 0)):
        offsets, others, weights = method(ids)
        degrees = graph.out_degree(ids) if end == 1 else graph.in_degree(ids)
        assert np.diff(offsets).tolist() == degrees.tolist() and len(others) == len(weights) == offsets[-1]
        for i in np.random.default_rng(4).choice(len(ids), 300).tolist():
            want = method(int(ids[i]))
            assert others[offsets[i] : offsets[i + 1]].tolist() == [e[end] for e in want]
            np.testing.assert_allclose(weights[offsets[i] : offsets[i + 1]], [e[2] for e in want])


def test_array_inputs_of_other_kinds(graph, nx_graph):
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    ids = ids_of(nx_graph)
    want = graph.out_degree(ids).tolist()
    if np.abs(ids).max() < 2**31:
        assert graph.out_degree(ids.astype(np.int32)).tolist() == want
    assert graph.out_degree(ids[::-1][::-1].copy()).tolist() == want
    assert graph.out_degree(ids.reshape(1, -1)[0, ::1]).tolist() == want
    assert graph.out_degree(np.ascontiguousarray(np.stack([ids, ids])[:, 0])).tolist() == [want[0], want[0]]
    assert graph.out_degree(pd.Series(ids)).tolist() == want
    assert graph.out_degree(pa.array(ids)).tolist() == want
    assert graph.out_degree(ids.tolist()).tolist() == want
    assert graph.out_degree(np.int64(ids[0])) == want[0]


def test_upsert_and_remove(graph, nx_graph):
    u, v = sorted(nx_graph.nodes)[:2]
    before = graph.edges_between(u, v)
    result = graph.upsert_edges(np.array([u, 1000, 1000]), np.array([v, 1001, 1001]), weight=np.array([9.0, 1.0, 2.0]))
    # The second 1000 -> 1001 updates the edge the first one created.
    assert result == {"created": (0 if before else 1) + 1, "updated": (1 if before else 0) + 1, "nodes_created": 2}
    assert graph.has_edge(1000, 1001) and graph.out_degree(1000, weight=True) == (1, 2.0)
    between = graph.edges_between(u, v)
    assert min(r for r, _ in between) == min(r for r, _ in (before or between))
    assert dict(between)[min(r for r, _ in between)] == 9.0
    assert graph.neighbors(1000) == [1001] and graph.predecessors(1001) == [1000]
    removed = graph.remove_edges(np.array([1000, 5_000_000]), np.array([1001, 1]))
    assert removed == 1 and not graph.has_edge(1000, 1001) and graph.has_node(1000)
    assert graph.remove_edges([u], [v]) == len(between) and not graph.has_edge(u, v)
    # Batched lists over adjacency with removals match single calls.
    offsets, targets, _ = graph.out_edges(np.array([u, 1000]))
    assert split(offsets, targets) == [[b for _, b, _ in graph.out_edges(x)] for x in (u, 1000)]
    assert v not in targets.tolist()


def test_writes_through_the_id_tables_match_key_lookups(db, graph, nx_graph):
    graph.refresh()  # the id tables of this snapshot: writes then translate ids through them
    u, v = sorted(nx_graph.nodes)[:2]
    out = graph.upsert_edges(np.array([u, 2000, 2001]), np.array([2000, 2001, v]), weight=np.array([1.0, 2.0, 3.0]))
    assert out == {"created": 3, "updated": 0, "nodes_created": 2}
    # Another writer's node is not in the tables: the next write must find it by its key, not create it again.
    db.execute("CREATE (:Node {id: 3000})")
    out = graph.upsert_edges(np.array([3000]), np.array([2000]))
    assert out == {"created": 1, "updated": 0, "nodes_created": 0} and graph.has_edge(3000, 2000)
    assert graph.remove_edges(np.array([u, 2000, 3000, 2999]), np.array([2000, 2001, 2000, u])) == 3
    assert not graph.has_edge(u, 2000) and not graph.has_edge(3000, 2000) and graph.has_edge(2001, v)


def test_views_follow_other_writers(db, graph):
    db.execute("CREATE (:Node {id: 77777})-[:EDGE {weight: 2.5}]->(:Node {id: 88888})")
    assert graph.has_edge(77777, 88888) and graph.out_edges(77777) == [(77777, 88888, 2.5)]
    graph.refresh()
    assert graph.neighbors(np.array([77777]))[1].tolist() == [88888]


def test_a_bulk_load_keeps_the_indexes_and_constraints_declared_before_it():
    db = plexus.Database()
    db.execute("CREATE INDEX by_id FOR (n:Node) ON (n.id)")
    db.execute("CREATE CONSTRAINT one_weight FOR ()-[r:EDGE]-() REQUIRE r.weight IS UNIQUE")
    assert db.import_edges(np.array([1, 2]), np.array([2, 3]), weight=np.array([0.5, 1.5]))["bulk"]
    names = sorted(row["name"] for row in db.execute("SHOW INDEXES YIELD name"))
    # The load's own unique key on the vertices' key is there too.
    assert names == ["by_id", "constraint_Node_id", "one_weight"]
    with pytest.raises(plexus.QueryError, match="EDGE"):
        db.execute("MATCH (a:Node {id: 1}), (b:Node {id: 3}) CREATE (a)-[:EDGE {weight: 0.5}]->(b)")


def test_a_view_follows_a_clear_and_a_bulk_reload():
    # The reload installs a whole new graph into the emptied database: the view's tables of the empty graph must
    # not stand for it, and new nodes must not take the ids of the loaded ones.
    db = plexus.Database()
    db.import_edges(np.array([1, 2]), np.array([2, 3]))
    view = db.graph()
    assert sorted(view.nodes().tolist()) == [1, 2, 3]
    db.execute("MATCH (n) DETACH DELETE n")
    assert view.nodes().tolist() == []
    assert db.import_edges(np.array([10, 20]), np.array([20, 30]))["bulk"]
    assert sorted(view.nodes().tolist()) == [10, 20, 30]
    assert view.out_edges(10) == [(10, 20, None)] and view.number_of_edges() == 2
    assert view.upsert_edges([10], [20], weight=[5.0]) == {"created": 0, "updated": 1, "nodes_created": 0}
    db.execute("CREATE (:Other)")
    assert db.execute("MATCH (n) RETURN count(n)").scalar() == 4


def test_weights_follow_writes_after_the_weight_column_is_built(db, graph, nx_graph):
    single = [(u, v) for u, v in nx_graph.edges() if u != v and nx_graph.number_of_edges(u, v) == 1]
    u, v = max(single, key=lambda e: nx_graph.out_degree(e[0]))
    graph.refresh()  # the id tables and the weight column for this snapshot
    ids = np.array([u], dtype=np.int64)
    _, targets, weights = graph.out_edges(ids)
    assert dict(zip(targets.tolist(), weights.tolist()))[v] == pytest.approx(nx_graph[u][v][0]["weight"])
    graph.upsert_edges(np.array([u]), np.array([v]), weight=np.array([123.5]))
    db.execute("MATCH (:Node {id: $u})-[r:EDGE]->(:Node {id: $v}) SET r.weight = r.weight + 1", {"u": u, "v": v})
    others = sum(w for _, x, w in nx_graph.out_edges(u, data="weight") if x != v)
    for _ in range(2):  # answered from storage while the column is stale, then from a rebuilt column
        _, targets, weights = graph.out_edges(ids)
        assert dict(zip(targets.tolist(), weights.tolist()))[v] == 124.5
        count, total = graph.out_degree(ids, weight=True)
        assert count.tolist() == [nx_graph.out_degree(u)] and total[0] == pytest.approx(others + 124.5)
        assert graph.edges_between(ids, np.array([v]))[2].tolist() == [124.5]
        # Single calls read the same column (or storage, while it is stale).
        assert dict(((b, w) for _, b, w in graph.out_edges(u)))[v] == 124.5
        assert graph.out_degree(u, weight=True) == pytest.approx((nx_graph.out_degree(u), others + 124.5))
        assert [w for _, w in graph.edges_between(u, v)] == [124.5]
        graph.refresh()


def test_typed_views(db):
    db.execute("CREATE (a:Node {id: 1})-[:A]->(b:Node {id: 2}), (a)-[:B {weight: 3}]->(b), (b)-[:B]->(a)")
    a, b, every = db.graph(type="A"), db.graph(type="B"), db.graph()
    assert a.out_degree(1) == 1 and b.out_degree(1) == 1 and every.out_degree(1) == 2
    assert b.degree(1, weight=True) == (2, 3.0) and a.has_edge(1, 2) and not a.has_edge(2, 1)
    assert db.graph(type="Missing").out_degree(1) == 0 and db.graph(label="Other").has_node(1) is False
    assert every.number_of_nodes() == 2 and every.number_of_edges() == 3 and b.number_of_edges() == 2
    assert sorted(every.nodes().tolist()) == [1, 2]


def test_import_edges_from_pandas_and_arrow(edges, nx_graph):
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    src, dst, weight = edges
    frame = pd.DataFrame({"s": src, "d": dst, "w": weight})
    with plexus.Database() as a, plexus.Database() as b:
        a.import_edges(frame["s"], frame["d"], weight=frame["w"], type="LINK")
        b.import_edges(pa.array(src), pa.chunked_array([dst[:100], dst[100:]]), weight=pa.array(weight))
        ga, gb = a.graph(type="LINK"), b.graph()
        ids = ids_of(nx_graph)
        np.testing.assert_array_equal(ga.degree(ids), gb.degree(ids))
        np.testing.assert_allclose(ga.out_degree(ids, weight=True)[1], gb.out_degree(ids, weight=True)[1])


def test_import_into_a_non_empty_database_uses_a_transaction(db, edges, nx_graph):
    src, dst, weight = edges
    db.execute("CREATE (:Node {id: $id})", {"id": int(src[0])})
    info = db.import_edges(src, dst, weight=weight)
    assert info["bulk"] is False and info["nodes_created"] == nx_graph.number_of_nodes() - 1
    g = db.graph()
    assert g.out_degree(int(src[0])) == nx_graph.out_degree(int(src[0]))
    # A second load adds to the first.
    db.import_edges(src[:10], dst[:10])
    assert g.number_of_edges() == len(src) + 10


def test_bulk_load_on_disk_is_durable(tmp_path, edges, nx_graph):
    src, dst, weight = edges
    with plexus.Database(tmp_path / "db") as db:
        assert db.import_edges(src, dst, weight=weight)["bulk"]
        db.execute("CREATE (:Node {id: -1})-[:EDGE]->(:Node {id: -2})")
    with plexus.Database(tmp_path / "db") as db:
        g = db.graph()
        ids = ids_of(nx_graph)
        assert g.out_degree(ids).tolist() == [nx_graph.out_degree(u) if u in nx_graph else 0 for u in ids.tolist()]
        assert g.has_edge(-1, -2) and db.counts() == {
            "nodes": nx_graph.number_of_nodes() + 2,
            "relationships": len(src) + 1,
        }


def test_import_csv_matches_import_edges(tmp_path, edges, nx_graph):
    src, dst, weight = edges
    path = tmp_path / "edges.csv"
    path.write_text("source,target,weight\n" + "".join(f"{s},{d},{w}\n" for s, d, w in zip(src, dst, weight)))
    with plexus.Database() as db:
        info = db.import_csv(edges=path)
        assert info["relationships_created"] == len(src) and info["bulk"]
        g = db.graph()
        for u in sorted(nx_graph.nodes)[:20]:
            assert g.out_degree(u, weight=True)[1] == pytest.approx(nx_graph.out_degree(u, weight="weight"))
    with plexus.Database() as db:
        db.import_csv(edges=[str(path)], undirected=True)
        u = sorted(nx_graph.nodes)[0]
        assert db.graph().out_degree(u) == nx_graph.degree(u) - nx_graph.number_of_edges(u, u)


def test_import_csv_numbers_nodes_and_relationships_as_import_edges(tmp_path, edges):
    # One edge file keeps the parser's columns and renumbers them in place; the nodes and relationships must
    # come out exactly as from the arrays, ids included, for dense, ranked and scattered vertex ids.
    src, dst, weight = edges
    path = tmp_path / "edges.csv"
    path.write_text("".join(f"{s},{d},{w}\n" for s, d, w in zip(src, dst, weight)))
    everything = "MATCH (a)-[r]->(b) RETURN id(a), a.id, id(r), r.weight, id(b), b.id ORDER BY id(r)"
    nodes = "MATCH (n) RETURN id(n), n.id ORDER BY id(n)"
    with plexus.Database() as from_arrays, plexus.Database() as from_file:
        from_arrays.import_edges(src, dst, weight=weight)
        from_file.import_csv(edges=path)
        for query in (everything, nodes):
            assert from_file.execute(query).tuples() == from_arrays.execute(query).tuples()


def test_import_csv_numbers_string_ids_by_first_appearance(tmp_path):
    # One file keeps the parser's numbering: first appearance, each edge's source before its target, across
    # the parser's chunks (a list long enough to be parsed in several).
    rng = np.random.default_rng(11)
    names = [f"v{k:05d}-é" for k in rng.permutation(30_000)]
    pairs = [(names[a], names[b]) for a, b in rng.integers(0, len(names), (120_000, 2))]
    path = tmp_path / "named.csv"
    path.write_text("".join(f"{s}\t{d}\t{k}\n" for k, (s, d) in enumerate(pairs)), encoding="utf-8")
    order = list(dict.fromkeys(v for pair in pairs for v in pair))
    with plexus.Database() as db:
        info = db.import_csv(edges=path)
        assert info["bulk"] and info["relationships_created"] == len(pairs)
        nodes = db.execute("MATCH (n) RETURN id(n), n.id ORDER BY id(n)").tuples()
        assert [key for _, key in nodes] == order
        by_node = dict(nodes)
        rels = db.execute("MATCH (a)-[r]->(b) RETURN id(a), id(b), r.weight").tuples()
        assert sorted((by_node[a], by_node[b], w) for a, b, w in rels) == sorted(
            (s, d, float(k)) for k, (s, d) in enumerate(pairs)
        )


def test_import_csv_nodes_and_relationships(tmp_path):
    people = tmp_path / "people.csv"
    people.write_text("id:ID(Person),name,born:date\n1,Ann,1990-01-02\n2,Bob,1985-03-04\n")
    knows = tmp_path / "knows.csv"
    knows.write_text(":START_ID(Person),:END_ID(Person),since:int\n1,2,2010\n")
    with plexus.Database() as db:
        info = db.import_csv(nodes={"Person": people}, relationships={"KNOWS": [knows]})
        assert info["nodes_created"] == 2 and info["relationships_created"] == 1
        row = db.execute("MATCH (a:Person)-[k:KNOWS]->(b) RETURN a.name, b.name, k.since, b.born").tuples()[0]
        assert row[:3] == ("Ann", "Bob", 2010) and str(row[3]) == "1985-03-04"
        # Again: existing people are matched by their unique key, not duplicated.
        info = db.import_csv(nodes={"Person": people})
        assert info["nodes_matched"] == 2 and db.execute("MATCH (p:Person) RETURN count(p)").scalar() == 2


def test_views_of_ids_created_out_of_order(db):
    # Nodes created in descending id order: node ids do not follow the external ids, so a view of ids too sparse
    # for a flat table maps ranks to nodes through a table of its own.
    rng = np.random.default_rng(11)
    ids = np.sort(rng.choice(600 * 11, 600, replace=False) + 10**9)[::-1].astype(np.int64)
    db.execute("UNWIND $ids AS i CREATE (:Node {id: i})", {"ids": ids.tolist()})
    src, dst = ids[rng.integers(0, 600, 3000)], ids[rng.integers(0, 600, 3000)]
    db.import_edges(src, dst, weight=rng.random(3000))
    want = nx.MultiDiGraph()
    want.add_nodes_from(ids.tolist())
    want.add_edges_from(zip(src.tolist(), dst.tolist()))
    graph = db.graph()
    graph.refresh()
    gaps = np.setdiff1d(np.arange(ids.min() - 3, ids.max() + 3), ids)[:200]
    queries = np.concatenate([ids, gaps])
    assert graph.has_node(queries).tolist() == [int(u) in want for u in queries]
    assert graph.out_degree(queries).tolist() == [want.out_degree(int(u)) if int(u) in want else 0 for u in queries]
    offsets, values = graph.neighbors(ids, direction="both")
    both = [sorted(set(want.successors(u)) | set(want.predecessors(u))) for u in ids.tolist()]
    assert split(offsets, values) == both
    assert [graph.neighbors(int(u), direction="both") for u in ids[:50]] == both[:50]
    # Nodes the view's own writes create are found before the tables are rebuilt.
    graph.upsert_edges(np.array([ids[0], 10**9 + 7 * 11 * 600]), np.array([10**9 + 7 * 11 * 600, ids[1]]))
    assert graph.has_edge(int(ids[0]), 10**9 + 7 * 11 * 600) and graph.has_edge(10**9 + 7 * 11 * 600, int(ids[1]))


@pytest.mark.parametrize("start", ["bulk", "created"])
def test_ids_created_by_the_view_keep_answers_right_as_its_tables_change_form(db, start):
    # Consecutive ids map to node ids by an addition; a new id next in line keeps that, a gap turns it into a
    # table of offsets, and an id more than 2**32 away into a table of full ids. Each step is checked, on ids
    # around the edges of each form. Nodes created one by one take the next node ids, so the view's own new
    # nodes can extend the addition; a bulk load leaves its last leaf's slots empty, so they cannot.
    rng = np.random.default_rng(5)
    ids = np.arange(200, dtype=np.int64) + 50
    src, dst = ids[rng.integers(0, 200, 1500)], ids[rng.integers(0, 200, 1500)]
    weight = rng.random(1500).round(3)
    if start == "created":
        db.execute("UNWIND $ids AS i CREATE (:Node {id: i})", {"ids": ids.tolist()})
    db.import_edges(src, dst, weight=weight)
    want = nx.MultiDiGraph()
    for s, d, w in zip(src.tolist(), dst.tolist(), weight.tolist()):
        want.add_edge(s, d, weight=w)
    graph = db.graph()
    graph.refresh()
    edges = [
        (250, 60, 0.5),
        (251, 250, 0.25),
        (1300, 251, 0.125),
        (-5, 1300, 0.75),  # below the offsets' base: full ids from here on
        (2**40, 1300, 2.0),
        (-(2**62), 2**40, 4.0),
    ]
    for step in range(len(edges) + 1):
        nodes = np.array(sorted(want.nodes), dtype=np.int64)
        probes = np.array([-5, 49, 50, 249, 250, 251, 252, 1299, 1300, 2**40, -(2**62), -(2**63) + 1, 2**63 - 1])
        queries = np.concatenate([nodes, probes])
        assert graph.has_node(queries).tolist() == [int(u) in want for u in queries], step
        for direction, of in (("out", want.out_edges), ("in", want.in_edges)):
            offsets, others, weights = getattr(graph, f"{direction}_edges")(queries)
            got = [sorted(zip(o, w)) for o, w in zip(split(offsets, others), split(offsets, weights))]
            end = 1 if direction == "out" else 0
            expected = [
                sorted((e[end], e[2]["weight"]) for e in of(int(u), data=True)) if int(u) in want else []
                for u in queries
            ]
            assert got == expected, (step, direction)
        offsets, values = graph.neighbors(queries, direction="both")
        both = [
            sorted(set(want.successors(u)) | set(want.predecessors(u))) if u in want else [] for u in queries.tolist()
        ]
        assert split(offsets, values) == both, step
        assert [graph.neighbors(int(u), direction="both") for u in probes] == both[len(nodes) :], step
        if step < len(edges):
            s, d, w = edges[step]
            graph.upsert_edges(np.array([s]), np.array([d]), np.array([w]))
            want.add_edge(s, d, weight=w)


def test_neighbours_of_self_loops_and_parallel_edges(db):
    # Node 5 has two self-loops and nothing else, 6 one; 7 and 8 are joined both ways and 7 loops too. A node's
    # runs then hold a neighbour more often than its degree counts it.
    src, dst = np.array([5, 5, 6, 7, 7, 8, 7]), np.array([5, 5, 6, 8, 7, 7, 8])
    db.import_edges(src, dst)
    graph = db.graph()
    graph.refresh()
    ids = np.array([5, 6, 7, 8, 9])
    want = {
        "out": [[5], [6], [7, 8], [7], []],
        "in": [[5], [6], [7, 8], [7], []],
        "both": [[5], [6], [7, 8], [7], []],
    }
    for direction, lists in want.items():
        offsets, values = graph.neighbors(ids, direction=direction)
        assert split(offsets, values) == lists
        assert [graph.neighbors(int(u), direction=direction) for u in ids[:4]] == lists[:4]
    # A node the view creates with an id below the others: every list stays sorted by id.
    graph.upsert_edges(np.array([1]), np.array([7]))
    assert graph.neighbors(7, direction="both") == [1, 7, 8]
    assert split(*graph.neighbors(np.array([1, 5, 7]), direction="both")) == [[7], [5], [1, 7, 8]]


def test_far_apart_ids_do_not_grow_the_view_without_bound(db):
    def rss_mib():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096 >> 20

    db.import_edges(list(range(10)), list(range(1, 11)))
    g = db.graph()
    g.refresh()
    before = rss_mib()
    x = 10
    for _ in range(16):
        # Each id about twice the last: a flat table judged by its own length doubled every time.
        x = 2 * (x + 1) + 4000
        g.upsert_edges([x], [x])
    assert g.number_of_nodes() == 11 + 16
    assert g.has_edge(x, x)
    assert rss_mib() - before < 200


def test_a_node_without_an_integer_id_does_not_change_answers_over_time(db):
    import numpy as np

    db.import_edges(np.arange(2000), np.arange(1, 2001))
    db.execute("CREATE (:Node {id: 'x'})")
    g = db.graph()
    # The first calls answer by the unique key, later ones from tables built for the view: the same answers.
    answers = {g.out_degree(5) for _ in range(1000)}
    assert answers == {1}


def test_a_key_no_node_has_finds_nothing(db):
    db.import_edges([1, 2], [2, 3])
    g = db.graph(key="ext")
    assert not g.has_node(1)
    db.execute("CREATE (:Other {ext: 5})")
    assert not db.graph(key="ext").has_node(1)


def test_neighbours_outside_the_view_are_none_or_no_id_and_never_a_real_id(db):
    import numpy as np

    # A real node with id -1, a neighbour with a string key and one without the view's label.
    db.execute(
        "CREATE (a:Node {id: 1})-[:EDGE]->(:Node {id: -1}), (a)-[:EDGE]->(:Node {id: 'x'}), (a)-[:EDGE]->(:Other)"
    )
    g = db.graph()
    # Distinct neighbours by id: the two without one are one None.
    assert sorted(g.successors(1), key=lambda v: (v is not None, v)) == [None, -1]
    assert sorted((v for _, v, _ in g.out_edges(1)), key=lambda v: (v is not None, v)) == [None, None, -1]
    offsets, values = g.neighbors(np.array([1]))
    assert sorted(values.tolist()) == [plexus.NO_ID, -1]
    offsets, targets, weights = g.out_edges(np.array([1]))
    assert sorted(targets.tolist()) == [plexus.NO_ID, plexus.NO_ID, -1]
    assert plexus.NO_ID == -(2**63) and not g.has_node(plexus.NO_ID)
    assert sorted(g.nodes().tolist()) == [-1, 1]
    with pytest.raises(plexus.ArgumentError, match="reserved"):
        g.upsert_edges([plexus.NO_ID], [1])
    # A node whose key is the reserved id is outside the view.
    db.execute("CREATE (:Node {id: -9223372036854775808})-[:EDGE]->(:Node {id: 7})")
    assert db.graph().predecessors(7) == [None]


def test_edge_files_without_weights_among_weighted_ones_get_no_weight(tmp_path):
    (tmp_path / "w.csv").write_text("1,2,0.5\n")
    (tmp_path / "nw.csv").write_text("3,4\n")
    db = plexus.Database()
    db.import_csv(edges=[str(tmp_path / "w.csv"), str(tmp_path / "nw.csv")])
    rows = db.execute("MATCH (a)-[r]->(b) RETURN a.id, b.id, r.weight, keys(r) ORDER BY a.id").tuples()
    assert rows == [(1, 2, 0.5, ["weight"]), (3, 4, None, [])]
    assert db.execute("MATCH ()-[r]->() RETURN sum(r.weight)").scalar() == 0.5


def test_the_reserved_vertex_id_is_refused():
    db = plexus.Database()
    with pytest.raises((ValueError, plexus.Error), match="reserved"):
        db.import_edges([-(2**63)], [5])
    assert db.execute("MATCH (n) RETURN count(n)").scalar() == 0


def test_a_view_counts_only_the_edges_out_of_its_own_nodes():
    db = plexus.Database()
    db.import_edges([1, 2], [2, 3])
    db.execute("CREATE (:Person)-[:KNOWS]->(:Person), (:Person)-[:EDGE]->(:Person)")
    g = db.graph()
    assert g.number_of_edges() == int(g.out_degree(g.nodes()).sum()) == 2
    typed = db.graph(type="EDGE")
    assert typed.number_of_edges() == int(typed.out_degree(typed.nodes()).sum()) == 2


def test_weights_of_edges_between_nodes_made_after_a_bulk_load(tmp_path):
    # New edges between new nodes leave every bulk-loaded node unchanged: their weights are in their own records,
    # not in the arrays the load made, also after reopening.
    path = str(tmp_path / "db")
    with plexus.Database(path) as db:
        db.import_edges(np.arange(1000), (np.arange(1000) + 1) % 1000, weight=np.full(1000, 0.5))
        db.graph().upsert_edges([5000], [5001], weight=[7.0])
        db.execute("CREATE (:Node {id: 6000})-[:EDGE {weight: 9.0}]->(:Node {id: 6001})")
    with plexus.Database(path) as db:
        g = db.graph()
        g.refresh()
        assert g.out_edges(5000) == [(5000, 5001, 7.0)] and g.in_degree(5001, weight=True) == (1, 7.0)
        assert g.out_edges(6000) == [(6000, 6001, 9.0)]
        _, _, weights = g.out_edges(np.array([5000, 6000, 0]))
        assert weights.tolist() == [7.0, 9.0, 0.5]
    db = plexus.Database()
    db.import_edges(np.array([1, 2]), np.array([2, 3]), weight=np.array([1.0, 1.0]))
    g = db.graph()
    g.upsert_edges([10], [11], weight=[5.0])
    assert g.out_edges(10) == [(10, 11, 5.0)] and g.degree(10, weight=True) == (1, 5.0)


def test_ids_at_the_top_of_int64_and_keys_stored_as_floats(db):
    db.import_edges(np.array([2**63 - 2]), np.array([2**63 - 1]))
    g = db.graph()
    g.refresh()
    assert g.upsert_edges([1], [2]) == {"created": 1, "updated": 0, "nodes_created": 2}
    # A node keyed 5.0 is not the view's node 5, whether or not the view's tables are current.
    db.execute("CREATE (:Node {id: 5.0})")
    for refresh in [False, True]:
        view = db.graph()
        if refresh:
            view.refresh()
        with pytest.raises(plexus.Error):
            view.upsert_edges([5], [1])
        assert not view.has_node(5)


def test_nan_weights_are_no_weight_when_upserted(db):
    g = db.graph()
    g.upsert_edges([1, 2], [2, 3], weight=[np.nan, 2.0])
    assert db.execute("MATCH ()-[r]->() RETURN count(r.weight) AS n, sum(r.weight) AS s").tuples() == [(1, 2.0)]


def test_import_csv_reports_skipped_edge_lines_and_keeps_integer_ids(tmp_path):
    db = plexus.Database()
    db.execute("CREATE (:Node {id: 1}), (:Node {id: 2}), (:Node {id: 3})")
    path = tmp_path / "e.csv"
    path.write_text("1,2,0.5\n2,3,1.5\n3,x,1.0,extra\n3,1,2.5\n")
    result = db.import_csv(edges=str(path), skip_bad_lines=1)
    assert result["bad_lines_skipped"] == 1 and result["nodes_created"] == 0 and result["relationships_created"] == 3
    assert db.execute("MATCH (n:Node) RETURN collect(n.id) AS ids").scalar() == [1, 2, 3]


def test_counts_take_only_the_view_s_nodes(db):
    db.execute("CREATE (:Node {id: 1})-[:EDGE]->(:Node {id: 2}), (:Node {id: 'x'})-[:EDGE]->(:Node)")
    g = db.graph()
    assert sorted(g.nodes().tolist()) == [1, 2]
    assert g.number_of_nodes() == 2 and g.number_of_edges() == 1


def test_a_single_id_that_is_no_integer_is_named(db):
    g = db.graph()
    for bad in [1.0, "1", None]:
        with pytest.raises(plexus.ArgumentError, match="an integer id or a one-dimensional array"):
            g.has_edge(bad, 2)
    # A bool is an int to Python, but True is no id.
    with pytest.raises(plexus.ArgumentError, match="an integer id or an array"):
        g.has_edge(True, 2)


@pytest.mark.parametrize("call", ["upsert_edges", "remove_edges"])
def test_close_stops_a_large_graph_write_before_it_commits(tmp_path, call):
    # A large upsert or removal checks between chunks whether its database is closing: close() does not wait
    # for all of it, and it rolls back (nothing of it is in the database afterwards).
    path = tmp_path / "db"
    n = 2_000_000
    src, dst = np.arange(n, dtype=np.int64), np.arange(n, dtype=np.int64) + 1
    if call == "remove_edges":
        with plexus.Database(path) as db:
            db.import_edges(src, dst)
    db = plexus.Database(path)
    graph = db.graph()
    outcome = []

    def write():
        try:
            outcome.append(getattr(graph, call)(src, dst))
        except plexus.Error as e:
            outcome.append(e)

    thread = threading.Thread(target=write)
    thread.start()
    time.sleep(0.5)
    started = time.monotonic()
    db.close()
    waited = time.monotonic() - started
    thread.join()
    # Two million edges in one transaction take many seconds: close() came long before the end.
    assert isinstance(outcome[0], plexus.Error), outcome
    assert waited < 3, waited
    with plexus.Database(path) as again:
        edges = again.execute("MATCH ()-[r]->() RETURN count(r)").scalar()
    assert edges == (n if call == "remove_edges" else 0)


def test_a_taken_unique_key_in_a_graph_write_is_the_query_error_cypher_raises():
    db = plexus.Database()
    db.execute("CREATE (:Node {id: 3.0})")
    with pytest.raises(plexus.QueryError) as e:
        db.graph().upsert_edges([3], [1])
    assert e.value.code == "ConstraintValidationFailed", e.value
    with pytest.raises(plexus.QueryError) as again:
        db.execute("CREATE (:Node {id: 3})")
    assert again.value.code == e.value.code



def test_a_view_over_a_key_two_nodes_share_is_refused(db):
    # Without a unique constraint two nodes may share an id: a view would answer for one and drop the other's
    # edges without a word.
    db.execute("CREATE (a:U {k: 1}), (b:U {k: 1}), (c:U {k: 2}), (d:U {k: 3}), (a)-[:EDGE]->(c), (b)-[:EDGE]->(d)")
    with pytest.raises(plexus.ArgumentError, match="one node per id.*both have the id 1"):
        db.graph(label="U", key="k").out_edges(1)
    db.execute("MATCH (b:U {k: 1})-[:EDGE]->(:U {k: 3}) SET b.k = 4")
    offsets, targets, _ = db.graph(label="U", key="k").out_edges(np.array([1, 4]))
    assert split(offsets, targets) == [[2], [3]]


def test_batch_writes_take_single_values_for_every_row(db):
    g = db.graph()
    assert g.upsert_edges(7, [8, 9], weight=2.0) == {"created": 2, "updated": 0, "nodes_created": 3}
    assert sorted(g.out_edges(7)) == [(7, 8, 2.0), (7, 9, 2.0)]
    assert g.upsert_edges([7, 8], 9, weight=[1.0, 3.0])["created"] == 1
    assert g.remove_edges(7, [8, 9]) == 2
    with pytest.raises(plexus.ArgumentError, match="weight has 3 elements but src has 2|src has 2 elements"):
        g.upsert_edges([1, 2], 3, weight=[1.0, 2.0, 3.0])
    with pytest.raises(plexus.ArgumentError, match="weight must be a number or a one-dimensional array"):
        g.upsert_edges([1], [2], weight="heavy")


def test_degree_weight_takes_a_bool_and_says_so(db):
    g = db.graph()
    g.upsert_edges([1], [2], weight=[0.5])
    assert g.degree(1, weight=True) == (1, 0.5)
    with pytest.raises(plexus.ArgumentError, match="weight takes True or False here.*property 'weight'"):
        g.degree(1, weight="weight")


def test_empty_names_are_refused(db):
    with pytest.raises(plexus.ArgumentError, match="type must not be empty"):
        db.import_edges([1], [2], type="")
    with pytest.raises(plexus.ArgumentError, match="label must not be empty"):
        db.graph(label="")


def test_concurrent_batch_writes_run_again_after_a_conflict(db):
    g = db.graph()
    g.upsert_edges([0], [1])
    errors = []

    def writer(seed):
        rng = np.random.default_rng(seed)
        for _ in range(10):
            src = rng.integers(0, 20, 200)
            try:
                g.upsert_edges(src, (src + 1) % 20, weight=rng.random(200))
                g.remove_edges(src[:50], (src[:50] + 1) % 20)
            except plexus.Error as e:  # pragma: no cover - the failure the test looks for
                errors.append(e)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    count = db.execute("MATCH (:Node)-[r:EDGE]->(:Node) RETURN count(r) AS c").scalar()
    assert count == g.number_of_edges() <= 20
