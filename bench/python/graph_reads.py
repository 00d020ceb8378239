"""The graph view's batched reads on a peer-benchmark data set, for comparing two builds of the package:

    bench/peers/run.sh --peers plexus --workloads import --scale 0.05   # makes target/peers/work/data/scale-0.05/<set>/
    python bench/python/graph_reads.py target/peers/work/data/scale-0.05/mouse-genes

Imports the set's `edges.csv` into a fresh on-disk database, then times each read on the first 20,000 query
vertices of `queries.npz` (uniform and degree-skewed), best of three, in ids per second. Run it alternately with
each build (`PYTHONPATH` pointing at an unpacked wheel) on a quiet machine.
"""

import os
import sys
import tempfile
import time

import numpy as np

import plexus


def best_rate(fn, ids: int, reps: int) -> float:
    fn()
    best = float("inf")
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return ids / best


def main() -> None:
    data = sys.argv[1]
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    with tempfile.TemporaryDirectory() as tmp:
        db = plexus.Database(os.path.join(tmp, "db"))
        db.import_csv(edges=os.path.join(data, "edges.csv"))
        g = db.graph()
        g.refresh()
        q = np.load(os.path.join(data, "queries.npz"))
        for dist in ("uniform", "skewed"):
            v = q[f"{dist}_vertices"][:20000]
            reads = {
                "out_edges": lambda: g.out_edges(v),
                "in_edges": lambda: g.in_edges(v),
                "neighbors": lambda: g.neighbors(v, "both"),
                "out_degree(weight)": lambda: g.out_degree(v, True),
                "in_degree(weight)": lambda: g.in_degree(v, True),
            }
            for name, fn in reads.items():
                print(f"{dist:8} {name:19} {best_rate(fn, len(v), reps):12,.0f} ids/s", flush=True)
        db.close()


if __name__ == "__main__":
    main()
