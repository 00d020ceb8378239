"""Plexus, embedded through its Python package (the PyO3 extension), with its durable default (`sync`: every
commit is fsynced before it is acknowledged, concurrent committers sharing one fsync).

Paths: `Database.import_csv(edges=...)` is the bulk importer (parallel parse, the graph built in memory and
written once as a compressed checkpoint); reads are the graph view's batch calls, which take the query ids as one
NumPy array and return NumPy arrays (CSR offsets and values for lists), split over the cores with the GIL
released; writes are the view's `upsert_edges`/`remove_edges`, one transaction per call; the recommendation is
the parameterised openCypher query a user would write; commits are `CREATE` statements in explicit transactions
from Python threads (the extension releases the GIL while it commits). LDBC short reads: `plexus import --ldbc`
(the command line's importer for the CsvComposite layout, run on the binary `PEERBENCH_PLEXUS` names or the
repository's release build), then the Cypher of `bench/ldbc/queries` as it is, each a parameterised `execute`.
Server mode: `plexus serve` (the same binary) on loopback with `--no-auth` and its durable default, after
`plexus import --ldbc` when the scenario reads.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from typing import Any, List, Optional, Tuple

import numpy as np

from .. import ldbc
from ..peer import Peer, chunks, proc_field


class PlexusPeer(Peer):
    name = "plexus"
    title = "Plexus"

    def __init__(self) -> None:
        self.db = None
        self.g = None
        self.server: Optional[subprocess.Popen] = None
        self.server_peak = 0

    def version(self) -> str:
        import plexus

        return plexus.__version__

    def open(self, directory: str) -> None:
        import plexus

        self.db = plexus.Database(os.path.join(directory, "db"))

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None
            self.g = None

    def import_edges(self, csv_path: str) -> None:
        self.db.import_csv(edges=csv_path)
        self.g = self.db.graph()
        self.g.refresh()

    def find_edges(self, src: np.ndarray, dst: np.ndarray) -> int:
        return int(np.count_nonzero(self.g.has_edge(src, dst)))

    def out_edges(self, v: np.ndarray) -> Tuple[int, int, float]:
        _offsets, targets, weights = self.g.out_edges(v)
        return len(targets), int(targets.sum()), float(weights.sum())

    def in_edges(self, v: np.ndarray) -> Tuple[int, int, float]:
        _offsets, sources, weights = self.g.in_edges(v)
        return len(sources), int(sources.sum()), float(weights.sum())

    def unique_neighbours(self, v: np.ndarray) -> Tuple[int, int]:
        _offsets, friends = self.g.neighbors(v, "both")
        return len(friends), int(friends.sum())

    def out_degree_weight(self, v: np.ndarray) -> Tuple[int, float]:
        degree, weight = self.g.out_degree(v, True)
        return int(degree.sum()), float(weight.sum())

    def in_degree_weight(self, v: np.ndarray) -> Tuple[int, float]:
        degree, weight = self.g.in_degree(v, True)
        return int(degree.sum()), float(weight.sum())

    def upsert_edges(self, src: np.ndarray, dst: np.ndarray, weight: np.ndarray, batch: int) -> None:
        for part in chunks(len(src), batch):
            self.g.upsert_edges(src[part], dst[part], weight[part])

    def remove_edges(self, src: np.ndarray, dst: np.ndarray, batch: int) -> None:
        for part in chunks(len(src), batch):
            self.g.remove_edges(src[part], dst[part])

    def edge_count(self) -> int:
        return self.g.number_of_edges()

    def load_likes(self, csv_path: str, directory: str) -> None:
        import plexus

        self.db = plexus.Database(os.path.join(directory, "db"))
        pairs = np.loadtxt(csv_path, delimiter=",", dtype=np.int64, ndmin=2)
        people = np.unique(pairs[:, 0])
        items = np.unique(pairs[:, 1])
        with self.db.transaction() as tx:
            tx.execute("CREATE CONSTRAINT FOR (p:Person) REQUIRE p.id IS UNIQUE")
            tx.execute("CREATE CONSTRAINT FOR (i:Item) REQUIRE i.id IS UNIQUE")
        with self.db.transaction() as tx:
            tx.execute("UNWIND $ids AS id CREATE (:Person {id: id})", {"ids": people.tolist()})
            tx.execute("UNWIND $ids AS id CREATE (:Item {id: id})", {"ids": items.tolist()})
            tx.execute(
                "UNWIND $pairs AS pair MATCH (p:Person {id: pair[0]}), (i:Item {id: pair[1]}) CREATE (p)-[:LIKES]->(i)",
                {"pairs": pairs.tolist()},
            )

    # Counts shared items per co-liker first, then sums per recommended item: the same text the Neo4j peer runs
    # (far fewer rows than counting every path).
    RECOMMEND = (
        "MATCH (me:Person {id: $id})-[:LIKES]->(:Item)<-[:LIKES]-(other) WHERE other <> me "
        "WITH me, other, count(*) AS shared "
        "MATCH (other)-[:LIKES]->(rec) "
        "WITH me, rec, sum(shared) AS n "
        "WHERE NOT EXISTS { (me)-[:LIKES]->(rec) } "
        "RETURN rec.id AS item, n ORDER BY n DESC, item ASC LIMIT 10"
    )

    def recommend(self, person: int) -> List[Tuple[int, int]]:
        return [(row["item"], row["n"]) for row in self.db.execute(self.RECOMMEND, {"id": person})]

    def prepare_commits(self, directory: str) -> None:
        import plexus

        self.db = plexus.Database(os.path.join(directory, "db"))
        self.db.execute("CREATE CONSTRAINT FOR (n:V) REQUIRE n.id IS UNIQUE")
        self.db.execute("CREATE (:V {id: 0})")

    SMALL = "MATCH (z:V {id: 0}) CREATE (n:V {id: $id})-[:E]->(z)"

    def small_transaction(self, handle: Any, node_id: int) -> None:
        self.db.execute(self.SMALL, {"id": node_id})

    def commit_count(self) -> int:
        return self.db.execute("MATCH (n:V) RETURN count(n) AS c")[0]["c"]

    # ---- LDBC SNB short reads -----------------------------------------------------------------------------------
    def load_ldbc(self, data_dir: str, directory: str) -> None:
        import plexus

        db = self._import_ldbc(data_dir, directory)
        self.db = plexus.Database(db)
        self.texts = {q: ldbc.cypher(q) for q in ldbc.QUERIES}

    @staticmethod
    def _binary() -> str:
        return os.environ.get("PEERBENCH_PLEXUS") or os.path.join(ldbc.ROOT, "target", "release", "plexus")

    def _import_ldbc(self, data_dir: str, directory: str) -> str:
        db = os.path.join(directory, "db")
        proc = subprocess.run([self._binary(), "import", "--data", db, "--ldbc", data_dir, "--quiet"],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"plexus import --ldbc failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")
        return db

    def ldbc_short(self, query: str, params: dict) -> List[tuple]:
        return self.db.execute(self.texts[query], params).tuples()

    # ---- server mode ---------------------------------------------------------------------------------------------
    def start_server(self, directory: str, ldbc_data: Optional[str] = None) -> str:
        db = self._import_ldbc(ldbc_data, directory) if ldbc_data else os.path.join(directory, "db")
        log_path = os.path.join(directory, "serve.log")
        log = open(log_path, "w")
        self.server = subprocess.Popen(
            [self._binary(), "serve", "--data", db, "--bolt", "127.0.0.1:0", "--http", "127.0.0.1:0", "--no-auth"],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        )
        log.close()
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            with open(log_path) as f:
                text = f.read()
            if "Data in" in text:
                for line in text.splitlines():
                    if line.startswith("Bolt listening on bolt://"):
                        return line.split("bolt://", 1)[1].strip()
            if self.server.poll() is not None:
                raise RuntimeError(f"plexus serve exited with {self.server.returncode}: {text[-2000:]}")
            time.sleep(0.05)
        raise RuntimeError(f"plexus serve did not start within 300 s: {text[-2000:]}")

    def _sample_server(self) -> None:
        if self.server is not None and self.server.poll() is None:
            self.server_peak = max(self.server_peak, proc_field(self.server.pid, "status", "VmHWM") * 1024)

    def extra_memory(self) -> int:
        self._sample_server()
        return self.server_peak

    def stop_server(self) -> None:
        if self.server is None:
            return
        self._sample_server()
        self.server.send_signal(signal.SIGTERM)
        try:
            code = self.server.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self.server.kill()
            self.server.wait()
            raise RuntimeError("plexus serve did not stop within 120 s of SIGTERM")
        finally:
            self.server = None
        if code != 0:
            raise RuntimeError(f"plexus serve exited with {code} after SIGTERM")
