"""SQLite (Python's standard library `sqlite3`) as a graph store: one `edges` table.

Paths: the edge list is loaded with `executemany` over the CSV reader in one transaction into a `WITHOUT ROWID`
table keyed by `(src, dst)`, and the reverse index `(dst, src, weight)` is built after the load (faster than
maintaining it row by row); reads are prepared statements in a Python loop (`sqlite3` caches them), each an index
range scan; writes use `INSERT ... ON CONFLICT DO UPDATE`. Durability: WAL with `synchronous=FULL`, so an
acknowledged commit survives power loss (the default `NORMAL` in WAL mode does not promise that).
LDBC short reads: the schema and SQL of `ldbc_sql`; each file loaded with `executemany` over Python's CSV reader
(`|`, no quoting, empty fields as NULL) in one transaction with the tables built from it, then `ANALYZE`.
"""

from __future__ import annotations

import csv
import os
import sqlite3
from typing import Any, List, Tuple

import numpy as np

from ..peer import Peer, chunks
from . import ldbc_sql


#: The recommendation over a `likes(person, item)` table, in SQL that SQLite and DuckDB both run (`$person`).
RECOMMEND_SQL = """
    SELECT rec.item, count(*) AS c
    FROM likes mine
    JOIN likes other ON other.item = mine.item AND other.person <> mine.person
    JOIN likes rec ON rec.person = other.person
    WHERE mine.person = $person
      AND NOT EXISTS (SELECT 1 FROM likes own WHERE own.person = $person AND own.item = rec.item)
    GROUP BY rec.item
    ORDER BY c DESC, rec.item
    LIMIT 10"""


class SqlitePeer(Peer):
    name = "sqlite"
    title = "SQLite"

    def __init__(self) -> None:
        self.con: sqlite3.Connection | None = None
        self.path = ""

    def version(self) -> str:
        return sqlite3.sqlite_version

    def connect(self) -> sqlite3.Connection:
        con = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=600)
        con.execute("PRAGMA journal_mode=WAL")
        con.execute("PRAGMA synchronous=FULL")
        con.execute("PRAGMA cache_size=-262144")  # 256 MiB of page cache instead of 2 MiB
        return con

    def open(self, directory: str) -> None:
        self.path = os.path.join(directory, "graph.db")
        self.con = self.connect()

    def close(self) -> None:
        if self.con is not None:
            self.con.close()
            self.con = None

    # ---- import -------------------------------------------------------------------------------------------------
    def import_edges(self, csv_path: str) -> None:
        con = self.con
        con.execute(
            "CREATE TABLE edges (src INTEGER NOT NULL, dst INTEGER NOT NULL, weight REAL, PRIMARY KEY (src, dst))"
            " WITHOUT ROWID"
        )
        con.execute("BEGIN")
        with open(csv_path, newline="") as f:
            con.executemany("INSERT INTO edges VALUES (?, ?, ?)", csv.reader(f))
        con.execute("CREATE INDEX edges_in ON edges (dst, src, weight)")
        con.execute("COMMIT")

    # ---- reads --------------------------------------------------------------------------------------------------
    def find_edges(self, src: np.ndarray, dst: np.ndarray) -> int:
        cur = self.con.cursor()
        q = "SELECT 1 FROM edges WHERE src = ? AND dst = ?"
        return sum(1 for s, d in zip(src.tolist(), dst.tolist()) if cur.execute(q, (s, d)).fetchone())

    def _edges(self, v: np.ndarray, q: str) -> Tuple[int, int, float]:
        cur = self.con.cursor()
        n = ids = 0
        w = 0.0
        for x in v.tolist():
            rows = cur.execute(q, (x,)).fetchall()
            n += len(rows)
            for other, weight in rows:
                ids += other
                w += weight
        return n, ids, w

    def out_edges(self, v: np.ndarray) -> Tuple[int, int, float]:
        return self._edges(v, "SELECT dst, weight FROM edges WHERE src = ?")

    def in_edges(self, v: np.ndarray) -> Tuple[int, int, float]:
        return self._edges(v, "SELECT src, weight FROM edges WHERE dst = ?")

    def unique_neighbours(self, v: np.ndarray) -> Tuple[int, int]:
        cur = self.con.cursor()
        q = "SELECT dst FROM edges WHERE src = ?1 UNION SELECT src FROM edges WHERE dst = ?1"
        n = ids = 0
        for x in v.tolist():
            rows = cur.execute(q, (x,)).fetchall()
            n += len(rows)
            ids += sum(r[0] for r in rows)
        return n, ids

    def _degree(self, v: np.ndarray, q: str) -> Tuple[int, float]:
        cur = self.con.cursor()
        n, w = 0, 0.0
        for x in v.tolist():
            c, s = cur.execute(q, (x,)).fetchone()
            n += c
            w += s
        return n, w

    def out_degree_weight(self, v: np.ndarray) -> Tuple[int, float]:
        return self._degree(v, "SELECT count(*), total(weight) FROM edges WHERE src = ?")

    def in_degree_weight(self, v: np.ndarray) -> Tuple[int, float]:
        return self._degree(v, "SELECT count(*), total(weight) FROM edges WHERE dst = ?")

    # ---- writes -------------------------------------------------------------------------------------------------
    def _batches(self, q: str, rows: List[Tuple], batch: int) -> None:
        con = self.con
        for part in chunks(len(rows), batch):
            con.execute("BEGIN")
            con.executemany(q, rows[part])
            con.execute("COMMIT")

    def upsert_edges(self, src: np.ndarray, dst: np.ndarray, weight: np.ndarray, batch: int) -> None:
        q = "INSERT INTO edges VALUES (?, ?, ?) ON CONFLICT (src, dst) DO UPDATE SET weight = excluded.weight"
        self._batches(q, list(zip(src.tolist(), dst.tolist(), weight.tolist())), batch)

    def remove_edges(self, src: np.ndarray, dst: np.ndarray, batch: int) -> None:
        self._batches("DELETE FROM edges WHERE src = ? AND dst = ?", list(zip(src.tolist(), dst.tolist())), batch)

    def edge_count(self) -> int:
        return self.con.execute("SELECT count(*) FROM edges").fetchone()[0]

    # ---- recommendation -----------------------------------------------------------------------------------------
    def load_likes(self, csv_path: str, directory: str) -> None:
        self.open(directory)
        con = self.con
        con.execute("CREATE TABLE likes (person INTEGER, item INTEGER, PRIMARY KEY (person, item)) WITHOUT ROWID")
        con.execute("BEGIN")
        with open(csv_path, newline="") as f:
            con.executemany("INSERT INTO likes VALUES (?, ?)", csv.reader(f))
        con.execute("CREATE INDEX likes_by_item ON likes (item, person)")
        con.execute("COMMIT")

    def recommend(self, person: int) -> List[Tuple[int, int]]:
        return [(i, c) for i, c in self.con.execute(RECOMMEND_SQL, {"person": person})]

    # ---- LDBC SNB short reads -----------------------------------------------------------------------------------
    def load_ldbc(self, data_dir: str, directory: str) -> None:
        self.open(directory)
        con = self.con
        con.execute("BEGIN")
        for table, columns, files in ldbc_sql.raw_tables(data_dir):
            con.execute(ldbc_sql.create_raw(table, columns))
            insert = f"INSERT INTO {table} VALUES ({', '.join('?' * len(columns))})"
            for path in files:
                with open(path, newline="", encoding="utf-8") as f:
                    rows = csv.reader(f, delimiter="|", quoting=csv.QUOTE_NONE)
                    next(rows)
                    con.executemany(insert, ([v if v else None for v in row] for row in rows))
        for statement in ldbc_sql.BUILD:
            con.execute(statement)
        for table in ldbc_sql.FOLDED:
            con.execute(f"DROP TABLE {table}")
        con.execute("ANALYZE")
        con.execute("COMMIT")

    def ldbc_short(self, query: str, params: dict) -> List[tuple]:
        rows = self.con.execute(ldbc_sql.QUERIES[query], (params[ldbc_sql.PARAMETER[query]],)).fetchall()
        return ldbc_sql.shaped(query, rows)

    # ---- concurrent commits -------------------------------------------------------------------------------------
    def prepare_commits(self, directory: str) -> None:
        self.open(directory)
        self.con.execute("CREATE TABLE nodes (id INTEGER PRIMARY KEY)")
        self.con.execute("CREATE TABLE edges (src INTEGER, dst INTEGER)")
        self.con.execute("INSERT INTO nodes VALUES (0)")

    def writer(self) -> Any:
        return self.connect()

    def small_transaction(self, handle: Any, node_id: int) -> None:
        handle.execute("BEGIN IMMEDIATE")
        handle.execute("INSERT INTO nodes VALUES (?)", (node_id,))
        handle.execute("INSERT INTO edges VALUES (?, 0)", (node_id,))
        handle.execute("COMMIT")

    def release_writer(self, handle: Any) -> None:
        handle.close()

    def commit_count(self) -> int:
        return self.con.execute("SELECT count(*) FROM nodes").fetchone()[0]
