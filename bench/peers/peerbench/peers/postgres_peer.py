"""PostgreSQL as a peer: a throwaway cluster per store, driven through psycopg 3.

What it owns: a cluster in `<work>/pg/data` made with `initdb -A trust`, its log in `<work>/pg/server.log`, and its
unix socket in `<work>/pg` (no TCP listener; when that path would be too long for a socket, 127.0.0.1 on a free
port instead). The server is started with `pg_ctl`, stopped in `close()` and, should the worker die first, on
process exit. initdb refuses to run as root, so a root worker runs the server as the `postgres` user that Debian's
package creates (`runuser -u postgres --`) and hands it the directory.

Durability: the server's defaults (fsync on, synchronous_commit on, full_page_writes on), so a commit returns once
its WAL is flushed.

Paths:
- Import: `COPY ... FROM STDIN` into a table created in the same transaction (`FREEZE`, so the rows are written
  frozen and the visibility map is set, which index-only scans need), then `PRIMARY KEY (src, dst) INCLUDE
  (weight)` and an index on `(dst, src) INCLUDE (weight)`, then `ANALYZE`: every read is an index-only scan.
- Reads: one statement per chunk of queries, the query ids passed as arrays and joined with `unnest` (measured
  against one prepared statement per query, plain or in pipeline mode: the arrays are several times faster for
  lookups and as fast where fetching the rows dominates; a binary `COPY TO STDOUT` parsed with NumPy was slower). The rows of
  out/in/unique-neighbour queries come back to the client, which sums them; the degree queries aggregate per
  query vertex in the server and return one row per query.
- Writes: batch 1 is one autocommitted prepared statement per edge; larger batches are one transaction with one
  `INSERT ... SELECT FROM unnest(...) ON CONFLICT DO UPDATE` (or `DELETE ... USING unnest(...)`) per batch.
- Likes: `likes(person, item)` with `PRIMARY KEY (person, item)` and an index on `(item, person)`; the
  recommendation is one SQL statement (load time includes making and starting the cluster, about a second).
- Commits: each thread its own connection; a transaction is one autocommitted statement inserting the vertex and
  its edge (a data-modifying CTE), so one round trip and one WAL flush (group commit across threads).

Memory and writes outside the worker: the postmaster and its children (read from /proc, sampled whenever the
harness asks and at close). Peak memory is the sum over those processes of their peak private resident memory
plus the shared buffer pool once (see `_sample`); bytes written are the `write_bytes` of the postmaster (which
includes those of children it has reaped) and of its live children, since the server started.
"""

from __future__ import annotations

import atexit
import glob
import os
import shutil
import socket
import subprocess
from typing import Any, List, Optional, Tuple

import numpy as np

from ..peer import Peer, chunks, proc_fields

try:
    import psycopg
except ImportError as e:  # reported by the harness as a load error
    raise ImportError(f"psycopg (psycopg 3) is not installed in this interpreter: {e}") from e

#: Query ids per statement on the read paths.
READ_CHUNK = 2000
#: Bytes per COPY write.
COPY_BLOCK = 1 << 20


def _binary(name: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    for path in sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True):
        return path
    raise FileNotFoundError(f"PostgreSQL's `{name}` is neither on PATH nor under /usr/lib/postgresql/*/bin")


class Cluster:
    """One throwaway PostgreSQL cluster under `root`, reachable by `connect()`."""

    def __init__(self, root: str):
        self.root = os.path.abspath(root)
        self.data = os.path.join(self.root, "data")
        self.log = os.path.join(self.root, "server.log")
        self.user = "postgres"
        self.as_server: List[str] = []
        if os.geteuid() == 0:
            # initdb and postgres refuse to run as root: run them as the unprivileged `postgres` user.
            self.as_server = ["runuser", "-u", "postgres", "--"]
        self.port = 5432
        self.host = self.root
        self.postmaster = 0
        self.peak_memory = 0
        self.written0 = 0
        self.running = False

    def _run(self, args: List[str]) -> None:
        proc = subprocess.run(self.as_server + args, cwd=self.root, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        if proc.returncode != 0:
            tail = ""
            if os.path.exists(self.log):
                with open(self.log, errors="replace") as f:
                    tail = f.read()[-2000:]
            raise RuntimeError(f"{' '.join(args[:2])} failed ({proc.returncode}): {proc.stdout[-2000:]}{tail}")

    def start(self) -> None:
        os.makedirs(self.root, exist_ok=True)
        if self.as_server:
            shutil.chown(self.root, user="postgres", group="postgres")
            probe = subprocess.run(self.as_server + ["test", "-w", self.root])
            if probe.returncode != 0:
                raise PermissionError(f"the postgres user cannot reach {self.root}: make its parents traversable")
        self._run([_binary("initdb"), "-A", "trust", "-U", self.user, "-E", "UTF8", "--locale=C", "-D", self.data])
        # The commits job runs up to 256 committers, each with its own connection; the default of 100 refused them.
        settings = ["max_connections = 300"]
        if len(os.path.join(self.root, ".s.PGSQL.5432")) < 100:
            settings += ["listen_addresses = ''", f"unix_socket_directories = '{self.root}'"]
        else:  # a unix socket path is limited to 107 bytes
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                self.port = s.getsockname()[1]
            self.host = "127.0.0.1"
            settings += ["listen_addresses = '127.0.0.1'", f"port = {self.port}", "unix_socket_directories = ''"]
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write("\n# peer benchmark: local only; durability settings are left at their defaults\n")
            f.write("".join(s + "\n" for s in settings))
        self._run([_binary("pg_ctl"), "-D", self.data, "-l", self.log, "-w", "-t", "60", "start"])
        self.running = True
        atexit.register(self.stop)
        with open(os.path.join(self.data, "postmaster.pid")) as f:
            self.postmaster = int(f.readline())
        self.written0 = self._written()

    def connect(self, autocommit: bool = True) -> "psycopg.Connection":
        return psycopg.connect(host=self.host, port=self.port, user=self.user, dbname="postgres",
                               autocommit=autocommit)

    def _pids(self) -> List[int]:
        """The postmaster and its live children."""
        pids = [self.postmaster]
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            if int(stat[stat.rindex(")") + 2 :].split()[1]) == self.postmaster:
                pids.append(int(entry))
        return pids

    def sample(self) -> int:
        """Peak memory of the server so far. Each process's VmHWM counts the pages of the shared buffer pool it
        has touched, so summing VmHWM would count that pool once per process; instead the sum is, per process,
        VmHWM minus its shared resident memory (RssShmem), plus the largest RssShmem once. Shared buffers stay
        resident once touched, so the current RssShmem is also the peak one."""
        if not self.running:
            return self.peak_memory
        private, shared = 0, 0
        for pid in self._pids():
            hwm, shmem = proc_fields(pid, "status", ("VmHWM", "RssShmem"))
            private += max(0, hwm - shmem) * 1024
            shared = max(shared, shmem * 1024)
        self.peak_memory = max(self.peak_memory, private + shared)
        return self.peak_memory

    def _written(self) -> int:
        return sum(proc_fields(pid, "io", ("write_bytes",))[0] for pid in self._pids())

    def written(self) -> int:
        return self._written() - self.written0 if self.running else 0

    def stop(self) -> None:
        if self.running:
            self.sample()
            self.running = False
            self._run([_binary("pg_ctl"), "-D", self.data, "-m", "fast", "-w", "-t", "60", "stop"])
            atexit.unregister(self.stop)


class PostgresPeer(Peer):
    name = "postgres"
    title = "PostgreSQL"
    durable = True
    python = "py312"
    concurrent_writers = True

    def __init__(self) -> None:
        self.cluster: Optional[Cluster] = None
        self.conn: Optional["psycopg.Connection"] = None
        self._version: Optional[str] = None

    def version(self) -> str:
        if self._version is None:
            out = subprocess.run([_binary("postgres"), "--version"], capture_output=True, text=True, check=True)
            # "postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)"
            self._version = f"{out.stdout.split()[2]} (psycopg {psycopg.__version__})"
        return self._version

    # ---- lifecycle -----------------------------------------------------------------------------------------
    def _start(self, directory: str) -> None:
        self.close()
        self.cluster = Cluster(os.path.join(directory, "pg"))
        self.cluster.start()
        self.conn = self.cluster.connect()

    def open(self, directory: str) -> None:
        self._start(directory)

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None
        if self.cluster is not None:
            self.cluster.stop()

    def extra_memory(self) -> int:
        return self.cluster.sample() if self.cluster else 0

    def extra_written(self) -> int:
        return self.cluster.written() if self.cluster else 0

    def _copy(self, cur: "psycopg.Cursor", statement: str, csv_path: str) -> None:
        with cur.copy(statement) as copy, open(csv_path, "rb") as f:
            while True:
                block = f.read(COPY_BLOCK)
                if not block:
                    break
                copy.write(block)

    # ---- workload 1: import -------------------------------------------------------------------------------
    def import_edges(self, csv_path: str) -> None:
        with self.conn.transaction(), self.conn.cursor() as cur:
            cur.execute("CREATE TABLE edges (src bigint NOT NULL, dst bigint NOT NULL, weight double precision)")
            self._copy(cur, "COPY edges (src, dst, weight) FROM STDIN (FORMAT csv, FREEZE)", csv_path)
            cur.execute("ALTER TABLE edges ADD PRIMARY KEY (src, dst) INCLUDE (weight)")
            cur.execute("CREATE INDEX edges_in ON edges (dst, src) INCLUDE (weight)")
        self.conn.execute("ANALYZE edges")

    # ---- workload 2: random reads -------------------------------------------------------------------------
    def _rows(self, sql: str, *arrays: np.ndarray) -> List[tuple]:
        out: List[tuple] = []
        with self.conn.cursor(binary=True) as cur:
            for part in chunks(len(arrays[0]), READ_CHUNK):
                cur.execute(sql, [a[part].tolist() for a in arrays], prepare=True)
                out.extend(cur.fetchall())
        return out

    def find_edges(self, src: np.ndarray, dst: np.ndarray) -> int:
        rows = self._rows(
            "SELECT count(e.src) FROM unnest(%s::int8[], %s::int8[]) AS q(s, d) "
            "JOIN edges e ON e.src = q.s AND e.dst = q.d", src, dst)
        return sum(r[0] for r in rows)

    def _adjacent(self, v: np.ndarray, at: str, other: str) -> Tuple[int, int, float]:
        rows = self._rows(
            f"SELECT e.{other}, e.weight FROM unnest(%s::int8[]) AS q(v) JOIN edges e ON e.{at} = q.v", v)
        return len(rows), sum(r[0] for r in rows), float(sum(r[1] for r in rows))

    def out_edges(self, v: np.ndarray) -> Tuple[int, int, float]:
        return self._adjacent(v, "src", "dst")

    def in_edges(self, v: np.ndarray) -> Tuple[int, int, float]:
        return self._adjacent(v, "dst", "src")

    def unique_neighbours(self, v: np.ndarray) -> Tuple[int, int]:
        rows = self._rows(
            "SELECT n.id FROM unnest(%s::int8[]) AS q(v) CROSS JOIN LATERAL "
            "(SELECT dst AS id FROM edges WHERE src = q.v UNION SELECT src FROM edges WHERE dst = q.v) AS n", v)
        return len(rows), sum(r[0] for r in rows)

    def _degree(self, v: np.ndarray, at: str) -> Tuple[int, float]:
        rows = self._rows(
            f"SELECT d.n, d.w FROM unnest(%s::int8[]) AS q(v) CROSS JOIN LATERAL "
            f"(SELECT count(*) AS n, sum(weight) AS w FROM edges WHERE {at} = q.v) AS d", v)
        return sum(r[0] for r in rows), float(sum(r[1] for r in rows if r[1] is not None))

    def out_degree_weight(self, v: np.ndarray) -> Tuple[int, float]:
        return self._degree(v, "src")

    def in_degree_weight(self, v: np.ndarray) -> Tuple[int, float]:
        return self._degree(v, "dst")

    # ---- workload 2: random writes ------------------------------------------------------------------------
    UPSERT_ONE = ("INSERT INTO edges (src, dst, weight) VALUES (%s, %s, %s) "
                  "ON CONFLICT (src, dst) DO UPDATE SET weight = EXCLUDED.weight")
    UPSERT_MANY = ("INSERT INTO edges (src, dst, weight) SELECT * FROM unnest(%s::int8[], %s::int8[], %s::float8[]) "
                   "ON CONFLICT (src, dst) DO UPDATE SET weight = EXCLUDED.weight")
    REMOVE_ONE = "DELETE FROM edges WHERE src = %s AND dst = %s"
    REMOVE_MANY = ("DELETE FROM edges e USING unnest(%s::int8[], %s::int8[]) AS q(s, d) "
                   "WHERE e.src = q.s AND e.dst = q.d")

    def upsert_edges(self, src: np.ndarray, dst: np.ndarray, weight: np.ndarray, batch: int) -> None:
        with self.conn.cursor() as cur:
            if batch == 1:
                for s, d, w in zip(src.tolist(), dst.tolist(), weight.tolist()):
                    cur.execute(self.UPSERT_ONE, (s, d, w), prepare=True)
                return
            for part in chunks(len(src), batch):
                s, d, w = _last_write_wins(src[part], dst[part], weight[part])
                with self.conn.transaction():
                    cur.execute(self.UPSERT_MANY, (s, d, w), prepare=True)

    def remove_edges(self, src: np.ndarray, dst: np.ndarray, batch: int) -> None:
        with self.conn.cursor() as cur:
            if batch == 1:
                for s, d in zip(src.tolist(), dst.tolist()):
                    cur.execute(self.REMOVE_ONE, (s, d), prepare=True)
                return
            for part in chunks(len(src), batch):
                with self.conn.transaction():
                    cur.execute(self.REMOVE_MANY, (src[part].tolist(), dst[part].tolist()), prepare=True)

    def edge_count(self) -> int:
        return self.conn.execute("SELECT count(*) FROM edges").fetchone()[0]

    # ---- workload 3: recommendation traversal -------------------------------------------------------------
    RECOMMEND = """
        WITH mine AS (SELECT item FROM likes WHERE person = %(p)s)
        SELECT l2.item, count(*) AS n
        FROM mine
        JOIN likes l1 ON l1.item = mine.item AND l1.person <> %(p)s
        JOIN likes l2 ON l2.person = l1.person
        WHERE NOT EXISTS (SELECT 1 FROM mine m2 WHERE m2.item = l2.item)
        GROUP BY l2.item
        ORDER BY n DESC, l2.item ASC
        LIMIT 10"""

    def load_likes(self, csv_path: str, directory: str) -> None:
        self._start(directory)
        with self.conn.transaction(), self.conn.cursor() as cur:
            cur.execute("CREATE TABLE likes (person bigint NOT NULL, item bigint NOT NULL)")
            self._copy(cur, "COPY likes (person, item) FROM STDIN (FORMAT csv, FREEZE)", csv_path)
            cur.execute("ALTER TABLE likes ADD PRIMARY KEY (person, item)")
            cur.execute("CREATE INDEX likes_by_item ON likes (item, person)")
        self.conn.execute("ANALYZE likes")

    def recommend(self, person: int) -> List[Tuple[int, int]]:
        with self.conn.cursor(binary=True) as cur:
            cur.execute(self.RECOMMEND, {"p": person}, prepare=True)
            return [(int(item), int(n)) for item, n in cur.fetchall()]

    # ---- workload 4: small concurrent durable transactions ------------------------------------------------
    def prepare_commits(self, directory: str) -> None:
        self._start(directory)
        with self.conn.transaction():
            self.conn.execute("CREATE TABLE nodes (id bigint PRIMARY KEY)")
            self.conn.execute("CREATE TABLE links (src bigint NOT NULL, dst bigint NOT NULL, PRIMARY KEY (src, dst))")
            self.conn.execute("INSERT INTO nodes VALUES (0)")

    def writer(self) -> Any:
        return self.cluster.connect(autocommit=True)

    def small_transaction(self, handle: Any, node_id: int) -> None:
        # One statement in autocommit mode is one transaction; it returns after the commit's WAL flush.
        handle.execute("WITH n AS (INSERT INTO nodes VALUES (%(id)s)) INSERT INTO links VALUES (%(id)s, 0)",
                       {"id": node_id}, prepare=True)

    def release_writer(self, handle: Any) -> None:
        handle.close()

    def commit_count(self) -> int:
        return self.conn.execute("SELECT count(*) FROM nodes").fetchone()[0]


def _last_write_wins(src: np.ndarray, dst: np.ndarray, weight: np.ndarray):
    """The batch as lists, keeping only the last write of a pair that occurs twice (one `ON CONFLICT DO UPDATE`
    statement may not touch a row twice)."""
    s, d, w = src.tolist(), dst.tolist(), weight.tolist()
    if len(set(zip(s, d))) == len(s):
        return s, d, w
    last = {}
    for a, b, c in zip(s, d, w):
        last[(a, b)] = c
    return [k[0] for k in last], [k[1] for k in last], list(last.values())
