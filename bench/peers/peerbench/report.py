"""Turns one run's events into `peers.md` (a table per workload), `peers.json` (everything, raw) and plots.

An answer is checked against the NumPy oracle before its time is shown: a wrong answer shows as **wrong** with the
numbers, never as a rate. Ratios are to the best peer in the same table (1.00× is the best).
"""

from __future__ import annotations

import datetime
import json
import math
import os
import subprocess
from typing import Any, Dict, List, Optional, Tuple

from . import server
from .data import expected_prefix

READ_OPS = [
    ("find_edges", "find edge `u → v`"),
    ("out_edges/uniform", "out edges, uniform vertex"),
    ("out_edges/skewed", "out edges, degree-skewed vertex"),
    ("in_edges/uniform", "in edges, uniform vertex"),
    ("in_edges/skewed", "in edges, degree-skewed vertex"),
    ("unique_neighbours/uniform", "unique neighbours, uniform"),
    ("unique_neighbours/skewed", "unique neighbours, degree-skewed"),
    ("out_degree_weight/uniform", "count + summed weight, out, uniform"),
    ("out_degree_weight/skewed", "count + summed weight, out, degree-skewed"),
    ("in_degree_weight/uniform", "count + summed weight, in, uniform"),
    ("in_degree_weight/skewed", "count + summed weight, in, degree-skewed"),
]
LDBC_QUERIES = [
    ("is1", "IS1 profile of a person"),
    ("is2", "IS2 a person's 10 latest messages, with their threads' posts"),
    ("is3", "IS3 friends of a person"),
    ("is4", "IS4 content of a message"),
    ("is5", "IS5 creator of a message"),
    ("is6", "IS6 forum of a message's thread"),
    ("is7", "IS7 replies to a message"),
]
WRITE_OPS = [
    ("upsert/single", "upsert one edge per transaction"),
    ("remove/single", "remove one edge per transaction"),
    ("upsert/batch", "upsert, 500 edges per transaction"),
    ("remove/batch", "remove, 500 edges per transaction"),
]


def answer_for(info: Dict, op: str, event: Dict) -> Any:
    """The oracle's answer for the queries the peer ran (all of them, or a prefix for a slow peer)."""
    exp = info["expected"]
    if event["kind"] == "write":
        return event["ops"] if op.startswith("upsert") else 0  # edges added, then all removed again
    if event["ops"] == exp.get("queries", event["ops"]):
        return exp[op]
    return expected_prefix(info["dir"], op, event["ops"])


def machine() -> Dict[str, str]:
    info = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
    try:
        with open("/proc/cpuinfo") as f:
            info["cpu"] = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
        with open("/proc/meminfo") as f:
            kb = int(next(line.split()[1] for line in f if line.startswith("MemTotal")))
            info["memory"] = f"{kb / 2**20:.1f} GiB"
    except (OSError, StopIteration):
        pass
    info["cores"] = str(os.cpu_count())
    info["kernel"] = os.uname().release
    try:
        root = os.path.dirname(os.path.abspath(__file__))
        info["revision"] = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=root
        ).stdout.strip()
    except OSError:
        pass
    return info


#: Answers that matched in the last `write` (it starts from zero each time, so rewrites do not double count).
CHECKS = {"passed": 0}


def checked(answer: Any, expected: Any) -> bool:
    """`same`, counted: the run ends with how many answers were checked."""
    ok = same(answer, expected)
    CHECKS["passed"] += ok
    return ok


def same(answer: Any, expected: Any) -> bool:
    if isinstance(expected, list):
        return isinstance(answer, list) and len(answer) == len(expected) and all(map(same, answer, expected))
    if isinstance(expected, float):
        return isinstance(answer, (int, float)) and math.isclose(answer, expected, rel_tol=1e-6, abs_tol=1e-6)
    return answer == expected


def human(x: float, unit: str = "") -> str:
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "K")):
        if x >= div:
            return f"{x / div:.2f} {suffix}{unit}"
    return f"{x:.3g} {unit}".strip() if x < 100 else f"{x:.0f} {unit}".strip()


def size(b: float) -> str:
    for div, suffix in ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if b >= div:
            return f"{b / div:.1f} {suffix}"
    return f"{b:.0f} B"


class Cell:
    """One peer's result for one row: a rate, or why there is none."""

    def __init__(self, rate: Optional[float] = None, note: str = "") -> None:
        self.rate, self.note = rate, note


def events(run: Dict, peer: str, job: str) -> List[Dict]:
    return run["peers"][peer]["jobs"].get(job, [])


def job_error(evs: List[Dict]) -> Optional[str]:
    for e in evs:
        if e["kind"] in ("error", "unsupported"):
            return e.get("error", "")
    return None


def short(msg: str) -> str:
    first = msg.strip().splitlines()[0] if msg.strip() else "error"
    return first if len(first) <= 60 else first[:57] + "…"


def table(title_row: List[str], rows: List[Tuple[str, List[Cell]]], unit: str, extra: Optional[List[str]] = None) -> List[str]:
    """A markdown table: one row per measurement, one column per peer, `rate (ratio to best)`."""
    lines = ["| " + " | ".join(title_row) + " |", "|---" + "|---:" * (len(title_row) - 1) + "|"]
    for i, (name, cells) in enumerate(rows):
        best = max((c.rate for c in cells if c.rate), default=None)
        out = []
        for c in cells:
            if c.rate is not None and best:
                ratio = c.rate / best
                text = f"{human(c.rate, unit)} ({ratio:.2f}×)"
                out.append(f"**{text}**" if ratio == 1.0 else text)
            else:
                out.append(c.note or "—")
        if extra:
            out.append(extra[i])
        lines.append(f"| {name} | " + " | ".join(out) + " |")
    return lines


def write(run: Dict, out: str) -> List[str]:
    """Writes the markdown, the JSON and the plots; returns the failed checks as `peer: what`."""
    CHECKS["passed"] = 0
    peers = list(run["peers"])
    failures: List[str] = []
    summary: List[Tuple[str, List[Cell], float]] = []  # (row, cells per peer, required factor over databases)
    md: List[str] = ["# Plexus and its peers, side by side", ""]
    md += [
        "Produced by", "", "```sh", run["command"], "```", "",
        "| | |", "|---|---|",
    ]
    m = run["machine"]
    for k in ("date", "revision", "cpu", "cores", "memory", "kernel"):
        if k in m:
            md.append(f"| {k} | {m[k]} |")
    md.append(f"| load average at start / end | {', '.join(f'{x:.2f}' for x in run['load_start'])} / "
              f"{', '.join(f'{x:.2f}' for x in run['load_end'])} |")
    md.append(f"| wall time | {(run['finished'] - run['started']) / 60:.1f} min |")
    if run.get("merged_from", 1) > 1:
        md += ["", f"Merged from {run['merged_from']} runs on the same data (`peerbench.merge`, the commands above); "
               "runs that overlapped in time shared the machine, which lowers the rates of both."]
    md += ["", "Rates are wall-clock, measured in one run on a machine that may be shared (compare the ratios, not "
           "the absolute numbers). Every answer is checked against an independent NumPy oracle first; a peer that "
           "answers wrongly shows **wrong**, one that cannot run a workload says why.", ""]

    # Peers and versions.
    md += ["## Peers", "", "| peer | version | durable | status |", "|---|---|---|---|"]
    for p in peers:
        version, durable, errors = "—", "—", []
        for job, evs in run["peers"][p]["jobs"].items():
            for e in evs:
                if e["kind"] == "version":
                    version, durable = e["version"], "yes" if e["durable"] else "no"
                if e["kind"] == "error":
                    errors.append(f"{job}: {short(e['error'])}")
                    failures.append(f"{p}: {job}: {e['error']}")
        status = "; ".join(errors) if errors else "ran"
        md.append(f"| {p} | {version} | {durable} | {status} |")
    md.append("")

    # Import and random reads/writes per data set.
    for ds, info in run["datasets"].items():
        exp = info["expected"]
        md += [f"## {ds}: {exp['vertices']:,} vertices, {exp['edges']:,} edges (`plexus generate {exp['preset']} "
               f"--scale {exp['scale']:g} --weights`, self-loops and repeated pairs dropped), "
               f"{size(exp['file_bytes'])} of CSV", ""]
        base = info["baseline"]
        rows, mem, disk, written = [], [], [], []
        for p in peers:
            evs = events(run, p, ds)
            imp = next((e for e in evs if e["kind"] == "import"), None)
            if imp is None:
                rows.append(Cell(None, short(job_error(evs) or "did not run")))
                mem.append("—"), disk.append("—"), written.append("—")
                continue
            if imp["edges"] != exp["edges"]:
                failures.append(f"{p}: {ds} import holds {imp['edges']} edges, expected {exp['edges']}")
                rows.append(Cell(None, f"**wrong** ({imp['edges']:,} edges)"))
            else:
                rows.append(Cell(exp["edges"] / imp["seconds"]))
            mem.append(size(imp["peak_memory"]))
            disk.append(size(imp["disk"]))
            written.append(size(imp["written"]))
        md += [f"### Import ({ds})", ""]
        md += table(["", *peers], [("edges/s", rows)], "")
        summary.append((f"import, {ds}", rows, 10.0))
        md += ["| peak memory (import) | " + " | ".join(mem) + " |",
               "| bytes written | " + " | ".join(written) + " |",
               "| size on disk | " + " | ".join(disk) + " |", ""]
        md.append(f"Parse-only baselines on the same file: reading its bytes {human(exp['edges'] / base['read_bytes'])} "
                  f"edges/s; parsing it with Python's `csv` module into ints and floats "
                  f"{human(exp['edges'] / base['python_csv'])} edges/s.")
        md.append("")

        for section, ops, kind, unit in (("Random reads", READ_OPS, "read", "ops/s"),
                                         ("Random writes", WRITE_OPS, "write", "edges/s")):
            rows_out = []
            for op, label in ops:
                cells = []
                for p in peers:
                    evs = events(run, p, ds)
                    e = next((x for x in evs if x["kind"] == kind and x["op"] == op), None)
                    if e is None:
                        cells.append(Cell(None, "—" if job_error(evs) else "did not run"))
                    elif "unsupported" in e:
                        cells.append(Cell(None, f"unsupported: {e['unsupported']}"))
                    elif not checked(e["answer"], want := answer_for(info, op, e)):
                        failures.append(f"{p}: {ds} {op} answered {e['answer']}, expected {want}")
                        cells.append(Cell(None, "**wrong**"))
                    else:
                        cells.append(Cell(e["ops"] / e["seconds"]))
                rows_out.append((label, cells))
            md += [f"### {section} ({ds}, {unit})", ""]
            md += table(["operation", *peers], rows_out, "")
            summary += [(f"{label}, {ds}", cells, 10.0 if kind == "read" else 1.0) for label, cells in rows_out]
            md.append("")
        q = run["sizes"]
        md += [f"Reads: {q['queries']:,} queries per operation (the first {min(1000, q['queries'] // 10):,} once "
               "before as warm-up), or for a slow peer the largest prefix (growing fourfold) that ran within "
               f"{q['read_budget']:g} s; edge lookups are half existing edges, half random pairs. Writes: up to "
               f"{q['single_writes']:,} new edges one per transaction, then up to {q['batch_writes']:,} in "
               f"transactions of 500 (as many as fit in {q['read_budget']:g} s), each upserted and then removed; "
               "the edge count is checked after each step.", ""]

    if run.get("likes"):
        md += ["## GuancialeDB recommendation traversal (ops/s)", ""]
        rows_out, extra = [], []
        for row in run["likes"]:
            cells = []
            for p in peers:
                evs = events(run, p, "likes")
                e = next((x for x in evs if x["kind"] == "likes" and x["row"] == row["index"]), None)
                if e is None:
                    cells.append(Cell(None, short(job_error(evs) or "did not run")))
                elif not e["answer"] or not checked(e["answer"], row["expected"][: len(e["answer"])]):
                    failures.append(f"{p}: likes row {row['index']} answered {e['answer']}, expected {row['expected']}")
                    cells.append(Cell(None, "**wrong**"))
                else:
                    cells.append(Cell(e["ops"] / e["seconds"]))
            rows_out.append((f"{row['items']:,} items, {row['likes']} likes, {row['people']:,} people", cells))
            extra.append(f"{row['writeup_ops']:g}")
        md += table(["parameters", *peers, "write-up (JVM)"], rows_out, "", extra)
        summary += [(f"recommendation, {label}", cells, 1.0) for label, cells in rows_out]
        md += ["", "One op: the top 10 items liked by people who like what a random person likes, minus that "
               "person's own, by count; each peer's answers for up to five people (at least one, more while within the budget) are checked first.", ""]

    md += ldbc_section(run, peers, failures, summary)
    md += server.section(run, peers, failures, summary)

    commit_rows = []
    for threads in run["sizes"]["threads"]:
        cells = []
        for p in peers:
            evs = events(run, p, "commits")
            e = next((x for x in evs if x["kind"] == "commits" and x["threads"] == threads), None)
            check = next((x for x in evs if x["kind"] == "commits_check"), None)
            if e is None:
                cells.append(Cell(None, short(job_error(evs) or "did not run")))
            elif "unsupported" in e:
                cells.append(Cell(None, f"unsupported: {e['unsupported']}"))
            elif check is None or check["acknowledged"] != check["present"]:
                if check is not None and threads == run["sizes"]["threads"][0]:
                    failures.append(f"{p}: commits acknowledged {check['acknowledged']}, present {check['present']}")
                cells.append(Cell(None, "**lost commits**" if check else "unchecked"))
            else:
                cells.append(Cell(e["ops"] / e["seconds"]))
        commit_rows.append((f"{threads} committer{'s' if threads > 1 else ''}", cells))
    if any(events(run, p, "commits") for p in peers):
        md += ["## Small durable transactions (1 node + 1 relationship each, commits/s)", ""]
        md += table(["", *peers], commit_rows, "")
        summary += [(f"durable commits, {label}", cells, 1.0) for label, cells in commit_rows]
        md += ["", "Each committer is a thread with its own connection or session; every transaction is acknowledged "
               "only once durable by the peer's default (fsync per commit or per group). The count of vertices "
               "is checked against the acknowledged commits.", ""]

    md += targets(run, peers, summary)
    if failures:
        md += ["## Failed checks", ""] + [f"- {f}" for f in failures] + [""]
    base = os.path.splitext(out)[0]
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    plots = plot(run, base, READ_OPS, commit_rows, peers)
    try:
        latency = server.plot(run, base, peers)
    except ImportError:
        latency = None
    if latency:
        plots.append(latency)
    if plots:
        md += ["## Plots", ""] + [f"![{name}]({os.path.basename(path)})" for name, path in plots] + [""]
    md += [f"Raw events of every worker: `{os.path.basename(base)}.json`.", ""]
    with open(out, "w") as f:
        f.write("\n".join(md))
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..")) + os.sep
    with open(base + ".json", "w") as f:
        f.write(json.dumps(run, indent=1).replace(root, ""))  # paths relative to the repository
    return failures


def durable_peers(run: Dict, peers: List[str]) -> Dict[str, bool]:
    out = {}
    for p in peers:
        for evs in run["peers"][p]["jobs"].values():
            for e in evs:
                if e["kind"] == "version":
                    out[p] = bool(e["durable"])
    return out


def targets(run: Dict, peers: List[str], summary: List[Tuple[str, List[Cell], float]]) -> List[str]:
    """Plexus against the best database peer and the best in-memory library, row by row, with the issue's
    targets: 10× the best database on imports and random reads, ahead of everyone elsewhere."""
    if "plexus" not in peers:
        return []
    durable = durable_peers(run, peers)
    libraries = {"networkx", "igraph"}
    me = peers.index("plexus")
    lines = ["## Plexus against the best of the others", "",
             "| workload | Plexus | best database | ratio | best in-memory library | ratio | target | met |",
             "|---|---:|---|---:|---|---:|---|---|"]
    met = total = 0
    for name, cells, factor in summary:
        mine = cells[me].rate
        dbs = [(c.rate, p) for p, c in zip(peers, cells) if p != "plexus" and p not in libraries and c.rate]
        libs = [(c.rate, p) for p, c in zip(peers, cells) if p in libraries and c.rate]
        best_db, best_lib = max(dbs, default=None), max(libs, default=None)
        if mine is None:
            lines.append(f"| {name} | {cells[me].note or '—'} | | | | | | no |")
            total += 1
            continue
        ok = (best_db is None or mine >= factor * best_db[0]) and (best_lib is None or mine >= best_lib[0])
        met += ok
        total += 1
        db_text = f"{best_db[1]} {human(best_db[0])}" if best_db else "—"
        lib_text = f"{best_lib[1]} {human(best_lib[0])}" if best_lib else "—"
        lines.append(
            f"| {name} | {human(mine)} | {db_text} | {mine / best_db[0]:.2f}× | {lib_text} | "
            f"{format(mine / best_lib[0], '.2f') + '×' if best_lib else '—'} | "
            f"{'≥ ' + format(factor, 'g') + '× databases' if factor > 1 else 'fastest'}, ahead of libraries | "
            f"{'yes' if ok else '**no**'} |"
            if best_db
            else f"| {name} | {human(mine)} | — | — | {lib_text} | — | ahead of libraries | {'yes' if ok else '**no**'} |"
        )
    lines[0] = f"## Plexus against the best of the others: {met} of {total} targets met"
    durability = ", ".join(f"{p} {'durable' if d else 'not durable'}" for p, d in durable.items())
    lines += ["", f"Databases are every peer but the in-memory libraries ({durability}).", ""]
    return lines


def ldbc_section(run: Dict, peers: List[str], failures: List[str], summary: List) -> List[str]:
    """The LDBC SNB short reads: a table per data set, a row per query, a column per peer; failures appended."""
    if not run.get("ldbc"):
        return []
    md = ["## LDBC SNB short reads (ops/s)", ""]
    for ds, info in run["ldbc"].items():
        if "missing" in info:
            md += [f"### {ds}: not run ({info['missing']})", ""]
            continue
        st = info["stats"]
        md += [f"### {ds}: {info['title']}, {st['persons']:,} persons, {st['messages']:,} messages, "
               f"{st['knows']:,} friendships", ""]
        job = f"ldbc/{ds}"
        rows_out = []
        for q, label in LDBC_QUERIES:
            cells = []
            for p in peers:
                evs = events(run, p, job)
                e = next((x for x in evs if x["kind"] == "ldbc" and x["query"] == q), None)
                if e is None:
                    cells.append(Cell(None, short(job_error(evs) or "did not run")))
                elif "unsupported" in e:
                    cells.append(Cell(None, f"unsupported: {e['unsupported']}"))
                elif "error" in e:
                    failures.append(f"{p}: ldbc {ds} {q}: {e['error']}")
                    cells.append(Cell(None, short(e["error"])))
                elif not checked(e["mismatches"], 0):
                    failures.append(f"{p}: ldbc {ds} {q}: {e['mismatches']} of {e['checked']} answers differ from "
                                    f"the oracle, e.g. {json.dumps(e['examples'][:1])[:2000]}")
                    cells.append(Cell(None, "**wrong**"))
                else:
                    cells.append(Cell(e["ops"] / e["seconds"]))
            rows_out.append((label, cells))
        md += table(["query", *peers], rows_out, "")
        summary += [(f"LDBC {label}, {ds}", cells, 1.0) for label, cells in rows_out]
        loads = []
        for p in peers:
            e = next((x for x in events(run, p, job) if x["kind"] == "ldbc_load"), None)
            loads.append(f"{e['seconds']:.1f} s" if e else "—")
        md += ["| load (whole data set, indexes) | " + " | ".join(loads) + " |", ""]
        md += [f"Parameters: {info['parameters']} ({info['checked']['persons']} persons for IS1–IS3, "
               f"{info['checked']['messages']} messages "
               "for IS4–IS7); every answer is compared with `bench/ldbc/check.py`'s, computed from the CSV files. "
               "Then each query runs over the same parameters in a shuffled order, one execution after the other: "
               f"untimed in rounds of {run['sizes']['ldbc_warmup']:g} s until two rounds in a row are no more than "
               f"10 % faster than the fastest before them (at most {run['sizes']['ldbc_max_warmup']:g} s: Neo4j's JIT "
               "takes tens of seconds); once all seven have warmed up, each runs one more untimed round and is then "
               f"timed for {run['sizes']['ldbc_budget']:g} s.", ""]
    return md


def plot(run: Dict, base: str, read_ops, commit_rows, peers) -> List[Tuple[str, str]]:
    """PNG bar charts of read throughput per data set and the throughput-vs-committers curve."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    made = []
    for ds in run["datasets"]:
        fig, ax = plt.subplots(figsize=(11, 4.5))
        width = 0.8 / max(1, len(peers))
        for i, p in enumerate(peers):
            ys = []
            for op, _ in read_ops:
                e = next((x for x in events(run, p, ds) if x["kind"] == "read" and x["op"] == op and "seconds" in x), None)
                ys.append(e["ops"] / e["seconds"] if e else 0)
            ax.bar([k + i * width for k in range(len(read_ops))], ys, width, label=p)
        ax.set_yscale("log")
        ax.set_xticks([k + 0.4 - width / 2 for k in range(len(read_ops))])
        ax.set_xticklabels([op.replace("/", "\n") for op, _ in read_ops], fontsize=7)
        ax.set_ylabel("queries/s (log)")
        ax.set_title(f"Random reads, {ds}")
        ax.legend(fontsize=7, ncol=4)
        fig.tight_layout()
        path = f"{base}-reads-{ds}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        made.append((f"random reads, {ds}", path))
    threads = run["sizes"]["threads"]
    if any(c.rate for _, cells in commit_rows for c in cells):
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for i, p in enumerate(peers):
            pts = [(t, cells[i].rate) for t, (_, cells) in zip(threads, commit_rows) if cells[i].rate]
            if pts:
                ax.plot([t for t, _ in pts], [r for _, r in pts], marker="o", label=p)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("concurrent committers")
        ax.set_ylabel("durable commits/s (log)")
        ax.set_title("Small durable transactions vs committers")
        ax.legend(fontsize=8)
        fig.tight_layout()
        path = f"{base}-commits.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        made.append(("throughput vs committers", path))
    return made
