"""The LDBC SNB Interactive short reads (IS1–IS7) for the peers: data sets, parameters, expected answers, checking.

What it owns, and what it borrows: the oracle is `bench/ldbc/check.py` (loaded from its file, standard library
only), which computes every query's answer straight from the CsvComposite files; this module only picks the data
sets and parameters, asks check.py for the answers, and compares a peer's rows with them through check.py's
`compare` (columns, values, the specification's order and limit, ties allowed where the sort keys tie).

Data sets: the LDBC tiny set (`../shared/ldbc-snb-tiny/` from the repository root, or `$LDBC_SNB_TINY`), with
check.py's own parameter choice (every person, 124 chosen messages), and an SNB graph made by
`plexus generate snb`, which writes no substitution parameters: persons and messages are drawn uniformly from the
data with a fixed seed. Both have the same layout: `<name>/vanilla/{static,dynamic}/*.csv`.
"""

from __future__ import annotations

import importlib.util
import json
import os
import random
import shutil
import subprocess
from typing import Any, Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
LDBC_DIR = os.path.normpath(os.path.join(HERE, "..", "..", "ldbc"))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
QUERIES = ["is1", "is2", "is3", "is4", "is5", "is6", "is7"]
#: The version of the cached `expected.json` of a generated data set (an older one is computed again).
FORMAT = 1

_check = None


def check():
    """bench/ldbc/check.py as a module (loaded once)."""
    global _check
    if _check is None:
        spec = importlib.util.spec_from_file_location("ldbc_check", os.path.join(LDBC_DIR, "check.py"))
        _check = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(_check)
    return _check


def cypher(query: str) -> str:
    """The Cypher text of a query, as Plexus runs it (bench/ldbc/queries/<query>.cypher)."""
    with open(os.path.join(LDBC_DIR, "queries", f"{query}.cypher"), encoding="utf-8") as f:
        return f.read()


def compare(query: str, expected_all: List[List[Any]], rows: List[tuple]) -> List[str]:
    """check.py's comparison of a peer's rows (in the specification's columns) with the expected ones."""
    c = check()
    result = {"columns": c.COLUMNS[query], "rows": [list(r) for r in rows]}
    problems, _ties = c.compare(query, [tuple(r) for r in expected_all], result)
    return problems


def trim(query: str, rows: List[tuple]) -> List[tuple]:
    """The expected rows in order, cut after the LIMIT but keeping every row tied with the last one kept: all that
    `compare` looks at, so the spec handed to the workers stays small (IS2 of a prolific person has thousands)."""
    key, limit = check().ORDER[query]
    if key is None or limit is None or len(rows) <= limit:
        return rows
    rows = sorted(rows, key=key)
    last = key(rows[limit - 1])
    return [r for i, r in enumerate(rows) if i < limit or key(r) == last]


def tiny_dir() -> str:
    return os.environ.get("LDBC_SNB_TINY") or os.path.normpath(os.path.join(ROOT, "..", "shared", "ldbc-snb-tiny"))


def sampled_parameters(snb, count: int, seed: int = 42) -> Dict[str, List[Dict[str, int]]]:
    """`count` persons and `count` messages drawn uniformly (without repeats) from the data."""
    rng = random.Random(seed)
    persons = rng.sample(snb.person_order, min(count, len(snb.person_order)))
    messages = snb.post_order + snb.comment_order
    messages = rng.sample(messages, min(count, len(messages)))
    sets = {q: [{"personId": p} for p in persons] for q in ("is1", "is2", "is3")}
    sets.update({q: [{"messageId": m} for m in messages] for q in ("is4", "is5", "is6", "is7")})
    return sets


def expected_for(vanilla: str, params_dir: Optional[str], count: int) -> Dict[str, Any]:
    """Per query: the parameters to check (also the ones timed) and the expected rows of each."""
    c = check()
    snb = c.Snb(vanilla)
    if params_dir:
        sets, _notes = c.choose_parameters(snb, params_dir)
        how = "check.py's parameters: every person; 124 chosen posts and comments"
    else:
        sets = sampled_parameters(snb, count)
        how = f"{count} persons and {count} messages drawn uniformly"
    queries = {}
    for q in QUERIES:
        params = sets[q]
        queries[q] = {"params": params, "expected": [trim(q, getattr(snb, q)(**p)) for p in params]}
    stats = {"persons": len(snb.person), "messages": len(snb.message), "knows": sum(map(len, snb.knows.values())) // 2}
    checked = {"persons": len(sets["is1"]), "messages": len(sets["is4"])}
    return {"vanilla": vanilla, "parameters": how, "stats": stats, "checked": checked, "queries": queries}


def summary(sets: Dict[str, Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    """The data sets without their parameters, expected rows and paths (what the results' JSON keeps)."""
    return {ds: {k: v for k, v in info.items() if k not in ("queries", "vanilla")} for ds, info in sets.items()}


def prepare(plexus: str, out: str, scale: float, count: int) -> Dict[str, Dict[str, Any]]:
    """The LDBC data sets of a run, `{"tiny": ..., "generated": ...}`; each either expected answers or `missing`.
    Generated data and answers are written under `out` and reused when already there."""
    sets: Dict[str, Dict[str, Any]] = {}
    tiny = tiny_dir()
    if os.path.isdir(os.path.join(tiny, "vanilla")) and os.path.isdir(os.path.join(tiny, "substitution_parameters")):
        sets["tiny"] = expected_for(os.path.join(tiny, "vanilla"), os.path.join(tiny, "substitution_parameters"), 0)
        sets["tiny"]["title"] = "LDBC SNB tiny data set"
    else:
        sets["tiny"] = {"missing": f"the LDBC tiny data set is not at {tiny} (set LDBC_SNB_TINY)"}

    gen = os.path.join(out, f"snb-{scale:g}")
    done = os.path.join(gen, "expected.json")
    if os.path.exists(done):
        with open(done) as f:
            cached = json.load(f)
        if cached.get("format") == FORMAT:
            sets["generated"] = cached
            return sets
    vanilla = os.path.join(gen, "vanilla")
    shutil.rmtree(vanilla, ignore_errors=True)
    proc = subprocess.run([plexus, "generate", "snb", "--scale", str(scale), "--out", vanilla],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        sets["generated"] = {"missing": f"plexus generate snb failed: {proc.stderr.strip()[-300:]}"}
        return sets
    sets["generated"] = expected_for(vanilla, None, count)
    sets["generated"]["title"] = f"`plexus generate snb --scale {scale:g}`"
    sets["generated"]["format"] = FORMAT
    with open(done, "w") as f:
        json.dump(sets["generated"], f)
    return sets
