"""NetworkX: the in-memory baseline most Python users start from (a `DiGraph` of dicts), not durable.

Paths: the edge list is read with the `csv` module into `add_weighted_edges_from` (as fast as NetworkX's own
readers, which parse line by line too); reads and writes are its dict lookups in a Python loop, which is how
NetworkX is used. It has no transactions, so `batch` changes nothing and the commit workload does not apply.
"""

from __future__ import annotations

import csv
from collections import Counter
from typing import List, Tuple

import numpy as np

from ..peer import Peer, Unsupported


class NetworkxPeer(Peer):
    name = "networkx"
    title = "NetworkX"
    durable = False

    def __init__(self) -> None:
        self.g = None

    def version(self) -> str:
        import networkx

        return networkx.__version__

    def open(self, directory: str) -> None:
        import networkx

        self.g = networkx.DiGraph()

    def close(self) -> None:
        self.g = None

    def import_edges(self, csv_path: str) -> None:
        with open(csv_path, newline="") as f:
            self.g.add_weighted_edges_from((int(s), int(d), float(w)) for s, d, w in csv.reader(f))

    def find_edges(self, src: np.ndarray, dst: np.ndarray) -> int:
        has = self.g.has_edge
        return sum(1 for s, d in zip(src.tolist(), dst.tolist()) if has(s, d))

    def _edges(self, v: np.ndarray, adjacency) -> Tuple[int, int, float]:
        n = ids = 0
        w = 0.0
        for x in v.tolist():
            for other, attrs in adjacency[x].items():
                n += 1
                ids += other
                w += attrs["weight"]
        return n, ids, w

    def out_edges(self, v: np.ndarray) -> Tuple[int, int, float]:
        return self._edges(v, self.g.succ)

    def in_edges(self, v: np.ndarray) -> Tuple[int, int, float]:
        return self._edges(v, self.g.pred)

    def unique_neighbours(self, v: np.ndarray) -> Tuple[int, int]:
        succ, pred = self.g.succ, self.g.pred
        n = ids = 0
        for x in v.tolist():
            friends = succ[x].keys() | pred[x].keys()
            n += len(friends)
            ids += sum(friends)
        return n, ids

    def _degree(self, v: np.ndarray, adjacency) -> Tuple[int, float]:
        n, w = 0, 0.0
        for x in v.tolist():
            nbrs = adjacency[x]
            n += len(nbrs)
            w += sum(a["weight"] for a in nbrs.values())
        return n, w

    def out_degree_weight(self, v: np.ndarray) -> Tuple[int, float]:
        return self._degree(v, self.g.succ)

    def in_degree_weight(self, v: np.ndarray) -> Tuple[int, float]:
        return self._degree(v, self.g.pred)

    def upsert_edges(self, src: np.ndarray, dst: np.ndarray, weight: np.ndarray, batch: int) -> None:
        add = self.g.add_edge
        for s, d, w in zip(src.tolist(), dst.tolist(), weight.tolist()):
            add(s, d, weight=w)

    def remove_edges(self, src: np.ndarray, dst: np.ndarray, batch: int) -> None:
        g = self.g
        for s, d in zip(src.tolist(), dst.tolist()):
            if g.has_edge(s, d):
                g.remove_edge(s, d)

    def edge_count(self) -> int:
        return self.g.number_of_edges()

    def load_likes(self, csv_path: str, directory: str) -> None:
        self.open(directory)
        with open(csv_path, newline="") as f:
            self.g.add_edges_from((int(p), int(i)) for p, i in csv.reader(f))

    def recommend(self, person: int) -> List[Tuple[int, int]]:
        succ, pred = self.g.succ, self.g.pred
        mine = succ[person]
        counts: Counter = Counter()
        for item in mine:
            for other in pred[item]:
                if other != person:
                    counts.update(rec for rec in succ[other] if rec not in mine)
        return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:10]

    def prepare_commits(self, directory: str) -> None:
        raise Unsupported("in memory only: no durable transactions")

    def commit_count(self) -> int:
        return 0
