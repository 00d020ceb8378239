"""DuckDB as a graph store: one `edges` table in a database file.

Paths: the edge list is loaded by `read_csv` (DuckDB's parallel CSV reader) into a table whose primary key
`(src, dst)` is an ART index, which also serves the upserts; a second ART index on `dst` serves incoming edges.
DuckDB is a columnar engine built for set-at-a-time queries, and a point query costs it a whole query plan, so
every read is one statement over all the query vertices at once (the list passed as a parameter and `unnest`ed,
joined against the table), which is its fastest honest path; the rows are fetched to the client as NumPy arrays.
Writes: `INSERT ... ON CONFLICT DO UPDATE` in transactions of `batch` edges. Durability: DuckDB's WAL, written
and synced at each commit (its default).
LDBC short reads: the schema and SQL of `ldbc_sql`, each file loaded by `read_csv` (`|`, no quoting, the
columns' types given, empty fields as NULL) in one transaction with the tables built from it; the short reads are
point queries, each prepared once (`PREPARE`) and executed per parameter, which saves DuckDB's planning.
"""

from __future__ import annotations

import os
from typing import Any, List, Tuple

import numpy as np

from ..peer import Peer, chunks
from .sqlite_peer import RECOMMEND_SQL
from . import ldbc_sql


class DuckdbPeer(Peer):
    name = "duckdb"
    title = "DuckDB"

    def __init__(self) -> None:
        self.con = None
        self.path = ""

    def version(self) -> str:
        import duckdb

        return duckdb.__version__

    def open(self, directory: str) -> None:
        import duckdb

        self.path = os.path.join(directory, "graph.duckdb")
        self.con = duckdb.connect(self.path)

    def close(self) -> None:
        if self.con is not None:
            self.con.close()
            self.con = None

    def import_edges(self, csv_path: str) -> None:
        self.con.execute(
            "CREATE TABLE edges (src BIGINT NOT NULL, dst BIGINT NOT NULL, weight DOUBLE, PRIMARY KEY (src, dst))"
        )
        self.con.execute(
            "INSERT INTO edges SELECT * FROM read_csv(?, header = false, "
            "columns = {'src': 'BIGINT', 'dst': 'BIGINT', 'weight': 'DOUBLE'})",
            [csv_path],
        )
        self.con.execute("CREATE INDEX edges_in ON edges (dst)")
        self.con.execute("CHECKPOINT")

    # ---- reads: one statement per call over all queries ---------------------------------------------------------
    def _fetch(self, q: str, *lists: np.ndarray) -> dict:
        return self.con.execute(q, [x.tolist() for x in lists]).fetchnumpy()

    def find_edges(self, src: np.ndarray, dst: np.ndarray) -> int:
        out = self._fetch(
            "SELECT e.src FROM (SELECT unnest($1::BIGINT[]) AS s, unnest($2::BIGINT[]) AS d) q "
            "JOIN edges e ON e.src = q.s AND e.dst = q.d",
            src,
            dst,
        )
        return len(out["src"])

    def _edges(self, v: np.ndarray, this: str, other: str) -> Tuple[int, int, float]:
        out = self._fetch(
            f"SELECT e.{other} AS other, e.weight FROM (SELECT unnest($1::BIGINT[]) AS v) q "
            f"JOIN edges e ON e.{this} = q.v",
            v,
        )
        return len(out["other"]), int(out["other"].sum()), float(out["weight"].sum())

    def out_edges(self, v: np.ndarray) -> Tuple[int, int, float]:
        return self._edges(v, "src", "dst")

    def in_edges(self, v: np.ndarray) -> Tuple[int, int, float]:
        return self._edges(v, "dst", "src")

    def unique_neighbours(self, v: np.ndarray) -> Tuple[int, int]:
        out = self._fetch(
            "WITH q AS (SELECT unnest($1::BIGINT[]) AS v, generate_subscripts($1::BIGINT[], 1) AS i) "
            "SELECT DISTINCT q.i, e.dst AS n FROM q JOIN edges e ON e.src = q.v "
            "UNION SELECT q.i, e.src AS n FROM q JOIN edges e ON e.dst = q.v",
            v,
        )
        return len(out["n"]), int(out["n"].sum())

    def _degree(self, v: np.ndarray, this: str) -> Tuple[int, float]:
        out = self._fetch(
            f"SELECT count(e.{this}) AS c, coalesce(sum(e.weight), 0) AS w "
            f"FROM (SELECT unnest($1::BIGINT[]) AS v) q JOIN edges e ON e.{this} = q.v",
            v,
        )
        return int(out["c"][0]), float(out["w"][0])

    def out_degree_weight(self, v: np.ndarray) -> Tuple[int, float]:
        return self._degree(v, "src")

    def in_degree_weight(self, v: np.ndarray) -> Tuple[int, float]:
        return self._degree(v, "dst")

    # ---- writes -------------------------------------------------------------------------------------------------
    def _batches(self, q: str, rows: List[Tuple], batch: int) -> None:
        for part in chunks(len(rows), batch):
            self.con.execute("BEGIN")
            self.con.executemany(q, rows[part])
            self.con.execute("COMMIT")

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
        self.con.execute(
            "CREATE TABLE likes AS SELECT * FROM read_csv(?, header = false, "
            "columns = {'person': 'BIGINT', 'item': 'BIGINT'})",
            [csv_path],
        )
        self.con.execute("CHECKPOINT")

    def recommend(self, person: int) -> List[Tuple[int, int]]:
        return [(int(i), int(c)) for i, c in self.con.execute(RECOMMEND_SQL, {"person": person}).fetchall()]

    # ---- LDBC SNB short reads -----------------------------------------------------------------------------------
    def load_ldbc(self, data_dir: str, directory: str) -> None:
        self.open(directory)
        con = self.con
        con.execute("BEGIN")
        for table, columns, files in ldbc_sql.raw_tables(data_dir):
            con.execute(ldbc_sql.create_raw(table, columns))
            types = ", ".join(f"'{c}': '{'VARCHAR' if t == 'TEXT' else t}'" for c, t in columns)
            con.execute(
                f"INSERT INTO {table} SELECT * FROM read_csv(?, delim = '|', header = true, quote = '', "
                f"escape = '', columns = {{{types}}})",
                [files],
            )
        for statement in ldbc_sql.BUILD:
            con.execute(statement)
        for table in ldbc_sql.FOLDED:
            con.execute(f"DROP TABLE {table}")
        con.execute("COMMIT")
        con.execute("CHECKPOINT")
        for q, text in ldbc_sql.QUERIES.items():
            con.execute(f"PREPARE {q} AS {text.replace('?', '$1')}")

    def ldbc_short(self, query: str, params: dict) -> List[tuple]:
        rows = self.con.execute(f"EXECUTE {query}({int(params[ldbc_sql.PARAMETER[query]])})").fetchall()
        return ldbc_sql.shaped(query, rows)

    # ---- concurrent commits -------------------------------------------------------------------------------------
    def prepare_commits(self, directory: str) -> None:
        self.open(directory)
        self.con.execute("CREATE TABLE nodes (id BIGINT PRIMARY KEY)")
        self.con.execute("CREATE TABLE edges (src BIGINT, dst BIGINT)")
        self.con.execute("INSERT INTO nodes VALUES (0)")

    def writer(self) -> Any:
        return self.con.cursor()  # DuckDB: one connection object per thread, same database instance

    def small_transaction(self, handle: Any, node_id: int) -> None:
        handle.execute("BEGIN")
        handle.execute("INSERT INTO nodes VALUES (?)", [node_id])
        handle.execute("INSERT INTO edges VALUES (?, 0)", [node_id])
        handle.execute("COMMIT")

    def release_writer(self, handle: Any) -> None:
        handle.close()

    def commit_count(self) -> int:
        return self.con.execute("SELECT count(*) FROM nodes").fetchone()[0]
