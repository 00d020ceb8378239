"""The graph view's single-edge writes on a peer-benchmark data set, for comparing two builds of the package:

    bench/peers/run.sh --peers plexus --workloads import --scale 0.05   # makes target/peers/work/data/scale-0.05/<set>/
    python bench/python/graph_writes.py target/peers/work/data/scale-0.05/patents [COUNT]

Imports the set's `edges.csv` into a fresh on-disk database with durability off (so that the fsync does not hide
the work of a write), then times COUNT (default 2,000) `upsert_edges` calls of one random edge each, then as many
`remove_edges` calls removing them again, and prints both rates. Run it alternately with each build.
"""

import os
import sys
import tempfile
import time

import numpy as np

import plexus


def main() -> None:
    data = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    csv = os.path.join(data, "edges.csv")
    with tempfile.TemporaryDirectory() as directory:
        db = plexus.Database(os.path.join(directory, "db"), durability="off")
        db.import_csv(edges=csv)
        g = db.graph()
        g.refresh()
        ends = np.loadtxt(csv, delimiter=",", dtype=np.int64, usecols=(0, 1), max_rows=200_000)
        rng = np.random.default_rng(1)
        ids = np.unique(ends)
        src, dst, weight = rng.choice(ids, count), rng.choice(ids, count), rng.random(count)
        start = time.perf_counter()
        for i in range(count):
            g.upsert_edges(src[i : i + 1], dst[i : i + 1], weight[i : i + 1])
        upserts = count / (time.perf_counter() - start)
        start = time.perf_counter()
        for i in range(count):
            g.remove_edges(src[i : i + 1], dst[i : i + 1])
        removes = count / (time.perf_counter() - start)
        db.close()
    name = os.path.basename(os.path.normpath(data))
    print(f"{name}: durability off, one edge per call: upsert {upserts:,.0f}/s, remove {removes:,.0f}/s")


if __name__ == "__main__":
    main()
