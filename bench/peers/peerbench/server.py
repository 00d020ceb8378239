"""Workload 6, server mode: open-loop load at constant rates through `plexus loadgen` against each peer's Bolt
server, the same client for every peer.

What it owns: the worker's `server` job, its section of `peers.md` and its latency-over-time plot.

Two scenarios, each on a fresh store and a freshly started server:
- `insert`: batched parameterised inserts (10 nodes with 2 properties per request, durable), the rate stepped up
  until p99 passes 10 ms;
- `is1`: the LDBC SNB IS1 point read on the generated SNB graph of the LDBC workload, stepped until p99 passes 5 ms.

Before a scenario is timed it runs untimed at its starting rate (a JIT compiler warms up), and the answers are
checked over Bolt with the official Python driver: IS1 for the data set's sampled persons against
`bench/ldbc/check.py`'s rows before the load; after the inserts, the count of inserted nodes against the requests the
server acknowledged (warm-ups included). During the load every IS1 request must return its one row. Latency runs
from each request's scheduled send time, so a server that falls behind is charged for the queue it builds.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from typing import Any, Dict, List, Optional, Tuple

SCENARIOS = ["insert", "is1"]
TITLES = {
    "insert": "batched inserts (10 nodes per request, durable), requests/s with p99 ≤ {bound:g} ms",
    "is1": "LDBC IS1 point reads, requests/s with p99 ≤ {bound:g} ms",
}
NODES_PER_INSERT = 10


def settings(quick: bool, budget: float) -> Dict[str, Dict[str, Any]]:
    """Per scenario: loadgen's starting rate, step factor, ceiling, p99 bound, connections, and the seconds per
    phase, warm-up per phase and untimed warm-up run before stepping."""
    phase = 1.0 if quick else max(2.0, budget)
    warm = 0.0 if quick else 20.0
    return {
        # Full runs start low enough for Neo4j's sustainable rates to show, and step finely.
        "insert": {"rate": 500 if quick else 200, "factor": 2.0 if quick else 1.5, "max_rate": 4000 if quick else 40000,
                   "bound_ms": 10.0, "connections": 16 if quick else 64, "duration": phase,
                   "phase_warmup": 0.5 if quick else 1.0, "warmup": warm},
        "is1": {"rate": 1000 if quick else 400, "factor": 2.0 if quick else 1.5, "max_rate": 8000 if quick else 200000,
                "bound_ms": 5.0, "connections": 16 if quick else 32, "duration": phase,
                "phase_warmup": 0.5 if quick else 1.0, "warmup": warm},
    }


# ---- the worker's side ---------------------------------------------------------------------------------------
def loadgen(plexus: str, addr: str, scenario: str, cfg: Dict[str, Any], step: bool) -> List[Dict[str, Any]]:
    """Runs `plexus loadgen` once (stepping the rate, or one untimed warm-up phase); returns its phases."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    try:
        cmd = [plexus, "loadgen", "--bolt", addr, "--scenario", scenario, "--rate", f"{cfg['rate']:g}",
               "--connections", str(cfg["connections"]), "--json", out]
        if step:
            cmd += ["--duration", f"{cfg['duration']:g}", "--warmup", f"{cfg['phase_warmup']:g}",
                    "--step-factor", f"{cfg['factor']:g}", "--max-rate", f"{cfg['max_rate']:g}",
                    "--p99-bound-ms", f"{cfg['bound_ms']:g}", "--step-retry"]
        else:
            cmd += ["--duration", f"{cfg['warmup']:g}", "--warmup", "0"]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, PLEXUS_PASSWORD=""))
        if proc.returncode != 0:
            raise RuntimeError(f"plexus loadgen failed ({proc.returncode}): {(proc.stderr or proc.stdout)[-2000:]}")
        with open(out) as f:
            return json.load(f)
    finally:
        os.unlink(out)


def bolt_rows(addr: str, query: str, params: List[dict]) -> List[List[tuple]]:
    """Each parameter set's rows, run over Bolt by the official driver (auth off)."""
    from neo4j import GraphDatabase

    with GraphDatabase.driver(f"bolt://{addr}", auth=None) as driver, driver.session() as session:
        return [[tuple(r) for r in session.run(query, p).values()] for p in params]


def best_phase(phases: List[Dict[str, Any]], bound_ms: float) -> Optional[Dict[str, Any]]:
    """The phase with the highest achieved rate that kept up (≥ 95 % of its target) within the p99 bound."""
    ok = [p for p in phases if p["latency_ms"]["p99"] <= bound_ms and p["achieved_rate"] >= 0.95 * p["target_rate"]]
    return max(ok, key=lambda p: p["achieved_rate"], default=None)


def job(peer, spec: Dict[str, Any], emit) -> None:
    """The worker's `server` job: each scenario on a fresh store and server."""
    from . import ldbc

    plexus = spec["plexus"]
    for scenario in spec["scenarios"]:
        cfg = spec["settings"][scenario]
        work = os.path.join(spec["work"], scenario)
        os.makedirs(work, exist_ok=True)
        try:
            addr = peer.start_server(work, spec["ldbc_data"] if scenario == "is1" else None)
        except Exception as e:
            emit(kind="server", scenario=scenario, error=f"{type(e).__name__}: {e}")
            continue
        try:
            event: Dict[str, Any] = {"kind": "server", "scenario": scenario, "bound_ms": cfg["bound_ms"]}
            if scenario == "is1":
                params = spec["is1"]["params"]
                rows = bolt_rows(addr, ldbc.cypher("is1"), params)
                wrong = [{"params": p, "problems": pr[:2]} for p, exp, got in zip(params, spec["is1"]["expected"], rows)
                         if (pr := ldbc.compare("is1", exp, got))]
                event.update(checked=len(params), mismatches=len(wrong), examples=wrong[:3])
            warm = loadgen(plexus, addr, scenario, cfg, step=False) if cfg["warmup"] > 0 else []
            phases = loadgen(plexus, addr, scenario, cfg, step=True)
            event["phases"] = phases
            if scenario == "insert":
                done = sum(p["completed"] + p["warmup_completed"] for p in warm + phases)
                present = bolt_rows(addr, "MATCH (n:LoadNode) RETURN count(n) AS n", [{}])[0][0][0]
                event.update(acknowledged=done * NODES_PER_INSERT, present=present)
            event["memory"] = peer.extra_memory()
            emit(**event)
        except Exception as e:
            emit(kind="server", scenario=scenario, error=f"{type(e).__name__}: {e}")
        finally:
            peer.stop_server()


# ---- the report ------------------------------------------------------------------------------------------------
def check_event(e: Dict[str, Any]) -> Optional[str]:
    """What is wrong with a scenario's answers, or None."""
    if e.get("mismatches"):
        return f"{e['mismatches']} of {e['checked']} IS1 answers differ from the oracle, e.g. {json.dumps(e['examples'][:1])[:1500]}"
    if e["scenario"] == "insert" and e.get("acknowledged") != e.get("present"):
        return f"{e.get('acknowledged')} nodes acknowledged, {e.get('present')} present"
    if e["scenario"] == "is1":
        short = [p for p in e["phases"] if p["rows"] != p["completed"]]
        if short:
            return f"{short[0]['completed']} IS1 requests returned {short[0]['rows']} rows (one each expected)"
    return None


def section(run: Dict, peers: List[str], failures: List[str], summary: List) -> List[str]:
    """The server-mode tables: per scenario the highest rate within its bound, latency there and the server's peak
    memory; checks appended to `failures` and rows to `summary`."""
    from .report import Cell as cell, checked, events, short, table  # report imports this module

    if "server" not in run.get("workloads", []):
        return []
    cfgs = run["sizes"]["server"]
    shown = [p for p in peers if any(e.get("kind") == "server" for e in events(run, p, "server"))
             or any(e.get("kind") in ("error", "unsupported") and e.get("step") != "load" for e in events(run, p, "server"))]
    if not shown:
        return []
    md = ["## Server mode: open-loop load through `plexus loadgen` over Bolt", ""]
    rows_out, detail = [], []
    for scenario in SCENARIOS:
        cells, lat = [], []
        for p in shown:
            evs = events(run, p, "server")
            e = next((x for x in evs if x.get("kind") == "server" and x["scenario"] == scenario), None)
            if e is None:
                err = next((x.get("error", "") for x in evs if x["kind"] in ("error", "unsupported")), "did not run")
                cells.append(cell(None, short(err)))
                lat.append("—")
                continue
            if "error" in e:
                failures.append(f"{p}: server {scenario}: {e['error']}")
                cells.append(cell(None, short(e["error"])))
                lat.append("—")
                continue
            problem = check_event(e)
            if not checked(problem, None):
                failures.append(f"{p}: server {scenario}: {problem}")
                cells.append(cell(None, "**wrong**"))
                lat.append("—")
                continue
            best = best_phase(e["phases"], e["bound_ms"])
            errors = sum(ph["errors"] for ph in e["phases"])
            if best is None:  # the lowest p99 at the starting rate (it may have been run twice)
                start = [ph for ph in e["phases"] if ph["target_rate"] == e["phases"][0]["target_rate"]]
                first = min(start, key=lambda ph: ph["latency_ms"]["p99"])
                cells.append(cell(None, f"p99 {first['latency_ms']['p99']:.1f} ms at {first['target_rate']:g}/s"))
                lat.append("—")
            else:
                cells.append(cell(best["achieved_rate"]))
                l = best["latency_ms"]
                lat.append(f"p50 {l['p50']:.2f}, p99 {l['p99']:.2f}, max {l['max']:.1f} ms; "
                           f"{errors} errors; server peak {e['memory'] / 2**20:.0f} MiB")
        bound = cfgs[scenario]["bound_ms"]
        label = TITLES[scenario].format(bound=bound)
        rows_out.append((label, cells))
        detail.append((scenario, lat))
    md += table(["scenario", *shown], rows_out, "")
    summary += [(f"server mode, {label}", cells, 1.0) for label, cells in rows_out]
    md += ["", "| at that rate | " + " | ".join(shown) + " |", "|---" + "|---" * len(shown) + "|"]
    md += [f"| {s} | " + " | ".join(lat) + " |" for s, lat in detail]
    i, c = cfgs["insert"], cfgs["is1"]
    warm = f"an untimed run of {i['warmup']:g} s at the starting rate; " if i["warmup"] else ""
    md += ["", f"Each scenario: a fresh store and server; {warm}"
           f"then phases of {i['duration']:g} s (after {i['phase_warmup']:g} s unmeasured) with the rate multiplied "
           f"by {i['factor']:g} (inserts, from {i['rate']:g}/s, {i['connections']} connections) or {c['factor']:g} "
           f"(IS1, from {c['rate']:g}/s, {c['connections']} connections) while p99 stays within the bound and the "
           "achieved rate keeps up (a phase that misses is run once more at the same rate before stepping stops). Server and load generator share the machine. IS1 runs on the generated SNB graph of "
           "the LDBC section; its answers for the sampled persons are checked over Bolt with the official driver "
           "before the load, and the inserted nodes are counted against the acknowledged requests after it.", ""]
    return md


def plot(run: Dict, base: str, peers: List[str]) -> Optional[Tuple[str, str]]:
    """Per scenario, p50 and p99 of every second of the stepped phases, one line per peer."""
    from .report import events

    series = {}
    for p in peers:
        for e in events(run, p, "server"):
            if e.get("kind") == "server" and "phases" in e:
                t, pts = 0.0, []
                for ph in e["phases"]:
                    for s in ph["seconds"]:
                        pts.append((t + s["second"], s["latency_ms"]["p50"], s["latency_ms"]["p99"], ph["target_rate"]))
                    t += max((s["second"] for s in ph["seconds"]), default=0) + 1
                series[(e["scenario"], p)] = pts
    if not series:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(SCENARIOS), figsize=(12, 4.5))
    plotted = [p for p in peers if any((s, p) in series for s in SCENARIOS)]
    for ax, scenario in zip(axes, SCENARIOS):
        for i, p in enumerate(plotted):
            pts = series.get((scenario, p))
            if not pts:
                continue
            color = f"C{i % 10}"
            ax.plot([x[0] for x in pts], [x[2] for x in pts], color=color, label=f"{p} p99")
            ax.plot([x[0] for x in pts], [x[1] for x in pts], color=color, linestyle="--", label=f"{p} p50")
        ax.set_yscale("log")
        ax.set_xlabel("seconds of measured load (the rate steps up each phase)")
        ax.set_ylabel("latency per second, ms (log)")
        ax.set_title(f"Server mode: {scenario}")
        ax.legend(fontsize=7)
    fig.tight_layout()
    path = f"{base}-server-latency.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return ("server-mode latency over time", path)
