"""Unum's UStore as a peer: its graph modality (NetworkX-like `DiGraph` over a key-value collection) on the UCSet
engine, the default of its Python bindings, driven in-process.

What it owns: a UCSet database configured with `<work>/ustore` as its directory. UCSet keeps everything in memory
and writes each collection to a Parquet file there when the database is closed (and reads them back on open);
nothing reaches the disk between open and close, so an acknowledged write is lost in a crash: `durable` is false
(UStore's own engine table lists UCSet as not persistent). The wheel ships only for Python <= 3.10, so the worker
runs under the py310 interpreter; its pyarrow 10 needs NumPy < 2 there.

Data layout:
- Collection `graph`: the directed graph, each edge stored with an edge id. The id is the pair itself,
  `src << 32 | dst` (ids must be below 2**31), so an upsert or removal names its edge without a lookup.
- Collection `weights`: the weight of each edge as 8 bytes (float64) under the same edge id, written in the same
  transaction as the edge. (UStore's own edge attributes are JSON documents, and its weighted degree parses them as
  integers, so it cannot sum fractional weights.)

Paths:
- Import: the edge list parsed with NumPy, then `add_edges_from` of an (n, 3) array of (src, dst, edge id) and one
  batch write of all weights (an Arrow binary array over the NumPy buffer), in chunks of a million edges.
- Reads: the bindings' calls are per vertex (`successors`, `predecessors`, `has_edge`); each query fetches the
  vertex's neighbour ids as a NumPy array (unique neighbours: both directions, `np.unique`), and the weights of a chunk of queries' edges are read in one
  batch get by edge id. Degrees come from the batch `out_degree(vertices)` / `in_degree(vertices)`; their weight
  sums from the batch weight get (the store cannot sum fractional weights itself).
- Writes: one UStore transaction per batch (`Transaction(db)`, graph and weights updated through it, `commit`);
  an upsert re-adds the edge (idempotent for the same id) and overwrites its weight.
- Likes: a `likes` graph person -> item; the recommendation walks it with `successors`/`predecessors` and counts
  with NumPy (UStore has no query language).
- Commits: one transaction per vertex and edge; UCSet detects conflicting concurrent transactions at commit (all
  of them touch vertex 0) and fails them, so a committer retries until its commit succeeds. The bindings hold the
  GIL, so extra threads mostly add conflicts.
"""

from __future__ import annotations

import json
import os
from typing import Any, List, Tuple

import numpy as np

from ..data import read_edges
from ..peer import Peer, Unsupported, chunks

try:
    import pyarrow as pa
    import ustore.ucset as ucset
except ImportError as e:  # reported by the harness as a load error
    raise ImportError(f"ustore (UStore, wheels for Python <= 3.10 only) cannot be imported here: {e}") from e

#: Edges per import call.
LOAD_CHUNK = 1 << 20
#: Queries whose edge weights are read in one batch.
READ_CHUNK = 2000
#: Commit attempts before a conflicting transaction is reported as an error.
RETRIES = 1000
ID_LIMIT = 1 << 31


def _edge_ids(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    if len(src) and (src.min() < 0 or dst.min() < 0 or src.max() >= ID_LIMIT or dst.max() >= ID_LIMIT):
        raise Unsupported("vertex ids must lie in [0, 2**31) to form UStore edge ids from the pair")
    return (src << 32) | dst


def _blobs(values: np.ndarray) -> "pa.Array":
    """float64 values as an Arrow binary array of 8-byte values, sharing the NumPy buffer."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    offsets = np.arange(len(values) + 1, dtype=np.int32) * 8
    return pa.Array.from_buffers(pa.binary(), len(values), [None, pa.py_buffer(offsets), pa.py_buffer(values)])


def _floats(blobs: "pa.Array") -> np.ndarray:
    """The inverse of `_blobs` for what a batch get returns."""
    if blobs.null_count:
        raise RuntimeError("an edge has no weight")
    offsets = np.frombuffer(blobs.buffers()[1], dtype=np.int32)[blobs.offset : blobs.offset + len(blobs) + 1]
    if len(offsets) > 1 and not np.all(np.diff(offsets) == 8):
        raise RuntimeError("a weight is not 8 bytes")
    start = int(offsets[0]) if len(offsets) else 0
    return np.frombuffer(blobs.buffers()[2], dtype=np.float64, count=len(blobs), offset=start)


def _ids(walk, vertex: int) -> np.ndarray:
    """The ids `walk(vertex)` returns (`successors` or `predecessors`), copied out of the buffer the bindings reuse
    on their next call. An empty answer comes back as an error from the bindings (a NULL buffer)."""
    try:
        return np.array(walk(vertex), dtype=np.int64)
    except TypeError:
        return np.zeros(0, dtype=np.int64)


class UstorePeer(Peer):
    name = "ustore"
    title = "UStore"
    durable = False
    python = "py310"
    concurrent_writers = True

    def __init__(self) -> None:
        self.db: Any = None
        self.graph: Any = None
        self.weights: Any = None

    def version(self) -> str:
        from importlib.metadata import version

        return f"{version('ustore')} (UCSet engine)"

    # ---- lifecycle -----------------------------------------------------------------------------------------
    def _open(self, directory: str) -> None:
        self.close()
        path = os.path.join(directory, "ustore")
        os.makedirs(path, exist_ok=True)
        self.db = ucset.DataBase(json.dumps({"version": "1.0", "directory": path}))

    def open(self, directory: str) -> None:
        self._open(directory)
        self.graph = ucset.DiGraph(self.db, "graph")
        self.weights = self.db["weights"]

    def close(self) -> None:
        if self.db is not None:
            self.graph = self.weights = None
            self.db.close()  # UCSet writes its collections to Parquet here
            self.db = None

    # ---- workload 1: import -------------------------------------------------------------------------------
    def import_edges(self, csv_path: str) -> None:
        src, dst, weight = read_edges(csv_path)
        for part in chunks(len(src), LOAD_CHUNK):
            s, d = src[part], dst[part]
            ids = _edge_ids(s, d)
            self.graph.add_edges_from(np.stack([s, d, ids], axis=1))
            self.weights[ids] = _blobs(weight[part])

    # ---- workload 2: random reads -------------------------------------------------------------------------
    def find_edges(self, src: np.ndarray, dst: np.ndarray) -> int:
        has = self.graph.has_edge
        return sum(1 for s, d in zip(src.tolist(), dst.tolist()) if has(s, d))

    def _adjacent(self, v: np.ndarray, out: bool) -> Tuple[int, int, float]:
        walk = self.graph.successors if out else self.graph.predecessors
        count, ids, weights = 0, 0, 0.0
        for part in chunks(len(v), READ_CHUNK):
            edge_ids: List[np.ndarray] = []
            for x in v[part].tolist():
                other = _ids(walk, x)
                count += len(other)
                ids += int(other.sum())
                edge_ids.append(((x << 32) | other) if out else ((other << 32) | x))
            if edge_ids:
                weights += float(_floats(self.weights[np.concatenate(edge_ids)]).sum())
        return count, ids, weights

    def out_edges(self, v: np.ndarray) -> Tuple[int, int, float]:
        return self._adjacent(v, True)

    def in_edges(self, v: np.ndarray) -> Tuple[int, int, float]:
        return self._adjacent(v, False)

    def unique_neighbours(self, v: np.ndarray) -> Tuple[int, int]:
        # `neighbors` returns only the successors in this version, so both directions are asked for.
        count, ids = 0, 0
        succ, pred = self.graph.successors, self.graph.predecessors
        for x in v.tolist():
            other = np.unique(np.concatenate([_ids(succ, x), _ids(pred, x)]))
            count += len(other)
            ids += int(other.sum())
        return count, ids

    def _degree(self, v: np.ndarray, out: bool) -> Tuple[int, float]:
        degrees = np.array((self.graph.out_degree if out else self.graph.in_degree)(np.ascontiguousarray(v)),
                           dtype=np.int64)
        _, _, weights = self._adjacent(v, out)
        return int(degrees.sum()), weights

    def out_degree_weight(self, v: np.ndarray) -> Tuple[int, float]:
        return self._degree(v, True)

    def in_degree_weight(self, v: np.ndarray) -> Tuple[int, float]:
        return self._degree(v, False)

    # ---- workload 2: random writes ------------------------------------------------------------------------
    def _commit(self, body) -> None:
        for _ in range(RETRIES):
            txn = ucset.Transaction(self.db)
            body(txn)
            try:
                txn.commit()
                return
            except RuntimeError:  # UCSet fails a transaction that conflicts with a concurrent commit
                continue
        raise RuntimeError(f"a UStore transaction kept conflicting ({RETRIES} attempts)")

    def upsert_edges(self, src: np.ndarray, dst: np.ndarray, weight: np.ndarray, batch: int) -> None:
        for part in chunks(len(src), batch):
            s, d, w = src[part], dst[part], weight[part]
            ids = _edge_ids(s, d)

            def body(txn, s=s, d=d, w=w, ids=ids):
                txn["graph"].digraph.add_edges_from(np.stack([s, d, ids], axis=1))
                txn["weights"][ids] = _blobs(w)

            self._commit(body)

    def remove_edges(self, src: np.ndarray, dst: np.ndarray, batch: int) -> None:
        for part in chunks(len(src), batch):
            s, d = src[part], dst[part]
            ids = _edge_ids(s, d)

            def body(txn, s=s, d=d, ids=ids):
                txn["graph"].digraph.remove_edges_from(np.stack([s, d, ids], axis=1))
                del txn["weights"][ids]

            self._commit(body)

    def edge_count(self) -> int:
        return int(self.graph.number_of_edges())

    # ---- workload 3: recommendation traversal -------------------------------------------------------------
    def load_likes(self, csv_path: str, directory: str) -> None:
        self._open(directory)
        pairs = np.loadtxt(csv_path, delimiter=",", dtype=np.int64, ndmin=2)
        self.graph = ucset.DiGraph(self.db, "likes")
        for part in chunks(len(pairs), LOAD_CHUNK):
            s, d = pairs[part, 0], pairs[part, 1]
            self.graph.add_edges_from(np.stack([s, d, _edge_ids(s, d)], axis=1))

    def recommend(self, person: int) -> List[Tuple[int, int]]:
        g = self.graph
        mine = _ids(g.successors, person)
        reached: List[np.ndarray] = []
        for item in mine.tolist():
            for other in _ids(g.predecessors, item).tolist():
                if other != person:
                    reached.append(_ids(g.successors, other))
        if not reached:
            return []
        items, counts = np.unique(np.concatenate(reached), return_counts=True)
        keep = ~np.isin(items, mine)
        items, counts = items[keep], counts[keep]
        top = np.lexsort((items, -counts))[:10]
        return [(int(items[i]), int(counts[i])) for i in top]

    # ---- workload 4: small concurrent transactions --------------------------------------------------------
    def prepare_commits(self, directory: str) -> None:
        self._open(directory)
        self.graph = ucset.DiGraph(self.db, "commits")
        self.graph.add_node(0)

    def small_transaction(self, handle: Any, node_id: int) -> None:
        # Each new vertex has exactly one edge, so the vertex id serves as its edge id.
        self._commit(lambda txn: txn["commits"].digraph.add_edge(node_id, 0, node_id))

    def commit_count(self) -> int:
        return int(self.graph.number_of_nodes())
