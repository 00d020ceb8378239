"""The peers, each in its own module so that one whose package fails to import fails alone.

`REGISTRY` maps a peer's command-line name to (module, class); `load` imports it.
"""

from __future__ import annotations

import importlib

from ..peer import Peer

REGISTRY = {
    "plexus": ("plexus_peer", "PlexusPeer"),
    "sqlite": ("sqlite_peer", "SqlitePeer"),
    "duckdb": ("duckdb_peer", "DuckdbPeer"),
    "kuzu": ("kuzu_peer", "KuzuPeer"),
    "ladybug": ("kuzu_peer", "LadybugPeer"),
    "falkordb": ("falkordb_peer", "FalkordbPeer"),
    "ustore": ("ustore_peer", "UstorePeer"),
    "networkx": ("networkx_peer", "NetworkxPeer"),
    "igraph": ("igraph_peer", "IgraphPeer"),
    "postgres": ("postgres_peer", "PostgresPeer"),
    "neo4j": ("neo4j_peer", "Neo4jPeer"),
}

#: The peers with a Bolt server for the server-mode workload (`start_server`); the others have none to load.
SERVERS = {"plexus", "neo4j"}

#: Which virtualenv under `target/peers/` runs each peer's worker (`ustore` ships wheels only up to Python 3.10,
#: `falkordblite` only from 3.12, which `main` uses when the machine has it).
INTERPRETER = {name: ("py310" if name == "ustore" else "main") for name in REGISTRY}


def load(name: str) -> Peer:
    module, cls = REGISTRY[name]
    mod = importlib.import_module(f"{__name__}.{module}")
    return getattr(mod, cls)()
