"""Runs one peer on one job in this process and prints one JSON object per measurement on stdout.

    echo '{"peer": "sqlite", "job": "edges", "data": DIR, "work": DIR, ...}' | python -m peerbench.worker

(the job's spec is read from standard input, or from the first argument when one is given).

Jobs:
- `edges`: import the data set's edge list, then the random-read op set, then the random-write op set, on one
  store; the import's peak memory, bytes written and size on disk are this process's (plus the peer's server or
  JVM, which the peer reports).
- `likes`: the recommendation traversal on each parameter row, a fresh store per row.
- `commits`: small durable transactions at each number of committers.
- `ldbc`: load an LDBC SNB data set (timed), then for each short read IS1–IS7 run every parameter of the spec and
  compare each answer with the expected rows the spec carries (`peerbench/ldbc.py`) and warm up (the same parameters
  in a shuffled order, cycling, until the rate stops rising); once every query has warmed up, time each for the
  budget after one more warm-up round.
- `server`: the server-mode scenarios (`peerbench/server.py`): the peer's Bolt server under `plexus loadgen`.

Every line is `{"kind": ..., ...}`; an exception in one step is reported as `{"kind": "error", "step": ...}` and
ends the job (later steps would run on a store in an unknown state).
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
import traceback
from typing import Any, Callable, Dict, List, Tuple

import numpy as np

from .peer import Unsupported, dir_size, proc_field
from .peers import load


def emit(**fields: Any) -> None:
    print(json.dumps(fields), flush=True)


def proc_status(field: str) -> int:
    """A `VmRSS`/`VmHWM` line of /proc/self/status, in bytes."""
    return proc_field("self", "status", field) * 1024


def reset_peak_rss() -> None:
    """Resets VmHWM to the current RSS (Linux ≥ 4.0), so each step's peak is its own."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def written_bytes() -> int:
    """Bytes this process caused to be written to storage (`write_bytes` of /proc/self/io)."""
    return proc_field("self", "io", "write_bytes")


def timed(fn: Callable[[], Any]):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def plain(x: Any) -> Any:
    """NumPy scalars and tuples to JSON-able values."""
    if isinstance(x, (tuple, list)):
        return [plain(v) for v in x]
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    return x


def edges_job(peer, spec: Dict[str, Any]) -> None:
    data, work = spec["data"], spec["work"]
    q = np.load(os.path.join(data, "queries.npz"))
    baseline = proc_status("VmRSS")
    reset_peak_rss()
    written0 = written_bytes()
    peer.open(work)
    secs, _ = timed(lambda: peer.import_edges(os.path.join(data, "edges.csv")))
    emit(
        kind="import",
        seconds=secs,
        peak_memory=max(0, proc_status("VmHWM") - baseline) + peer.extra_memory(),
        written=written_bytes() - written0 + peer.extra_written(),
        disk=dir_size(work),
        edges=peer.edge_count(),
    )

    warm = int(spec.get("warmup", 1000))
    reads = [
        ("find_edges", lambda n: peer.find_edges(q["pair_src"][:n], q["pair_dst"][:n]), len(q["pair_src"])),
    ]
    for dist in ("uniform", "skewed"):
        v = q[f"{dist}_vertices"]
        for op in ("out_edges", "in_edges", "unique_neighbours", "out_degree_weight", "in_degree_weight"):
            reads.append((f"{op}/{dist}", (lambda fn, v: lambda n: fn(v[:n]))(getattr(peer, op), v), len(v)))
    budget = float(spec.get("budget", 30.0))
    for name, run, total in reads:
        try:
            run(min(warm, total))
            # A slow peer is timed on a prefix of the queries: grow it fourfold while the last run took less
            # than a quarter of the budget (the orchestrator checks the answer for that prefix).
            n = min(total, max(warm, 1000))
            while True:
                secs, out = timed(lambda: run(n))
                if n >= total or secs * 4 > budget:
                    break
                n = min(total, n * 4)
            # The best of up to three calls at that size, as long as they fit the budget: one call's time moved
            # by up to 6x between runs with the memory the kernel handed it (fresh pages faulted in or not).
            for _ in range(2):
                if secs * 2 > budget:
                    break
                secs = min(secs, timed(lambda: run(n))[0])
            emit(kind="read", op=name, seconds=secs, ops=n, answer=plain(out))
        except Unsupported as e:
            emit(kind="read", op=name, unsupported=str(e))

    if not spec.get("writes", True):
        peer.close()
        return
    base = peer.edge_count()
    for batch, key in ((1, "single"), (int(spec.get("batch", 500)), "batch")):
        s, d, w = q[f"write_{key}_src"], q[f"write_{key}_dst"], q[f"write_{key}_weight"]
        # Within the budget: a peer whose every change costs a rebuild (igraph) or an fsync is timed on a prefix.
        step = max(batch, 10)
        start, n = time.perf_counter(), 0
        while n < len(s) and time.perf_counter() - start < budget:
            peer.upsert_edges(s[n : n + step], d[n : n + step], w[n : n + step], batch)
            n = min(len(s), n + step)
        secs = time.perf_counter() - start
        emit(kind="write", op=f"upsert/{key}", seconds=secs, ops=n, batch=batch, answer=peer.edge_count() - base)
        secs, _ = timed(lambda: peer.remove_edges(s[:n], d[:n], batch))
        emit(kind="write", op=f"remove/{key}", seconds=secs, ops=n, batch=batch, answer=peer.edge_count() - base)
    peer.close()


def likes_job(peer, spec: Dict[str, Any]) -> None:
    for row in spec["rows"]:
        work = os.path.join(spec["work"], f"row{row['index']}")
        os.makedirs(work, exist_ok=True)
        secs_load, _ = timed(lambda: peer.load_likes(row["csv"], work))
        budget = float(spec.get("budget", 2.0))
        # The checked people come first (at least one; the rest while within the budget: a peer that takes
        # a minute per recommendation is still checked and timed, in minutes rather than an hour).
        answers = []
        start = time.perf_counter()
        for p in row["check"]:
            answers.append(plain(peer.recommend(int(p))))
            if time.perf_counter() - start > budget:
                break
        people = row["time"]
        start = time.perf_counter()
        done = 0
        for p in people:
            peer.recommend(int(p))
            done += 1
            if time.perf_counter() - start > budget:
                break
        secs = time.perf_counter() - start
        emit(kind="likes", row=row["index"], load_seconds=secs_load, seconds=secs, ops=done, answer=answers)
        peer.close()


def commits_job(peer, spec: Dict[str, Any]) -> None:
    peer.prepare_commits(spec["work"])
    first = 1
    total = 0
    for threads in spec["threads"]:
        try:
            n = peer.concurrent_commits(threads, float(spec["seconds"]), first)
        except Unsupported as e:
            emit(kind="commits", threads=threads, unsupported=str(e))
            continue
        total += n
        first += (threads + 1) * 10**9
        emit(kind="commits", threads=threads, seconds=float(spec["seconds"]), ops=n)
    emit(kind="commits_check", acknowledged=total + 1, present=peer.commit_count())
    peer.close()


def ldbc_pass(peer, query: str, order: List[dict], seconds: float) -> Tuple[float, int]:
    """Runs `query` over `order` (cycling) for `seconds` and at least 3 executions, in batches (`ldbc_many`) that
    double while a batch takes under 10 ms; returns (seconds, executions)."""
    done, batch = 0, 1
    start = time.perf_counter()
    while done < 3 or time.perf_counter() - start < seconds:
        t = time.perf_counter()
        peer.ldbc_many(query, [order[(done + i) % len(order)] for i in range(batch)])
        done += batch
        if time.perf_counter() - t < 0.01 and batch < 256:
            batch *= 2
    return time.perf_counter() - start, done


def ldbc_job(peer, spec: Dict[str, Any]) -> None:
    from . import ldbc

    secs_load, _ = timed(lambda: peer.load_ldbc(spec["data"], spec["work"]))
    emit(kind="ldbc_load", seconds=secs_load)
    budget = float(spec.get("budget", 2.0))
    warmup = float(spec.get("warmup", budget))
    max_warmup = float(spec.get("max_warmup", 60.0))
    ready = {}
    for q, work in spec["queries"].items():  # check every answer, then warm up
        params = work["params"]
        try:
            wrong = []
            for p, expected in zip(params, work["expected"]):
                problems = ldbc.compare(q, expected, peer.ldbc_short(q, p))
                if problems:
                    wrong.append({"params": p, "problems": problems[:2]})
            order = random.Random(7).sample(params, len(params))
            # Untimed warm-up, as a JIT compiler needs tens of seconds: rounds of `warmup` seconds until two rounds in
            # a row are no more than 10 % faster than the fastest before them, at most `max_warmup` seconds.
            warmed, best, flat = 0.0, 0.0, 0
            while warmed < max_warmup and flat < 2:
                secs, done = ldbc_pass(peer, q, order, warmup)
                warmed += secs
                flat = flat + 1 if done / secs <= best * 1.1 else 0
                best = max(best, done / secs)
            ready[q] = (order, warmed, len(params), wrong)
        except Unsupported as e:
            emit(kind="ldbc", query=q, unsupported=str(e))
        except Exception as e:  # a query the peer cannot run; the store is read-only here, so the others go on
            emit(kind="ldbc", query=q, error=f"{type(e).__name__}: {e}", trace=traceback.format_exc(limit=5))
    # Timed once every query has warmed up (what a JIT compiled for the later ones serves the first ones too).
    for q, (order, warmed, checked, wrong) in ready.items():
        try:
            ldbc_pass(peer, q, order, warmup)
            secs, done = ldbc_pass(peer, q, order, budget)
            emit(kind="ldbc", query=q, load_seconds=secs_load, seconds=secs, ops=done, warmup_seconds=warmed,
                 checked=checked, mismatches=len(wrong), examples=wrong[:3])
        except Exception as e:
            emit(kind="ldbc", query=q, error=f"{type(e).__name__}: {e}", trace=traceback.format_exc(limit=5))
    peer.close()


def server_job(peer, spec: Dict[str, Any]) -> None:
    from . import server

    server.job(peer, spec, emit)


JOBS = {"edges": edges_job, "likes": likes_job, "commits": commits_job, "ldbc": ldbc_job, "server": server_job}


def main() -> None:
    spec = json.loads(sys.argv[1] if len(sys.argv) > 1 else sys.stdin.read())
    try:
        peer = load(spec["peer"])
        emit(kind="version", version=peer.version(), durable=peer.durable)
    except Exception as e:  # the peer's package is missing or broken: reported, never dropped
        emit(kind="error", step="load", error=f"{type(e).__name__}: {e}", trace=traceback.format_exc(limit=3))
        return
    try:
        JOBS[spec["job"]](peer, spec)
    except Unsupported as e:
        emit(kind="unsupported", job=spec["job"], error=str(e))
    except Exception as e:
        emit(kind="error", step=spec["job"], error=f"{type(e).__name__}: {e}", trace=traceback.format_exc(limit=5))


if __name__ == "__main__":
    main()
