import numpy as np
import pytest

import plexus


@pytest.fixture
def db():
    with plexus.Database() as database:
        yield database


# External ids laid out four ways, since the graph view maps them with a flat table (ids close together), a
# bitmap with ranks (R-MAT graphs leave over half the ids of their range unused) or a hash table (ids anywhere);
# and back from node ids by an addition (consecutive ids), a table of 4-byte offsets or one of 8-byte ids.
ID_LAYOUTS = {
    "consecutive": lambda rng: np.arange(60) + 10,
    "dense": lambda rng: np.arange(60) * 3 + 10,
    "ranked": lambda rng: np.sort(rng.choice(600 * 11, 600, replace=False)) + 10**9,
    "scattered": lambda rng: rng.choice(2**40, 60, replace=False) - 2**39,
}


@pytest.fixture(params=sorted(ID_LAYOUTS))
def edges(request):
    """A small random multigraph with self-loops, parallel edges and weights, as NumPy arrays."""
    rng = np.random.default_rng(7)
    ids = ID_LAYOUTS[request.param](rng).astype(np.int64)
    m = 400 * len(ids) // 60
    src = ids[rng.integers(0, len(ids), m)]
    dst = ids[rng.integers(0, len(ids), m)]
    weight = rng.random(m).round(3)
    return src, dst, weight


@pytest.fixture
def nx_graph(edges):
    nx = pytest.importorskip("networkx")
    src, dst, weight = edges
    g = nx.MultiDiGraph()
    for s, d, w in zip(src.tolist(), dst.tolist(), weight.tolist()):
        g.add_edge(s, d, weight=w)
    return g
