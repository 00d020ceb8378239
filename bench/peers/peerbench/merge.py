"""Merges the raw JSON of several runs on the same data (e.g. one peer rerun, or peers run separately) into one
results file, re-checking every answer.

    python -m peerbench.merge --out bench/results/peers.md target/peers/a.json target/peers/b.json

A job (data set, workload) that several runs ran for the same peer is taken from the last run given, keeping the
earlier runs' measurements of operations the last one did not run (e.g. the write rows of an edge-list job whose
reads alone were rerun). The runs must share the mode (quick or scale).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from . import report

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def load(path: str) -> dict:
    with open(path) as f:
        run = json.load(f)
    for info in run.get("datasets", {}).values():
        info["dir"] = os.path.join(ROOT, info["dir"])  # stored relative to the repository
    return run


def merge_events(earlier, later):
    """A job's events from a later run, plus the earlier run's measurements of operations the later one did not
    run (a rerun of the reads of an edge-list job keeps that job's write rows)."""
    if not isinstance(earlier, list) or not isinstance(later, list):
        return later
    ran = {(e.get("kind"), e.get("op")) for e in later if isinstance(e, dict)}
    kept = [e for e in earlier if isinstance(e, dict) and e.get("kind") in ("read", "write", "import")
            and (e.get("kind"), e.get("op")) not in ran]
    return later + kept


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("runs", nargs="+")
    args = ap.parse_args()
    runs = [load(p) for p in args.runs]
    merged = runs[0]
    for other in runs[1:]:
        if other["mode"] != merged["mode"]:
            sys.exit(f"cannot merge a {other['mode']} run into a {merged['mode']} run")
        for peer, results in other["peers"].items():
            jobs = merged["peers"].setdefault(peer, {"jobs": {}})["jobs"]
            for name, events in results["jobs"].items():
                jobs[name] = merge_events(jobs.get(name), events)
        merged["command"] += "\n" + other["command"]
        merged["started"] = min(merged["started"], other["started"])
        merged["finished"] = max(merged["finished"], other["finished"])
        merged["load_end"] = other["load_end"]
        merged["workloads"] = list(dict.fromkeys(merged.get("workloads", []) + other.get("workloads", [])))
        if "server" in other["sizes"]:
            merged["sizes"].setdefault("server", other["sizes"]["server"])
        for key in ("datasets", "likes", "ldbc"):
            if not merged.get(key) and other.get(key):
                merged[key] = other[key]
    merged["merged_from"] = len(runs)
    failures = report.write(merged, args.out)
    print(f"{args.out}: {len(merged['peers'])} peers, {report.CHECKS['passed']} answers checked, {len(failures)} failed")


if __name__ == "__main__":
    main()
