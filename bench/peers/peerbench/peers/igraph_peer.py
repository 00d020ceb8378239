"""igraph: the in-memory C library (python-igraph), not durable.

Paths: igraph numbers vertices 0..n-1, so the edge list is parsed with NumPy, the ids mapped with a sorted id array
(`searchsorted`, vectorised) and the graph built in one `Graph(n, edges)` call with the weights as an edge
attribute. Reads use its batch calls where it has them (`get_eids` for edge lookups, `degree` and `strength` for
degrees) and `incident`/`neighbors` per vertex otherwise. Writes: `add_edges`/`delete_edges` once per batch, as
igraph rebuilds its indexed edge list on every change. No transactions, so the commit workload does not apply.
"""

from __future__ import annotations

from collections import Counter
from typing import List, Tuple

import numpy as np

from ..data import read_edges
from ..peer import Peer, Unsupported, chunks


class IgraphPeer(Peer):
    name = "igraph"
    title = "igraph"
    durable = False

    def __init__(self) -> None:
        self.g = None
        self.ids = np.zeros(0, dtype=np.int64)

    def version(self) -> str:
        import igraph

        return igraph.__version__

    def open(self, directory: str) -> None:
        import igraph

        self.g = igraph.Graph(directed=True)

    def close(self) -> None:
        self.g = None

    def _index(self, v: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.ids, v)

    def import_edges(self, csv_path: str) -> None:
        import igraph

        src, dst, weight = read_edges(csv_path)
        self.ids = np.unique(np.concatenate([src, dst]))
        pairs = np.stack([self._index(src), self._index(dst)], axis=1)
        self.g = igraph.Graph(n=len(self.ids), edges=pairs, directed=True, edge_attrs={"weight": weight})

    def find_edges(self, src: np.ndarray, dst: np.ndarray) -> int:
        pairs = list(zip(self._index(src).tolist(), self._index(dst).tolist()))
        return sum(1 for e in self.g.get_eids(pairs, error=False) if e >= 0)

    def out_edges(self, v: np.ndarray) -> Tuple[int, int, float]:
        return self._incident(v, "out")

    def in_edges(self, v: np.ndarray) -> Tuple[int, int, float]:
        return self._incident(v, "in")

    def _incident(self, v: np.ndarray, mode: str) -> Tuple[int, int, float]:
        g, ids = self.g, self.ids
        weights = g.es["weight"]
        n = total = 0
        w = 0.0
        for x in self._index(v).tolist():
            eids = g.incident(x, mode=mode)
            if eids:
                n += len(eids)
                total += int(ids[g.neighbors(x, mode=mode)].sum())  # the other ends of the same edges
                w += sum(weights[e] for e in eids)
        return n, total, w

    def unique_neighbours(self, v: np.ndarray) -> Tuple[int, int]:
        g, ids = self.g, self.ids
        n = total = 0
        for x in self._index(v).tolist():
            friends = list(set(g.neighbors(x, mode="all")))
            n += len(friends)
            total += int(ids[friends].sum()) if friends else 0
        return n, total

    def _degree(self, v: np.ndarray, mode: str) -> Tuple[int, float]:
        x = self._index(v).tolist()
        return sum(self.g.degree(x, mode=mode)), float(sum(self.g.strength(x, mode=mode, weights="weight")))

    def out_degree_weight(self, v: np.ndarray) -> Tuple[int, float]:
        return self._degree(v, "out")

    def in_degree_weight(self, v: np.ndarray) -> Tuple[int, float]:
        return self._degree(v, "in")

    def upsert_edges(self, src: np.ndarray, dst: np.ndarray, weight: np.ndarray, batch: int) -> None:
        g = self.g
        s, d, w = self._index(src).tolist(), self._index(dst).tolist(), weight.tolist()
        for part in chunks(len(s), batch):
            pairs = list(zip(s[part], d[part]))
            eids = g.get_eids(pairs, error=False)
            new = [(p, x) for p, e, x in zip(pairs, eids, w[part]) if e < 0]
            for p, e, x in zip(pairs, eids, w[part]):
                if e >= 0:
                    g.es[e]["weight"] = x
            if new:
                g.add_edges([p for p, _ in new], attributes={"weight": [x for _, x in new]})

    def remove_edges(self, src: np.ndarray, dst: np.ndarray, batch: int) -> None:
        g = self.g
        s, d = self._index(src).tolist(), self._index(dst).tolist()
        for part in chunks(len(s), batch):
            eids = [e for e in g.get_eids(list(zip(s[part], d[part])), error=False) if e >= 0]
            g.delete_edges(eids)

    def edge_count(self) -> int:
        return self.g.ecount()

    def load_likes(self, csv_path: str, directory: str) -> None:
        import igraph

        pairs = np.loadtxt(csv_path, delimiter=",", dtype=np.int64, ndmin=2)
        self.ids = np.unique(pairs)
        self.g = igraph.Graph(n=len(self.ids), edges=self._index(pairs), directed=True)

    def recommend(self, person: int) -> List[Tuple[int, int]]:
        g, ids = self.g, self.ids
        me = int(self._index(np.array([person]))[0])
        mine = set(g.successors(me))
        counts: Counter = Counter()
        for item in mine:
            for other in g.predecessors(item):
                if other != me:
                    counts.update(rec for rec in g.successors(other) if rec not in mine)
        ranked = sorted(((int(ids[i]), c) for i, c in counts.items()), key=lambda kv: (-kv[1], kv[0]))
        return ranked[:10]

    def prepare_commits(self, directory: str) -> None:
        raise Unsupported("in memory only: no durable transactions")

    def commit_count(self) -> int:
        return 0
