"""Neo4j Community as a peer: the database embedded in a JVM (`bench/peers/neo4j`), driven over its stdin/stdout.

What it owns: one JVM per worker, started on first use from `bench/peers/neo4j/target` (built there by
`build.sh` when missing or older than the sources; Maven and a JDK 17 are needed), talking one JSON object per
line each way. Query arrays go to the JVM as files of little-endian int64/float64 in a private temporary
directory, never as JSON lists. The JVM's stderr (Neo4j's importer report, the import's phases, stack traces)
goes to a file in that directory, or the one `PEERBENCH_NEO4J_LOG` names, and is quoted when a command fails.

Paths (the Java side's files say more):
- Import: Neo4j's offline bulk importer (`neo4j-admin database import full`, run inside the JVM) on the edge list and
  a node file of its distinct ids, then a uniqueness constraint on `(:V {id})`, online before the import returns.
  The import time includes stopping the empty database that `open` made and starting the imported one.
- Reads and writes: the Core API (`findNode` through the constraint's index, `getRelationships`, `getDegree`), one
  read transaction per 1000 queries; writes `batch` edges per transaction.
- Likes: the bulk importer per row (`:Person`, `:Item`, `LIKES`), one parameterised Cypher query per recommendation;
  the JVM stays up across rows, so only the first row's load pays for loading Neo4j's classes (tens of seconds on a
  busy two-core machine; later rows' loads are the importer and a DBMS start, a few seconds).
- LDBC short reads: the bulk importer on the CsvComposite layout (each file copied once with the importer's header
  syntax; `Ldbc.java` has the mapping, the same as `plexus import --ldbc`), range indexes on `Person.id` and
  `Message.id`, then the Cypher of `bench/ldbc/queries` as Plexus runs it, one parameterised query per execution,
  each in its own transaction; the timed loop hands the JVM a batch of parameters at a time (`ldbc_many`), so
  the pipe's round trip is paid per batch, as the edge workloads pay it per array.
- Commits: committer threads inside the JVM (`concurrent_commits` is overridden), each transaction creating a vertex
  and its edge to vertex 0.

- Server mode: the same embedded DBMS with its Bolt connector on a free loopback port (auth off), on an empty store
  or on the LDBC load above; the load generator talks Bolt to it as to Plexus.

Durability and disk: Neo4j's defaults (the transaction log is forced on commit; each database, `system` included,
preallocates a 256 MiB transaction log file, which the disk size counts).
JVM: `-Xms64m -Xmx8g` (`PEERBENCH_NEO4J_HEAP` overrides the maximum) with the flags Neo4j's own launcher adds; the
page cache is Neo4j's default (half of the memory left beside the heap, allocated as it fills).
Memory and writes outside the worker: the JVM's VmHWM and its `write_bytes` since `open`, read from /proc.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
from typing import Any, List, Optional, Tuple

import numpy as np

from .. import ldbc
from ..peer import Peer, proc_field

PROJECT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "neo4j"))
JAR = os.path.join(PROJECT, "target", "neo4j-peer.jar")
LIB = os.path.join(PROJECT, "target", "lib")

#: What Neo4j's launcher passes to its JVM (minus the TLS and flight-recorder ones, which do not apply here).
JVM_FLAGS = [
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:+UnlockExperimentalVMOptions",
    "-XX:+TrustFinalNonStaticFields",
    "-XX:+DisableExplicitGC",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Dlog4j2.disable.jmx=true",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
]


def _build() -> None:
    """Runs build.sh (a no-op when the jar is newer than the sources), raising with its output if it fails."""
    script = os.path.join(PROJECT, "build.sh")
    proc = subprocess.run(["bash", script], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0 or not os.path.exists(JAR):
        raise RuntimeError(f"building the Neo4j peer ({script}) failed: {proc.stdout[-3000:]}")


class Jvm:
    """The JVM running `PeerServer`, one request line and one response line at a time."""

    def __init__(self, scratch: str):
        java = shutil.which("java")
        if java is None:
            raise FileNotFoundError("`java` (a JDK or JRE 17 or later) is not on PATH; the Neo4j peer needs it")
        _build()
        heap = os.environ.get("PEERBENCH_NEO4J_HEAP", "8g")
        self.log_path = os.environ.get("PEERBENCH_NEO4J_LOG") or os.path.join(scratch, "jvm.log")
        self._log = open(self.log_path, "ab")
        classpath = JAR + os.pathsep + os.path.join(LIB, "*")
        self.proc = subprocess.Popen(
            [java, "-Xms64m", f"-Xmx{heap}", *JVM_FLAGS, "-cp", classpath, "plexus.peers.neo4j.PeerServer"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, cwd=scratch, text=True, bufsize=1,
        )
        self.peak = 0
        self.written = 0

    def call(self, cmd: str, **fields: Any) -> Any:
        if self.proc.poll() is not None:
            raise RuntimeError(f"the Neo4j JVM has exited ({self.proc.returncode}): {self._tail()}")
        self.proc.stdin.write(json.dumps({"cmd": cmd, **fields}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        self.sample()
        if not line:
            self.proc.wait()
            raise RuntimeError(f"the Neo4j JVM died during `{cmd}` ({self.proc.returncode}): {self._tail()}")
        reply = json.loads(line)
        if not reply["ok"]:
            raise RuntimeError(f"Neo4j `{cmd}`: {reply['error']}\n{reply.get('trace', '')[:3000]}")
        return reply["result"]

    def sample(self) -> None:
        """Keeps the JVM's peak resident memory and bytes written while it is alive to be read."""
        if self.proc.poll() is None:
            self.peak = max(self.peak, proc_field(self.proc.pid, "status", "VmHWM") * 1024)
            self.written = max(self.written, proc_field(self.proc.pid, "io", "write_bytes"))

    def _tail(self) -> str:
        self._log.flush()
        with open(self.log_path, "rb") as f:
            f.seek(max(0, os.path.getsize(self.log_path) - 3000))
            return f.read().decode(errors="replace")

    def quit(self) -> None:
        if self.proc.poll() is None:
            try:
                self.call("quit")
                self.proc.wait(timeout=120)
            except Exception:
                self.proc.kill()
                self.proc.wait()
        self._log.close()


class Neo4jPeer(Peer):
    name = "neo4j"
    title = "Neo4j"
    durable = True
    concurrent_writers = True

    def __init__(self) -> None:
        self._scratch = tempfile.mkdtemp(prefix="neo4j-peer-")
        self._jvm: Optional[Jvm] = None
        self._written0 = 0
        atexit.register(self._shutdown)

    def _shutdown(self) -> None:
        if self._jvm is not None:
            self._jvm.quit()
            self._jvm = None
        shutil.rmtree(self._scratch, ignore_errors=True)

    def _call(self, cmd: str, **fields: Any) -> Any:
        if self._jvm is None:
            self._jvm = Jvm(self._scratch)
        return self._jvm.call(cmd, **fields)

    def _file(self, name: str, a: np.ndarray, dtype: str) -> str:
        path = os.path.join(self._scratch, name + ".bin")
        np.ascontiguousarray(a, dtype=dtype).tofile(path)
        return path

    def _ids(self, **arrays: np.ndarray) -> dict:
        return {k: self._file(k, v, "<i8") for k, v in arrays.items()}

    # ---- lifecycle -------------------------------------------------------------------------------------------
    def version(self) -> str:
        return self._call("version")

    def enable_bolt(self, port: int) -> None:
        """Starts the Bolt connector on 127.0.0.1:`port` (auth off) with the stores opened from now on."""
        self._call("bolt", port=int(port))

    def open(self, directory: str) -> None:
        if self._jvm is None:
            self._jvm = Jvm(self._scratch)
        self._jvm.sample()
        self._written0 = self._jvm.written
        self._call("open", dir=os.path.abspath(directory))

    def close(self) -> None:
        if self._jvm is not None:
            self._call("close")

    def extra_memory(self) -> int:
        if self._jvm is None:
            return 0
        self._jvm.sample()
        return self._jvm.peak

    def extra_written(self) -> int:
        if self._jvm is None:
            return 0
        self._jvm.sample()
        return self._jvm.written - self._written0

    # ---- workload 1 and 2 --------------------------------------------------------------------------------------
    def import_edges(self, csv_path: str) -> None:
        self._call("import_edges", csv=os.path.abspath(csv_path))

    def find_edges(self, src: np.ndarray, dst: np.ndarray) -> int:
        return self._call("find_edges", **self._ids(src=src, dst=dst))

    def out_edges(self, v: np.ndarray) -> Tuple[int, int, float]:
        return tuple(self._call("out_edges", **self._ids(v=v)))

    def in_edges(self, v: np.ndarray) -> Tuple[int, int, float]:
        return tuple(self._call("in_edges", **self._ids(v=v)))

    def unique_neighbours(self, v: np.ndarray) -> Tuple[int, int]:
        return tuple(self._call("unique_neighbours", **self._ids(v=v)))

    def out_degree_weight(self, v: np.ndarray) -> Tuple[int, float]:
        return tuple(self._call("out_degree_weight", **self._ids(v=v)))

    def in_degree_weight(self, v: np.ndarray) -> Tuple[int, float]:
        return tuple(self._call("in_degree_weight", **self._ids(v=v)))

    def upsert_edges(self, src: np.ndarray, dst: np.ndarray, weight: np.ndarray, batch: int) -> None:
        self._call("upsert_edges", **self._ids(src=src, dst=dst), weight=self._file("weight", weight, "<f8"),
                   batch=int(batch))

    def remove_edges(self, src: np.ndarray, dst: np.ndarray, batch: int) -> None:
        self._call("remove_edges", **self._ids(src=src, dst=dst), batch=int(batch))

    def edge_count(self) -> int:
        return self._call("edge_count")

    # ---- workload 3 ------------------------------------------------------------------------------------------
    def load_likes(self, csv_path: str, directory: str) -> None:
        self._call("load_likes", csv=os.path.abspath(csv_path), dir=os.path.abspath(directory))

    def recommend(self, person: int) -> List[Tuple[int, int]]:
        return [(item, count) for item, count in self._call("recommend", person=int(person))]

    # ---- LDBC SNB short reads ----------------------------------------------------------------------------------
    def load_ldbc(self, data_dir: str, directory: str) -> None:
        self._texts = {q: ldbc.cypher(q) for q in ldbc.QUERIES}
        self._call("load_ldbc", data=os.path.abspath(data_dir), dir=os.path.abspath(directory))

    def ldbc_short(self, query: str, params: dict) -> List[tuple]:
        return [tuple(r) for r in self._call("cypher", query=self._texts[query], params=params)]

    def ldbc_many(self, query: str, params: List[dict]) -> List[List[tuple]]:
        results = self._call("cypher_many", query=self._texts[query], params=params)
        return [[tuple(r) for r in rows] for rows in results]

    # ---- workload 4 ------------------------------------------------------------------------------------------
    def prepare_commits(self, directory: str) -> None:
        self._call("prepare_commits", dir=os.path.abspath(directory))

    def concurrent_commits(self, threads: int, seconds: float, first_id: int) -> int:
        return self._call("concurrent_commits", threads=int(threads), seconds=float(seconds), first_id=int(first_id))

    def commit_count(self) -> int:
        return self._call("commit_count")

    # ---- server mode ---------------------------------------------------------------------------------------------
    def start_server(self, directory: str, ldbc_data: Optional[str] = None) -> str:
        with socket.socket() as s:  # a free port: the JVM binds it a moment later
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.enable_bolt(port)
        if ldbc_data:
            self.load_ldbc(ldbc_data, directory)
        else:
            self.open(directory)
        deadline = time.monotonic() + 120
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return f"127.0.0.1:{port}"
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"Neo4j's Bolt connector did not accept connections on port {port}")
                time.sleep(0.1)

    def stop_server(self) -> None:
        self.close()
        self.enable_bolt(0)
