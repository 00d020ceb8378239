import numpy as np
import pytest

import plexus


@pytest.fixture
def db():
    with plexus.Database() as database:
        yield database


@pytest.fixture
def edges():
    """A small random multigraph with self-loops, parallel edges and weights, as NumPy arrays."""
    rng = np.random.default_rng(7)
    n, m = 60, 400
    src = rng.integers(0, n, m) * 3 + 10  # sparse-ish external ids
    dst = rng.integers(0, n, m) * 3 + 10
    weight = rng.random(m).round(3)
    return src.astype(np.int64), dst.astype(np.int64), weight


@pytest.fixture
def nx_graph(edges):
    nx = pytest.importorskip("networkx")
    src, dst, weight = edges
    g = nx.MultiDiGraph()
    for s, d, w in zip(src.tolist(), dst.tolist(), weight.tolist()):
        g.add_edge(s, d, weight=w)
    return g
