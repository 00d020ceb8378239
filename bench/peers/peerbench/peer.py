"""The contract every peer implements: what a workload asks of a database or library, and nothing about timing.

A peer is driven inside a worker process (`peerbench.worker`), one process per peer and data set, so that its peak
memory, the bytes it writes and its size on disk are its own. The worker times each call; a peer only does the
work, through its fastest honest path (bulk loader, prepared or parameterised statements, indexes on the lookup
columns, batch APIs), and returns checksums that the orchestrator compares with an independent NumPy oracle before
any time is reported.

Conventions for the edge-list workloads:
- The graph is simple and directed: `src,dst,weight` lines without a header, integer ids, no duplicate pairs and no
  self-loops (the data preparation removes them, so a store that merges parallel edges and one that keeps them give
  the same answers). A vertex exists iff it is an end of some edge.
- Query arrays are NumPy `int64` (ids) and `float64` (weights) arrays of equal length; a peer may loop over them in
  Python or hand them to a batch API, whichever is fastest for it.
- Checksums are plain Python numbers; sums of neighbour ids are exact integers, sums of weights are floats compared
  with a relative tolerance.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np


class Unsupported(Exception):
    """Raised by a peer for a workload it cannot run (reported as such, never as a time)."""


class Peer:
    #: Short name used on the command line and in file names.
    name = "peer"
    #: Name shown in the results tables.
    title = "Peer"
    #: Whether an acknowledged write survives a crash (in-memory libraries are not).
    durable = True
    #: Whether several threads may commit at once (workload 4); a peer without it runs only one committer.
    concurrent_writers = True

    # ---- lifecycle -------------------------------------------------------------------------------------------
    def version(self) -> str:
        """The peer's version, as pinned in the results."""
        raise NotImplementedError

    def open(self, directory: str) -> None:
        """Creates an empty store in `directory` (which exists and is empty). In-memory peers ignore it."""
        raise NotImplementedError

    def close(self) -> None:
        """Flushes and closes the store; the disk size is measured after this."""

    def extra_memory(self) -> int:
        """Peak resident bytes of processes other than the worker that the peer runs (a server, a JVM); 0 if none."""
        return 0

    def extra_written(self) -> int:
        """Bytes written to storage by such processes since `open`; 0 if none."""
        return 0

    # ---- workload 1: import -------------------------------------------------------------------------------------
    def import_edges(self, csv_path: str) -> None:
        """Bulk-loads the edge list at `csv_path` into the (empty) store, with whatever indexes the read workload
        needs built and durable on return."""
        raise NotImplementedError

    # ---- workload 2: random reads -------------------------------------------------------------------------------
    def find_edges(self, src: np.ndarray, dst: np.ndarray) -> int:
        """How many of the pairs `(src[i], dst[i])` are edges `src -> dst`."""
        raise NotImplementedError

    def out_edges(self, v: np.ndarray) -> Tuple[int, int, float]:
        """All outgoing edges of each `v[i]`, fetched to the client: (number of edges, sum of target ids, sum of
        weights), summed over the queries (a vertex queried twice counts twice)."""
        raise NotImplementedError

    def in_edges(self, v: np.ndarray) -> Tuple[int, int, float]:
        """Like `out_edges` for incoming edges: (number, sum of source ids, sum of weights)."""
        raise NotImplementedError

    def unique_neighbours(self, v: np.ndarray) -> Tuple[int, int]:
        """The distinct neighbours of each `v[i]` in either direction, fetched to the client: (number, sum of
        their ids), summed over the queries."""
        raise NotImplementedError

    def out_degree_weight(self, v: np.ndarray) -> Tuple[int, float]:
        """Out-degree and summed weight of the outgoing edges of each `v[i]`, computed by the store without
        fetching the edges: (sum of degrees, sum of weights)."""
        raise NotImplementedError

    def in_degree_weight(self, v: np.ndarray) -> Tuple[int, float]:
        """Like `out_degree_weight` for incoming edges."""
        raise NotImplementedError

    # ---- workload 2: random writes ------------------------------------------------------------------------------
    def upsert_edges(self, src: np.ndarray, dst: np.ndarray, weight: np.ndarray, batch: int) -> None:
        """Upserts each edge `src[i] -> dst[i]` with `weight[i]` (creates it, or sets the weight if it exists),
        `batch` edges per transaction (1: every edge its own durable transaction)."""
        raise NotImplementedError

    def remove_edges(self, src: np.ndarray, dst: np.ndarray, batch: int) -> None:
        """Removes each edge `src[i] -> dst[i]` if it exists, `batch` per transaction; the vertices stay."""
        raise NotImplementedError

    def edge_count(self) -> int:
        """The number of edges now in the store (checks that the writes did what they said)."""
        raise NotImplementedError

    # ---- workload 3: recommendation traversal ---------------------------------------------------------------
    def load_likes(self, csv_path: str, directory: str) -> None:
        """Loads a GuancialeDB likes graph into a fresh store in `directory`: `person,item` lines, people and
        items in disjoint id ranges, a person likes an item at most once."""
        raise NotImplementedError

    def recommend(self, person: int) -> List[Tuple[int, int]]:
        """Items liked by people who like what `person` likes, minus the person's own likes, with how many such
        paths reach each: the top 10 as (item, count), by count descending then item ascending."""
        raise NotImplementedError

    # ---- workload 4: small concurrent durable transactions --------------------------------------------------
    def prepare_commits(self, directory: str) -> None:
        """Opens a fresh store in `directory` for the commit workload (one seed vertex with id 0)."""
        raise NotImplementedError

    def writer(self) -> Any:
        """A per-thread handle (a connection or session) for `small_transaction`."""
        return None

    def small_transaction(self, handle: Any, node_id: int) -> None:
        """One durable transaction: create a vertex `node_id` and an edge from it to vertex 0; returns after the
        commit is acknowledged (durable: fsynced, or whatever the peer's durable default promises)."""
        raise NotImplementedError

    def concurrent_commits(self, threads: int, seconds: float, first_id: int) -> int:
        """Runs `threads` committers for `seconds`; returns how many transactions were acknowledged. Node ids are
        `first_id + thread * 10**9 + k`. Peers whose committers live outside Python (a JVM) override this."""
        if threads > 1 and not self.concurrent_writers:
            raise Unsupported("one writer at a time")
        stop = time.perf_counter() + seconds
        done = [0] * threads
        errors: List[BaseException] = []

        def run(t: int) -> None:
            try:
                handle = self.writer()
                k = 0
                while time.perf_counter() < stop:
                    self.small_transaction(handle, first_id + t * 10**9 + k)
                    k += 1
                done[t] = k
                self.release_writer(handle)
            except BaseException as e:  # surfaced below, with the first error
                errors.append(e)

        pool = [threading.Thread(target=run, args=(t,)) for t in range(threads)]
        for th in pool:
            th.start()
        for th in pool:
            th.join()
        if errors:
            raise errors[0]
        return sum(done)

    def release_writer(self, handle: Any) -> None:
        """Closes a handle from `writer`."""

    def commit_count(self) -> int:
        """Vertices in the commit store (checks that every acknowledged commit is there)."""
        raise NotImplementedError

    # ---- workload 5: LDBC SNB Interactive short reads (peerbench/ldbc.py) --------------------------------------
    def load_ldbc(self, data_dir: str, directory: str) -> None:
        """Loads the LDBC SNB CsvComposite layout at `data_dir` (`static/` and `dynamic/` of `|`-separated files
        with a header row, dates as epoch milliseconds) into a fresh store in `directory`, with the peer's fastest
        honest loader and the indexes the short reads need, durable on return."""
        raise Unsupported("LDBC SNB short reads not implemented")

    def ldbc_short(self, query: str, params: dict) -> List[tuple]:
        """Runs the short read `query` (`is1` … `is7`) with `params` (`personId` or `messageId`): the rows as
        tuples in the specification's columns, order and limit (bench/ldbc/README.md), booleans as `bool`."""
        raise Unsupported("LDBC SNB short reads not implemented")

    def ldbc_many(self, query: str, params: List[dict]) -> List[List[tuple]]:
        """`ldbc_short` for each of `params` in turn, one execution after the other (the timed loop calls this);
        a peer behind a pipe (a JVM) overrides it to run the loop on its side of the pipe."""
        return [self.ldbc_short(query, p) for p in params]

    # ---- workload 6: server mode (peerbench/server.py) ---------------------------------------------------------
    def start_server(self, directory: str, ldbc_data: Optional[str] = None) -> str:
        """Starts the peer as a server speaking Bolt on loopback, on a fresh durable store in `directory` (with
        the LDBC SNB data at `ldbc_data` loaded first, as `load_ldbc` loads it, when given); returns `HOST:PORT`
        once it accepts connections. Auth off or any password accepted: the load generator sends none."""
        raise Unsupported("no Bolt server")

    def stop_server(self) -> None:
        """Stops what `start_server` started, durably (a clean shutdown)."""


def proc_fields(pid, path: str, fields: Tuple[str, ...]) -> List[int]:
    """The numbers of `fields` in `/proc/<pid>/<path>` (`status` in kB, `io` in bytes; `pid` may be "self"), 0 for
    a field that is missing or a process that is gone."""
    out = [0] * len(fields)
    try:
        with open(f"/proc/{pid}/{path}") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in fields:
                    out[fields.index(key)] = int(rest.split()[0])
    except (OSError, ValueError):
        pass
    return out


def proc_field(pid, path: str, field: str) -> int:
    """One field of `proc_fields`."""
    return proc_fields(pid, path, (field,))[0]


def dir_size(path: str) -> int:
    """Bytes of the files under `path` (allocated size, as `du` counts)."""
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            try:
                st = os.lstat(os.path.join(root, f))
            except OSError:
                continue
            total += st.st_blocks * 512
    return total


def chunks(n: int, size: int) -> Sequence[slice]:
    """Slices cutting `range(n)` into pieces of at most `size`."""
    return [slice(i, min(i + size, n)) for i in range(0, n, size)]
