"""Plexus side by side with the databases and libraries users would otherwise pick, on the same data in one run.

`python -m peerbench --help` (through `bench/peers/run.sh`) runs it; `peer.py` is the contract each peer meets,
`data.py` makes the data sets and the NumPy oracle, `worker.py` drives one peer in its own process, `report.py`
writes `bench/results/peers.md`, the JSON and the plots.
"""
