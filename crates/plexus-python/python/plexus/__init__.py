"""Plexus: an embedded property-graph database with openCypher.

>>> import plexus
>>> with plexus.Database() as db:            # in memory; plexus.Database("dir") for a durable one
...     _ = db.execute("CREATE (:Person {name: 'Ann'})-[:KNOWS]->(:Person {name: 'Bob'})")
...     db.execute("MATCH (a)-[:KNOWS]->(b) RETURN a.name, b.name").tuples()
[('Ann', 'Bob')]

Main entry points: :class:`Database` (queries, transactions, bulk loading), :class:`Result` (rows, pandas,
Arrow, NetworkX), :class:`ResultStream` (a large read's rows in batches), :class:`Graph` (fast reads by id over NumPy arrays). Errors are :class:`Error` subclasses.
"""

from ._plexus import (
    Database,
    Graph,
    Node,
    Path,
    Relationship,
    Result,
    ResultStream,
    Transaction,
    NO_ID,
    __version__,
)
from ._types import Duration, Point
from .errors import (
    ArgumentError,
    ClosedError,
    ConflictError,
    ConversionError,
    Error,
    InputError,
    QueryError,
    StorageError,
)

__all__ = [
    "Database",
    "Transaction",
    "Result",
    "ResultStream",
    "Graph",
    "Node",
    "Relationship",
    "Path",
    "Duration",
    "Point",
    "Error",
    "QueryError",
    "ConflictError",
    "StorageError",
    "InputError",
    "ArgumentError",
    "ConversionError",
    "ClosedError",
    "NO_ID",
    "__version__",
]
