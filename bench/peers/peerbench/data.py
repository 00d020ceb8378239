"""The data sets every peer gets, the queries they answer, and the answers, computed independently with NumPy.

Edge lists come from `plexus generate` (the patents- and mouse-genes-shaped presets, with weights); this module
drops self-loops and repeated pairs, so the graph is simple and every peer, merging parallel edges or not, holds the
same edges. Queries draw vertices uniformly and degree-skewed (an end of a uniformly random edge), and edge lookups
half from the edges and half from random pairs. The oracle never touches a peer.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections import Counter
from typing import Dict, List, Tuple

import numpy as np


def read_edges(path: str) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    with open(path, "rb") as f:
        raw = f.read()
    flat = np.array(raw.replace(b"\n", b",").split(b",")[:-1], dtype=np.float64) if raw else np.zeros(0)
    table = flat.reshape(-1, 3)
    return table[:, 0].astype(np.int64), table[:, 1].astype(np.int64), table[:, 2]


def write_edges(path: str, src: np.ndarray, dst: np.ndarray, weight: np.ndarray) -> None:
    step = 1 << 20
    with open(path, "w") as f:
        for i in range(0, len(src), step):
            s, d, w = src[i : i + step].tolist(), dst[i : i + step].tolist(), weight[i : i + step].tolist()
            f.write("".join(f"{a},{b},{c:.6f}\n" for a, b, c in zip(s, d, w)))


def simple(src: np.ndarray, dst: np.ndarray, weight: np.ndarray):
    """Drops self-loops and repeated pairs (keeping the first weight), in the file's order."""
    keep = src != dst
    src, dst, weight = src[keep], dst[keep], weight[keep]
    key = src * (int(max(src.max(initial=0), dst.max(initial=0))) + 1) + dst
    _, first = np.unique(key, return_index=True)
    first.sort()
    return src[first], dst[first], np.round(weight[first], 6)


def prepare_edges(plexus: str, preset: str, scale: float, out: str, sizes: Dict[str, int], seed: int = 42) -> Dict:
    """Writes `edges.csv`, `queries.npz` and `expected.json` into `out` (reused when already there)."""
    done = os.path.join(out, "expected.json")
    if os.path.exists(done):
        with open(done) as f:
            return json.load(f)
    os.makedirs(out, exist_ok=True)
    raw = os.path.join(out, "raw.csv")
    subprocess.run(
        [plexus, "generate", preset, "--scale", str(scale), "--weights", "--seed", str(seed), "--out", raw],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    src, dst, weight = simple(*read_edges(raw))
    os.remove(raw)
    write_edges(os.path.join(out, "edges.csv"), src, dst, weight)

    rng = np.random.default_rng(seed)
    vertices = np.unique(np.concatenate([src, dst]))
    n, m = len(vertices), len(src)
    nq = sizes["queries"]
    uniform = rng.choice(vertices, nq)
    pick = rng.integers(0, m, nq)
    skewed = np.where(rng.random(nq) < 0.5, src[pick], dst[pick])
    pair_src, pair_dst = rng.choice(vertices, nq), rng.choice(vertices, nq)
    half = rng.integers(0, m, nq // 2)
    pair_src[: nq // 2], pair_dst[: nq // 2] = src[half], dst[half]
    order = rng.permutation(nq)
    pair_src, pair_dst = pair_src[order], pair_dst[order]

    # New edges for the writes: distinct pairs of existing vertices that are not edges yet.
    si, di = np.searchsorted(vertices, src), np.searchsorted(vertices, dst)
    existing = set((si * n + di).tolist())
    want = sizes["single_writes"] + sizes["batch_writes"]
    fresh: List[int] = []
    seen = set()
    while len(fresh) < want:
        a, b = rng.integers(0, n, 2)
        k = int(a) * n + int(b)
        if a != b and k not in existing and k not in seen:
            seen.add(k)
            fresh.append(k)
    fresh_arr = np.array(fresh, dtype=np.int64)
    w_src, w_dst = vertices[fresh_arr // n], vertices[fresh_arr % n]
    w_weight = np.round(rng.random(want), 6)
    ns = sizes["single_writes"]

    np.savez(
        os.path.join(out, "queries.npz"),
        uniform_vertices=uniform,
        skewed_vertices=skewed,
        pair_src=pair_src,
        pair_dst=pair_dst,
        write_single_src=w_src[:ns],
        write_single_dst=w_dst[:ns],
        write_single_weight=w_weight[:ns],
        write_batch_src=w_src[ns:],
        write_batch_dst=w_dst[ns:],
        write_batch_weight=w_weight[ns:],
    )
    expected = oracle(vertices, si, di, weight, existing, uniform, skewed, pair_src, pair_dst, out)
    expected.update(
        {
            "upsert/single": ns,
            "remove/single": 0,
            "upsert/batch": want - ns,
            "remove/batch": 0,
            "import": m,
            "queries": nq,
            "vertices": n,
            "edges": m,
            "preset": preset,
            "scale": scale,
            "file_bytes": os.path.getsize(os.path.join(out, "edges.csv")),
        }
    )
    with open(done, "w") as f:
        json.dump(expected, f)
    return expected


def oracle(vertices, si, di, weight, existing, uniform, skewed, pair_src, pair_dst, out: str) -> Dict:
    """The full answers, and per-query contributions in `oracle.npz` so that `expected_prefix` can answer for
    the first n queries (a slow peer is timed on a prefix)."""
    n = len(vertices)
    ids = vertices.astype(np.float64)

    def per_vertex(at: np.ndarray, other: np.ndarray):
        deg = np.bincount(at, minlength=n).astype(np.int64)
        idsum = np.bincount(at, weights=ids[other], minlength=n).astype(np.int64)
        wsum = np.bincount(at, weights=weight, minlength=n)
        return deg, idsum, wsum

    out_deg, out_ids, out_w = per_vertex(si, di)
    in_deg, in_ids, in_w = per_vertex(di, si)
    both = np.unique(np.concatenate([si * n + di, di * n + si]))
    u_at, u_other = both // n, both % n
    uniq_deg = np.bincount(u_at, minlength=n).astype(np.int64)
    uniq_ids = np.bincount(u_at, weights=ids[u_other], minlength=n).astype(np.int64)

    ps, pd = np.searchsorted(vertices, pair_src), np.searchsorted(vertices, pair_dst)
    # Per query, the columns of its answer: integer columns stay int64 so that their sums are exact.
    parts: Dict[str, List[np.ndarray]] = {
        "find_edges": [np.array([k in existing for k in (ps * n + pd).tolist()], dtype=np.int64)]
    }
    for dist, v in (("uniform", uniform), ("skewed", skewed)):
        x = np.searchsorted(vertices, v)
        parts[f"out_edges/{dist}"] = [out_deg[x], out_ids[x], out_w[x]]
        parts[f"in_edges/{dist}"] = [in_deg[x], in_ids[x], in_w[x]]
        parts[f"unique_neighbours/{dist}"] = [uniq_deg[x], uniq_ids[x]]
        parts[f"out_degree_weight/{dist}"] = [out_deg[x], out_w[x]]
        parts[f"in_degree_weight/{dist}"] = [in_deg[x], in_w[x]]
    columns = {f"{op.replace('/', '__')}__{i}": col for op, cols in parts.items() for i, col in enumerate(cols)}
    np.savez(os.path.join(out, "oracle.npz"), **columns)
    return {op: prefix_answer(op, cols, len(cols[0])) for op, cols in parts.items()}


def prefix_answer(op: str, columns: List[np.ndarray], n: int):
    """The answer for the first `n` queries: exact sums of the integer columns, float sums of the weights."""
    sums = [int(c[:n].sum()) if c.dtype.kind == "i" else float(c[:n].sum()) for c in columns]
    return sums[0] if op == "find_edges" else sums


def expected_prefix(data_dir: str, op: str, n: int):
    with np.load(os.path.join(data_dir, "oracle.npz")) as z:
        key = op.replace("/", "__") + "__"
        columns = [z[k] for k in sorted((k for k in z.files if k.startswith(key)), key=lambda k: int(k.rsplit("__", 1)[1]))]
        return prefix_answer(op, columns, n)


# ---- the recommendation traversal -------------------------------------------------------------------------

#: GuancialeDB's eight parameter rows: (items, likes per person, people, the write-up's ops/s).
LIKES_ROWS = [
    (200, 10, 1_000, 5_743.0),
    (200, 10, 10_000, 471.0),
    (200, 100, 1_000, 13.1),
    (200, 100, 10_000, 1.39),
    (2_000, 10, 1_000, 31_664.0),
    (2_000, 10, 10_000, 3_150.0),
    (2_000, 100, 1_000, 56.8),
    (2_000, 100, 10_000, 6.0),
]


def recommend_oracle(likes: Dict[int, List[int]], likers: Dict[int, List[int]], person: int) -> List[List[int]]:
    mine = set(likes.get(person, []))
    counts: Counter = Counter()
    for item in mine:
        for other in likers[item]:
            if other == person:
                continue
            for rec in likes[other]:
                if rec not in mine:
                    counts[rec] += 1
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:10]
    return [[item, count] for item, count in ranked]


def prepare_likes(plexus: str, out: str, people_scale: float, seed: int = 42) -> List[Dict]:
    """One `likes-N.csv` per parameter row, with people to time and people whose answers are checked."""
    done = os.path.join(out, "likes.json")
    if os.path.exists(done):
        with open(done) as f:
            return json.load(f)
    os.makedirs(out, exist_ok=True)
    rows = []
    for index, (items, per_person, people, writeup) in enumerate(LIKES_ROWS):
        people = max(20, int(people * people_scale))
        csv = os.path.join(out, f"likes-{index}.csv")
        subprocess.run(
            [plexus, "generate", "likes", "--items", str(items), "--people", str(people), "--likes", str(per_person),
             "--seed", str(seed + index), "--out", csv],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        pairs = np.loadtxt(csv, delimiter=",", dtype=np.int64, ndmin=2)
        likes: Dict[int, List[int]] = {}
        likers: Dict[int, List[int]] = {}
        for p, i in pairs.tolist():
            likes.setdefault(p, []).append(i)
            likers.setdefault(i, []).append(p)
        rng = np.random.default_rng(seed + index)
        check = [int(p) for p in rng.choice(people, 5, replace=False)]
        rows.append(
            {
                "index": index,
                "items": items,
                "likes": per_person,
                "people": people,
                "writeup_ops": writeup,
                "csv": csv,
                "check": check,
                "expected": [recommend_oracle(likes, likers, p) for p in check],
                "time": [int(p) for p in rng.integers(0, people, 10_000)],
            }
        )
    with open(done, "w") as f:
        json.dump(rows, f)
    return rows
