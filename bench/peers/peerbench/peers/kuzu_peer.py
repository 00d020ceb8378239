"""Kuzu and LadybugDB (the continuation of Kuzu, PyPI `ladybug`) as peers: embedded property-graph stores queried
in Cypher through their Python bindings.

What it owns: one database file `<work>/graph.db` (and its `.wal`) per store, opened with the defaults (buffer pool
sized by the library, WAL with automatic checkpoints, every committed transaction in the WAL before it returns), so
`durable` is true. The two packages bundle conflicting native extensions, so a process imports only the one it
runs (imports happen in the constructor, never at module level).

Schema: node table `V(id INT64 PRIMARY KEY)` (a hash index on the id) and rel table `E(FROM V TO V, weight
DOUBLE)`, which both engines store as forward and backward adjacency lists.

Paths (chosen by measuring on the quick graphs and on a 0.8M-edge patents graph, since they scale differently):
- Import: `COPY V FROM (LOAD FROM csv ... RETURN DISTINCT id)` builds the node table from the distinct ends
  inside the engine, then `COPY E FROM csv`.
- Reads: one `UNWIND $batch` statement per chunk of queries (the engines plan it as hash joins over the adjacency
  lists, one pass per chunk). One prepared statement per query was slower in both: Kuzu 0.11 never uses its
  primary-key index for a `$parameter` and joins with a scan of the node table to fetch a neighbour's id
  (milliseconds a query, tens of times slower); LadybugDB looks parameters up in the index but still pays about
  a millisecond a query (two to ten times slower on the quick graph, no faster on the larger one).
- Kuzu's point writes put integer/float literals in the statement text, which its planner does look up in the
  primary-key index (no injection risk: they are formatted numbers); LadybugDB's take `$parameters`, and its batch
  writes are `UNWIND` statements with primary-key lookups.
- Reads fetch every edge or neighbour to Python and sum there; the degree queries aggregate per query vertex in the
  engine (`count`, `sum`).
- Upsert is `SET` on the matched edge, then `CREATE` for the pairs that matched nothing, in one explicit transaction
  (an `UNWIND ... MERGE` took minutes per thousand edges in both; for
  single edges `MERGE` was no faster). Batch 1 is one committed transaction per edge.
- Likes: node tables `Person` and `Item` and rel table `Likes`; the recommendation is one Cypher statement.
- Commits: each thread its own `Connection` on the shared `Database`; one auto-committed `CREATE` statement per
  transaction (one `fdatasync` of the WAL each, checked with strace). Kuzu refuses a second concurrent write
  transaction ("Only one write transaction at a time"), so it runs one committer; LadybugDB's commit store is
  opened with its documented `enable_multi_writes=True`, which admits concurrent write transactions.
"""

from __future__ import annotations

import importlib
import os
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from ..peer import Peer, chunks

#: Queries per `UNWIND` statement on the read paths (each statement makes one pass over the adjacency lists).
UNWIND_CHUNK = 5000
#: Edges per `UNWIND` write statement (within a caller's batch).
WRITE_CHUNK = 1000


def _q(x: float) -> str:
    """A float as an exact Cypher literal."""
    return repr(float(x))


class _CypherGraphPeer(Peer):
    module_name = ""
    python = "py312"
    durable = True
    concurrent_writers = True
    #: Whether `$parameters` use the primary-key index (point writes and the recommendation then take them).
    param_index = False

    def __init__(self) -> None:
        try:
            self.lib = importlib.import_module(self.module_name)
        except ImportError as e:
            raise ImportError(f"the `{self.module_name}` package is not installed in this interpreter: {e}") from e
        self.db: Any = None
        self.conn: Any = None

    def version(self) -> str:
        return str(self.lib.__version__)

    # ---- lifecycle -----------------------------------------------------------------------------------------
    def _open(self, directory: str, **options: Any) -> None:
        self.close()
        self.db = self.lib.Database(os.path.join(directory, "graph.db"), **options)
        self.conn = self.lib.Connection(self.db)

    def open(self, directory: str) -> None:
        self._open(directory)

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None
        if self.db is not None:
            self.db.close()
            self.db = None

    def _all(self, query: str, params: Optional[Dict[str, Any]] = None) -> List[list]:
        result = self.conn.execute(query, params) if params else self.conn.execute(query)
        rows = result.get_all()
        result.close()
        return rows

    def _one(self, query: str, params: Optional[Dict[str, Any]] = None) -> list:
        rows = self._all(query, params)
        return rows[0]

    # ---- workload 1: import -------------------------------------------------------------------------------
    def import_edges(self, csv_path: str) -> None:
        path = csv_path.replace('"', '\\"')
        self.conn.execute("CREATE NODE TABLE V(id INT64 PRIMARY KEY)")
        self.conn.execute("CREATE REL TABLE E(FROM V TO V, weight DOUBLE)")
        self.conn.execute(
            f'COPY V FROM (LOAD FROM "{path}" (header=false) WITH column0 AS a, column1 AS b '
            f"UNWIND [a, b] AS id RETURN DISTINCT id)")
        self.conn.execute(f'COPY E FROM "{path}" (header=false)')

    # ---- workload 2: random reads -------------------------------------------------------------------------
    def _unwind(self, query: str, rows: List[Dict[str, Any]]) -> List[list]:
        out: List[list] = []
        for part in chunks(len(rows), UNWIND_CHUNK):
            out.extend(self._all(query, {"q": rows[part]}))
        return out

    def find_edges(self, src: np.ndarray, dst: np.ndarray) -> int:
        rows = self._unwind(
            "UNWIND $q AS q WITH CAST(q.s AS INT64) AS s, CAST(q.d AS INT64) AS d "
            "MATCH (a:V {id: s})-[e:E]->(b:V {id: d}) RETURN count(e)",
            [{"s": s, "d": d} for s, d in zip(src.tolist(), dst.tolist())])
        return sum(r[0] for r in rows)

    def _adjacent(self, v: np.ndarray, arrow: str) -> Tuple[int, int, float]:
        rows = self._unwind(
            f"UNWIND $q AS q WITH CAST(q.v AS INT64) AS x MATCH (a:V {{id: x}}){arrow}(b:V) RETURN b.id, e.weight",
            [{"v": x} for x in v.tolist()])
        return len(rows), sum(r[0] for r in rows), float(sum(r[1] for r in rows))

    def out_edges(self, v: np.ndarray) -> Tuple[int, int, float]:
        return self._adjacent(v, "-[e:E]->")

    def in_edges(self, v: np.ndarray) -> Tuple[int, int, float]:
        return self._adjacent(v, "<-[e:E]-")

    def unique_neighbours(self, v: np.ndarray) -> Tuple[int, int]:
        # The query's position keeps a vertex queried twice counted twice.
        rows = self._unwind(
            "UNWIND $q AS q WITH CAST(q.i AS INT64) AS i, CAST(q.v AS INT64) AS x "
            "MATCH (a:V {id: x})-[:E]-(b:V) RETURN DISTINCT i, b.id",
            [{"i": i, "v": x} for i, x in enumerate(v.tolist())])
        return len(rows), sum(r[1] for r in rows)

    def _degree(self, v: np.ndarray, arrow: str) -> Tuple[int, float]:
        rows = self._unwind(
            f"UNWIND $q AS q WITH CAST(q.i AS INT64) AS i, CAST(q.v AS INT64) AS x "
            f"MATCH (a:V {{id: x}}){arrow}() RETURN i, count(e), sum(e.weight)",
            [{"i": i, "v": x} for i, x in enumerate(v.tolist())])
        return sum(r[1] for r in rows), float(sum(r[2] for r in rows if r[2] is not None))

    def out_degree_weight(self, v: np.ndarray) -> Tuple[int, float]:
        return self._degree(v, "-[e:E]->")

    def in_degree_weight(self, v: np.ndarray) -> Tuple[int, float]:
        return self._degree(v, "<-[e:E]-")

    # ---- workload 2: random writes ------------------------------------------------------------------------
    def _upsert_one(self, s: int, d: int, w: float) -> None:
        raise NotImplementedError

    def _upsert_many(self, rows: List[Dict[str, Any]]) -> None:
        raise NotImplementedError

    def _remove_one(self, s: int, d: int) -> None:
        raise NotImplementedError

    def _remove_many(self, rows: List[Dict[str, Any]]) -> None:
        self.conn.execute("UNWIND $q AS q MATCH (a:V {id: q.s})-[e:E]->(b:V {id: q.d}) DELETE e", {"q": rows})

    def _transaction(self, body) -> None:
        self.conn.execute("BEGIN TRANSACTION")
        try:
            body()
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def upsert_edges(self, src: np.ndarray, dst: np.ndarray, weight: np.ndarray, batch: int) -> None:
        s, d, w = src.tolist(), dst.tolist(), weight.tolist()
        if batch == 1:
            for a, b, c in zip(s, d, w):
                self._transaction(lambda: self._upsert_one(a, b, c))
            return
        for part in chunks(len(s), batch):
            rows = [{"s": a, "d": b, "w": c} for a, b, c in zip(s[part], d[part], w[part])]
            self._transaction(lambda: [self._upsert_many(rows[p]) for p in chunks(len(rows), WRITE_CHUNK)])

    def remove_edges(self, src: np.ndarray, dst: np.ndarray, batch: int) -> None:
        s, d = src.tolist(), dst.tolist()
        if batch == 1:
            for a, b in zip(s, d):
                self._remove_one(a, b)  # one statement: its own auto-committed transaction
            return
        for part in chunks(len(s), batch):
            rows = [{"s": a, "d": b} for a, b in zip(s[part], d[part])]
            self._transaction(lambda: [self._remove_many(rows[p]) for p in chunks(len(rows), WRITE_CHUNK)])

    def edge_count(self) -> int:
        return self._one("MATCH ()-[e:E]->() RETURN count(e)")[0]

    # ---- workload 3: recommendation traversal -------------------------------------------------------------
    #: The recommendation; `{p}` is the person (a literal or `$p`). Of the equivalent formulations measured, each
    #: engine keeps its fastest (see the subclasses).
    RECOMMEND = ""

    def load_likes(self, csv_path: str, directory: str) -> None:
        self._open(directory)
        path = csv_path.replace('"', '\\"')
        self.conn.execute("CREATE NODE TABLE Person(id INT64 PRIMARY KEY)")
        self.conn.execute("CREATE NODE TABLE Item(id INT64 PRIMARY KEY)")
        self.conn.execute("CREATE REL TABLE Likes(FROM Person TO Item)")
        self.conn.execute(f'COPY Person FROM (LOAD FROM "{path}" (header=false) RETURN DISTINCT column0)')
        self.conn.execute(f'COPY Item FROM (LOAD FROM "{path}" (header=false) RETURN DISTINCT column1)')
        self.conn.execute(f'COPY Likes FROM "{path}" (header=false)')

    def recommend(self, person: int) -> List[Tuple[int, int]]:
        if self.param_index:
            rows = self._all(self.RECOMMEND.format(p="$p"), {"p": int(person)})
        else:
            rows = self._all(self.RECOMMEND.format(p=int(person)))
        return [(int(item), int(n)) for item, n in rows]

    # ---- workload 4: small concurrent durable transactions ------------------------------------------------
    #: Options of the commit workload's database.
    commit_options: Dict[str, Any] = {}

    def prepare_commits(self, directory: str) -> None:
        self._open(directory, **self.commit_options)
        self.conn.execute("CREATE NODE TABLE N(id INT64 PRIMARY KEY)")
        self.conn.execute("CREATE REL TABLE L(FROM N TO N)")
        self.conn.execute("CREATE (:N {id: 0})")

    def writer(self) -> Any:
        return self.lib.Connection(self.db)

    def small_transaction(self, handle: Any, node_id: int) -> None:
        # One statement outside an explicit transaction is its own transaction, committed before it returns.
        if self.param_index:
            handle.execute("MATCH (z:N {id: 0}) CREATE (:N {id: $id})-[:L]->(z)", {"id": node_id}).close()
        else:
            handle.execute(f"MATCH (z:N {{id: 0}}) CREATE (:N {{id: {int(node_id)}}})-[:L]->(z)").close()

    def release_writer(self, handle: Any) -> None:
        handle.close()

    def commit_count(self) -> int:
        return self._one("MATCH (n:N) RETURN count(n)")[0]


class KuzuPeer(_CypherGraphPeer):
    name = "kuzu"
    title = "Kuzu"
    module_name = "kuzu"
    param_index = False
    concurrent_writers = False

    # Counting paths per item first and testing "not already liked" once per item was 3 to 10 times faster here
    # than testing it per path (Kuzu 0.11).
    RECOMMEND = (
        "MATCH (p:Person {{id: {p}}})-[:Likes]->(:Item)<-[:Likes]-(o:Person)-[:Likes]->(r:Item) WHERE o.id <> {p} "
        "WITH p, r, count(*) AS n WHERE NOT EXISTS {{ MATCH (p)-[:Likes]->(r) }} "
        "RETURN r.id AS item, n ORDER BY n DESC, item ASC LIMIT 10")

    def _upsert_one(self, s: int, d: int, w: float) -> None:
        hit = self._one(f"MATCH (a:V {{id: {int(s)}}})-[e:E]->(b:V {{id: {int(d)}}}) SET e.weight = {_q(w)} "
                        f"RETURN count(e)")[0]
        if not hit:
            self.conn.execute(f"MATCH (a:V {{id: {int(s)}}}), (b:V {{id: {int(d)}}}) "
                              f"CREATE (a)-[:E {{weight: {_q(w)}}}]->(b)")

    def _upsert_many(self, rows: List[Dict[str, Any]]) -> None:
        hit = self._all("UNWIND $q AS q MATCH (a:V {id: q.s})-[e:E]->(b:V {id: q.d}) SET e.weight = q.w "
                        "RETURN q.s, q.d", {"q": rows})
        matched = {(r[0], r[1]) for r in hit}
        # A statement creating several edges from an UNWIND joins node scans (seconds per hundred edges in
        # 0.11); one literal statement per new edge uses the primary-key index.
        for r in rows:
            if (r["s"], r["d"]) not in matched:
                self.conn.execute(f"MATCH (a:V {{id: {int(r['s'])}}}), (b:V {{id: {int(r['d'])}}}) "
                                  f"CREATE (a)-[:E {{weight: {_q(r['w'])}}}]->(b)")

    def _remove_one(self, s: int, d: int) -> None:
        self.conn.execute(f"MATCH (a:V {{id: {int(s)}}})-[e:E]->(b:V {{id: {int(d)}}}) DELETE e")


class LadybugPeer(_CypherGraphPeer):
    name = "ladybug"
    title = "LadybugDB"
    module_name = "ladybug"
    param_index = True
    commit_options = {"enable_multi_writes": True}

    # Collecting the person's items into a list first was up to 3 times faster on the larger rows than a
    # subquery per path or per item (LadybugDB 0.22), a little slower on the smallest.
    RECOMMEND = (
        "MATCH (p:Person {{id: {p}}})-[:Likes]->(i:Item) WITH p, collect(i.id) AS mine "
        "MATCH (p)-[:Likes]->(:Item)<-[:Likes]-(o:Person)-[:Likes]->(r:Item) "
        "WHERE o.id <> {p} AND NOT list_contains(mine, r.id) "
        "RETURN r.id AS item, count(*) AS n ORDER BY n DESC, item ASC LIMIT 10")

    def _upsert_one(self, s: int, d: int, w: float) -> None:
        p = {"s": s, "d": d, "w": w}
        if not self._one("MATCH (a:V {id: $s})-[e:E]->(b:V {id: $d}) SET e.weight = $w RETURN count(e)", p)[0]:
            self.conn.execute("MATCH (a:V {id: $s}), (b:V {id: $d}) CREATE (a)-[:E {weight: $w}]->(b)", p)

    def _upsert_many(self, rows: List[Dict[str, Any]]) -> None:
        hit = self._all("UNWIND $q AS q MATCH (a:V {id: q.s})-[e:E]->(b:V {id: q.d}) SET e.weight = q.w "
                        "RETURN q.s, q.d", {"q": rows})
        matched = {(r[0], r[1]) for r in hit}
        new = [r for r in rows if (r["s"], r["d"]) not in matched]
        if new:
            self.conn.execute("UNWIND $q AS q MATCH (a:V {id: q.s}) MATCH (b:V {id: q.d}) "
                              "CREATE (a)-[:E {weight: q.w}]->(b)", {"q": new})

    def _remove_one(self, s: int, d: int) -> None:
        self.conn.execute("MATCH (a:V {id: $s})-[e:E]->(b:V {id: $d}) DELETE e", {"s": s, "d": d})
