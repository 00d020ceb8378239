"""Parse-only baselines for the import workload: how fast the edge list can merely be read, and parsed in Python."""

from __future__ import annotations

import csv
import time
from typing import Dict


def parse_only(path: str) -> Dict[str, float]:
    """Seconds to read the file's bytes (from the page cache) and to parse it with the `csv` module into Python
    ints and floats, as the import write-up's "parsing in Python" baseline did."""
    start = time.perf_counter()
    with open(path, "rb") as f:
        while f.read(1 << 24):
            pass
    read_bytes = time.perf_counter() - start
    start = time.perf_counter()
    n = 0
    with open(path, newline="") as f:
        for s, d, w in csv.reader(f):
            int(s), int(d), float(w)
            n += 1
    return {"read_bytes": read_bytes, "python_csv": time.perf_counter() - start, "lines": n}
