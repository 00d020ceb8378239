"""Runs the peer benchmarks: every peer on the same data sets in one run, answers checked before times are shown.

    bench/peers/run.sh [--quick] [--peers plexus,sqlite,...] [--workloads import,reads,writes,likes,commits,ldbc]

(`run.sh` makes the virtualenvs and builds Plexus; this module is what it runs.) Each (peer, job) runs in a fresh
worker process under the peer's interpreter with a time limit; a peer that fails to install, errs, times out or
answers wrongly is reported as such in the results, never dropped.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from typing import Any, Dict, List

from . import baseline, ldbc, report, server
from .data import prepare_edges, prepare_likes
from .peers import INTERPRETER, REGISTRY, SERVERS

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
ALL_WORKLOADS = ["import", "reads", "writes", "likes", "commits", "ldbc", "server"]
DATASETS = {"patents": "patents", "mouse-genes": "mouse-genes"}


def sizes(args) -> Dict[str, Any]:
    if args.quick:
        return {
            "scales": {"patents": 0.005, "mouse-genes": 0.01},
            "queries": 2_000,
            "single_writes": 100,
            "batch_writes": 1_000,
            "likes_people": 0.02,
            "likes_budget": 0.3,
            "threads": [1, 4, 16],
            "commit_seconds": 0.3,
            "snb_scale": 0.01,
            "ldbc_params": 20,
            "ldbc_budget": 0.3,
            "ldbc_warmup": 0.15,
            "ldbc_max_warmup": 3.0,
            "timeout": 300,
            "read_budget": 2.0,
            "server": server.settings(True, 1.0),
        }
    return {
        "scales": {"patents": args.scale, "mouse-genes": args.scale},
        "queries": 100_000,
        "single_writes": 1_000,
        "batch_writes": 20_000,
        "likes_people": 1.0,
        "likes_budget": args.budget,
        "threads": [1, 2, 4, 8, 16, 32, 64, 128, 256],
        "commit_seconds": args.budget,
        "snb_scale": args.scale,
        "ldbc_params": 100,
        "ldbc_budget": 2.0,
        "ldbc_warmup": 2.0,
        "ldbc_max_warmup": 60.0,
        "timeout": args.timeout,
        "read_budget": args.budget,
        "server": server.settings(False, args.budget),
    }


def interpreter(peer: str) -> str:
    venv = INTERPRETER[peer]
    return os.environ.get(f"PEERBENCH_{venv.upper()}") or os.path.join(ROOT, "target", "peers", venv, "bin", "python")


def run_worker(peer: str, spec: Dict[str, Any], timeout: float) -> List[Dict[str, Any]]:
    """Runs one job; returns its events (plus a synthetic error event on a crash or time-out)."""
    python = interpreter(peer)
    if not os.path.exists(python):
        return [{"kind": "error", "step": "load", "error": f"no interpreter for {peer}: {python} is missing"}]
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "bench", "peers"), PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [python, "-m", "peerbench.worker"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    timed_out = False
    try:
        out, err = proc.communicate(json.dumps(dict(spec, peer=peer)), timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, 9)
        out, err = proc.communicate()
    events = []
    for line in out.splitlines():
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            pass  # a peer's own chatter on stdout
    if timed_out:
        events.append({"kind": "error", "step": spec["job"], "error": f"timed out after {timeout:.0f} s"})
    elif proc.returncode != 0 and not any(e.get("kind") == "error" for e in events):
        tail = " | ".join(err.strip().splitlines()[-3:])
        events.append({"kind": "error", "step": spec["job"], "error": f"worker exited with {proc.returncode}: {tail}"})
    return events


def progress(peer: str, job: str, events: List[Dict[str, Any]]) -> None:
    """One line per job on the terminal, so a long run shows where it is."""
    parts = []
    for e in events:
        if e["kind"] == "import":
            parts.append(f"import {e['edges'] / e['seconds']:,.0f} edges/s")
        elif e["kind"] in ("read", "write", "likes", "commits", "ldbc") and "seconds" in e:
            name = e.get("op") or e.get("query") or e.get("row", e.get("threads"))
            parts.append(f"{name} {e['ops'] / e['seconds']:,.0f}/s")
        elif e["kind"] == "server" and "phases" in e:
            best = server.best_phase(e["phases"], e["bound_ms"])
            parts.append(f"{e['scenario']} " + (f"{best['achieved_rate']:,.0f}/s within {e['bound_ms']:g} ms"
                                                 if best else f"p99 over {e['bound_ms']:g} ms from the start"))
        elif e["kind"] in ("error", "unsupported") or (e["kind"] == "server" and "error" in e):
            parts.append(f"{e['kind']}: {e.get('error', '')[:200]}")
    print(f"  {peer} {job}: " + "; ".join(parts), flush=True)


def fresh(path: str) -> str:
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small data and short runs (CI smoke)")
    ap.add_argument("--scale", type=float, default=0.1, help="data-set scale for the full run (1 = published size)")
    ap.add_argument("--peers", default=",".join(REGISTRY), help="comma-separated peers (default: all)")
    ap.add_argument("--workloads", default=",".join(ALL_WORKLOADS))
    ap.add_argument("--plexus", default=os.path.join(ROOT, "target", "release", "plexus"), help="plexus binary")
    ap.add_argument("--work", default=os.path.join(ROOT, "target", "peers", "work"), help="scratch directory")
    ap.add_argument("--out", default=None, help="results markdown (default bench/results/peers.md, quick: under target/)")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per peer and job (full run)")
    ap.add_argument("--budget", type=float, default=5.0,
                    help="seconds a slow peer gets per operation, recommendation row and committer count (full run)")
    ap.add_argument("--require", default="", help="peers that must pass every check (exit status 1 otherwise)")
    args = ap.parse_args()

    peers = [p for p in args.peers.split(",") if p]
    unknown = [p for p in peers if p not in REGISTRY]
    if unknown:
        sys.exit(f"unknown peers: {', '.join(unknown)} (known: {', '.join(REGISTRY)})")
    workloads = [w for w in args.workloads.split(",") if w]
    size = sizes(args)
    mode = "quick" if args.quick else f"scale-{args.scale:g}"
    data_root = os.path.join(args.work, "data", mode)
    out = args.out or (
        os.path.join(ROOT, "target", "peers", "peers-quick.md") if args.quick else os.path.join(ROOT, "bench", "results", "peers.md")
    )
    command = os.environ.get("PEERBENCH_COMMAND") or "python -m peerbench " + " ".join(sys.argv[1:])
    run: Dict[str, Any] = {
        "command": command.strip(),
        "mode": mode,
        "machine": report.machine(),
        "load_start": os.getloadavg(),
        "sizes": size,
        "peers": {},
        "datasets": {},
        "likes": None,
        "ldbc": {},
        "workloads": workloads,
        "started": time.time(),
    }

    ldbc_sets: Dict[str, Any] = {}
    edge_jobs = {"import", "reads", "writes"} & set(workloads)
    if edge_jobs:
        for ds, preset in DATASETS.items():
            print(f"data: {ds} at scale {size['scales'][ds]}", flush=True)
            expected = prepare_edges(args.plexus, preset, size["scales"][ds], os.path.join(data_root, ds), size)
            run["datasets"][ds] = {
                "expected": expected,
                "dir": os.path.join(data_root, ds),
                "baseline": baseline.parse_only(os.path.join(data_root, ds, "edges.csv")),
            }
    if "likes" in workloads:
        run["likes"] = prepare_likes(args.plexus, os.path.join(data_root, "likes"), size["likes_people"])
    server_data = None
    if "ldbc" in workloads or "server" in workloads:
        print(f"data: LDBC SNB tiny and generated at scale {size['snb_scale']:g}", flush=True)
        prepared = ldbc.prepare(args.plexus, os.path.join(data_root, "ldbc"), size["snb_scale"], size["ldbc_params"])
        if "ldbc" in workloads:
            ldbc_sets = prepared
            run["ldbc"] = ldbc.summary(ldbc_sets)
        server_data = prepared.get("generated")
        os.environ["PEERBENCH_PLEXUS"] = os.path.abspath(args.plexus)  # the plexus peer imports with this binary

    for peer in peers:
        results: Dict[str, Any] = {"jobs": {}}
        run["peers"][peer] = results
        if edge_jobs:
            for ds in DATASETS:
                spec = {"job": "edges", "data": os.path.join(data_root, ds), "work": fresh(os.path.join(args.work, peer)),
                        "batch": 500, "warmup": min(1000, size["queries"] // 10), "budget": size["read_budget"],
                        "writes": "writes" in workloads}
                results["jobs"][ds] = run_worker(peer, spec, size["timeout"])
                progress(peer, ds, results["jobs"][ds])
        if "likes" in workloads:
            spec = {"job": "likes", "rows": run["likes"], "work": fresh(os.path.join(args.work, peer)), "budget": size["likes_budget"]}
            results["jobs"]["likes"] = run_worker(peer, spec, size["timeout"])
            progress(peer, "likes", results["jobs"]["likes"])
        if "commits" in workloads:
            spec = {"job": "commits", "work": fresh(os.path.join(args.work, peer)), "threads": size["threads"],
                    "seconds": size["commit_seconds"]}
            results["jobs"]["commits"] = run_worker(peer, spec, size["timeout"])
            progress(peer, "commits", results["jobs"]["commits"])
        for ds, info in ldbc_sets.items():
            if "missing" in info:
                continue
            spec = {"job": "ldbc", "data": info["vanilla"], "work": fresh(os.path.join(args.work, peer)),
                    "queries": info["queries"], "budget": size["ldbc_budget"],
                    "warmup": size["ldbc_warmup"], "max_warmup": size["ldbc_max_warmup"]}
            results["jobs"][f"ldbc/{ds}"] = run_worker(peer, spec, size["timeout"])
            progress(peer, f"ldbc {ds}", results["jobs"][f"ldbc/{ds}"])
        if "server" in workloads and peer in SERVERS:
            if server_data is None or "missing" in server_data:
                results["jobs"]["server"] = [{"kind": "error", "step": "server", "error": "no generated SNB data: "
                                              + (server_data or {}).get("missing", "not prepared")}]
            else:
                spec = {"job": "server", "work": fresh(os.path.join(args.work, peer)), "plexus": os.path.abspath(args.plexus),
                        "ldbc_data": server_data["vanilla"], "settings": size["server"], "scenarios": server.SCENARIOS,
                        "is1": server_data["queries"]["is1"]}
                results["jobs"]["server"] = run_worker(peer, spec, size["timeout"])
            progress(peer, "server", results["jobs"]["server"])
        shutil.rmtree(os.path.join(args.work, peer), ignore_errors=True)
        # The results so far, after every peer: a long run that is stopped still leaves its tables.
        run["load_end"] = os.getloadavg()
        run["finished"] = time.time()
        failures = report.write(run, out)

    if not peers:
        failures = report.write(run, out)
    print(f"results: {os.path.relpath(out, os.getcwd())}", flush=True)
    required = [p for p in args.require.split(",") if p]
    bad = [f for f in failures if f.split(":")[0] in required]
    for f in bad:
        print(f"FAILED {f}", file=sys.stderr)
    print(f"peers: {report.CHECKS['passed']} passed, {len(failures)} failed", flush=True)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
