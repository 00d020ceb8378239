"""Builders of pandas DataFrames, Arrow tables and NetworkX graphs from what the native module exports.

Columns arrive as ``(kind, length, null_count, validity, buffers, param)`` tuples (see ``columns.rs``): flat
NumPy buffers in Arrow's layout, wrapped here without copying, or ``kind == "object"`` with a list of values.
"""

from __future__ import annotations

import datetime as dt
import json

import numpy as np

from ._plexus import Node, Path, Relationship
from ._types import Point


def _plain(value):
    """Nodes, relationships, paths and points as dicts (inside lists and maps too), for Arrow's type inference.

    A point becomes ``{srid, x, y, z}`` (``z`` null in 2D; x and y are longitude and latitude for WGS-84), so a
    column of points is a struct column rather than text. A time with an offset becomes its text
    (``12:00:00+01:00``): Arrow's times have no offset and would drop it.
    """
    if isinstance(value, dt.time) and value.tzinfo is not None:
        return value.isoformat()
    if isinstance(value, Point):
        return {"srid": value.srid, "x": value.x, "y": value.y, "z": value.z}

    if isinstance(value, Node):
        return {"id": value.id, "labels": value.labels, "properties": _plain(value.properties)}
    if isinstance(value, Relationship):
        return {
            "id": value.id,
            "type": value.type,
            "start": value.start,
            "end": value.end,
            "properties": _plain(value.properties),
        }
    if isinstance(value, Path):
        return {
            "nodes": [_plain(n) for n in value.nodes],
            "relationships": [_plain(r) for r in value.relationships],
        }
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _text(value):
    """A value of a column Arrow cannot type, as text: lists and maps as JSON, the rest as ``str`` gives them."""
    if value is None:
        return None
    if isinstance(value, (list, dict)):
        try:
            return json.dumps(value, default=str, ensure_ascii=False)
        except RecursionError:
            # Nested deeper than the encoder's recursion allows (the engine allows 1,000 levels), which ``str``
            # would hit as well: the same text, written without recursion.
            return _json_without_recursion(value)
        except (TypeError, ValueError):
            pass
    return str(value)


def _json_key(key):
    """A map key as ``json.dumps`` writes it (keys that are no string become one; others it refuses)."""
    if isinstance(key, str):
        text = key
    elif key is True or key is False:
        text = "true" if key else "false"
    elif key is None:
        text = "null"
    elif isinstance(key, (int, float)):
        text = json.dumps(key)
    else:
        raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")
    return json.dumps(text, ensure_ascii=False) + ": "


def _json_without_recursion(value):
    """``json.dumps(value, default=str, ensure_ascii=False)`` with an explicit stack instead of recursion."""
    out = []
    # Pending work, popped from the end: ("text", s) is written as it is, ("value", v) is encoded.
    stack = [("value", value)]
    while stack:
        what, item = stack.pop()
        if what == "text":
            out.append(item)
        elif isinstance(item, list):
            out.append("[")
            stack.append(("text", "]"))
            for i in reversed(range(len(item))):
                stack.append(("value", item[i]))
                if i:
                    stack.append(("text", ", "))
        elif isinstance(item, dict):
            out.append("{")
            stack.append(("text", "}"))
            entries = list(item.items())
            for i in reversed(range(len(entries))):
                key, v = entries[i]
                stack.append(("value", v))
                stack.append(("text", _json_key(key)))
                if i:
                    stack.append(("text", ", "))
        else:
            out.append(json.dumps(item, default=str, ensure_ascii=False))
    return "".join(out)


def _kinds(value, path, seen):
    """Records under ``path`` the kind of every scalar in ``value`` (list items and map entries each under a
    path of their own), for :func:`_uniform`."""
    if value is None:
        return
    if isinstance(value, list):
        for item in value:
            _kinds(item, path + "[]", seen)
        return
    if isinstance(value, dict):
        for key, item in value.items():
            _kinds(item, f"{path}.{key}", seen)
        return
    kind = type(value)
    if kind is int and abs(value) <= 2**53:
        kind = "number"  # exactly a float too: may share a column with floats
    elif kind is float:
        kind = "number"
    elif kind is dt.datetime:
        kind = ("datetime", value.tzinfo is not None)
    seen.setdefault(path, set()).add(kind)


def _uniform(values):
    """Whether Arrow can type these values without changing any: it would otherwise coerce a mixed column
    (a date beside a datetime to dates, an integer beside a duration to microseconds, a boolean beside a float
    to 1.0) rather than refuse it."""
    seen = {}
    for v in values:
        _kinds(v, "", seen)
    return all(len(kinds) == 1 for kinds in seen.values())


def _arrow_type(pa, kind, param):
    return {
        "int64": pa.int64,
        "float64": pa.float64,
        "bool": pa.bool_,
        "string": pa.large_string,
        "date32": pa.date32,
        "interval": pa.month_day_nano_interval,
    }.get(kind, lambda: None)() or {
        "time64": lambda: pa.time64(param),
        "timestamp": lambda: pa.timestamp(param),
        "timestamp_utc": lambda: pa.timestamp(param, tz="UTC"),
    }[kind]()


def _arrow_column(pa, column):
    kind, length, nulls, validity, buffers, param = column
    if kind == "null":
        return pa.nulls(length)
    if kind == "object":
        # Times with an offset arrive as text (`01:00:00+05:00`, see `_plain`): a column of them stays text.
        if any(isinstance(v, dt.time) and v.tzinfo is not None for v in buffers):
            text = [None if v is None else v.isoformat() if isinstance(v, dt.time) else str(v) for v in buffers]
            return pa.array(text, type=pa.large_string())
        values = buffers
        try:
            values = [_plain(v) for v in buffers]
            if _uniform(values):
                return pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError, ValueError, OverflowError):
            pass
        except RecursionError:
            # Nested deeper than Python's stack allows (the engine allows 1,000 levels): text, as below.
            pass
        # Mixed types have no Arrow type: keep each value's text (lists and maps as JSON).
        return pa.array([_text(v) for v in values], type=pa.large_string())
    valid = None if validity is None else pa.py_buffer(validity)
    return pa.Array.from_buffers(
        _arrow_type(pa, kind, param), length, [valid] + [pa.py_buffer(b) for b in buffers], null_count=nulls
    )


def table_from_columns(names, columns, types=None):
    """An Arrow table of the exported ``columns``. ``types`` (a stream's batches share it) holds each column's
    type so far: the arrays are made to match it, and it learns the type of a column it has none for yet."""
    import pyarrow as pa

    arrays = [_arrow_column(pa, c) for c in columns]
    if types is not None:
        arrays = _conform(pa, names, arrays, types)
    return pa.Table.from_arrays(arrays, names=list(names))


def _conform(pa, names, arrays, types):
    """Gives the batches of one stream one schema where a column holds plain values, so that
    ``pa.Table.from_batches``, ``concat_tables`` and a Parquet writer opened on the first batch's schema take
    them all. A column keeps the type of the first batch where it held a value (a column all null until then is
    typed null in those batches, which Arrow's ``concat_tables(..., promote_options="default")`` unifies).
    Later batches are cast to it where no value changes (nulls to anything, integers to floats, nanosecond to
    microsecond timestamps); a plain column that needs another type is an error naming it. Nested columns
    (nodes, maps and lists as structs and lists) keep each batch's own type: their fields vary with the values,
    and ``concat_tables(..., promote_options="permissive")`` unifies them."""
    nested = pa.types.is_nested
    learned = list(types) if types else [None] * len(arrays)
    out = []
    for i, array in enumerate(arrays):
        want = learned[i]
        if nested(array.type) or (want is not None and nested(want)):
            out.append(array)
        elif pa.types.is_null(array.type):
            out.append(array if want is None else pa.nulls(len(array), type=want))
        elif want is None and pa.types.is_timestamp(array.type) and array.type.unit == "ns":
            # A stream learns microseconds where nothing finer is needed: a later batch may hold a date past
            # 2262 (a 9999-12-31 placeholder), which nanoseconds cannot, and its batches must share one type.
            try:
                array = array.cast(pa.timestamp("us", tz=array.type.tz), safe=True)
            except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
                pass
            learned[i] = array.type
            out.append(array)
        elif want is None or array.type == want:
            learned[i] = array.type
            out.append(array)
        else:
            # Timestamps convert between units where no value changes (nanoseconds to microseconds when none has
            # a finer part, microseconds to nanoseconds within 1677-2262).
            widens = (pa.types.is_floating(want) and pa.types.is_integer(array.type)) or (
                pa.types.is_timestamp(want) and pa.types.is_timestamp(array.type) and want.tz == array.type.tz
            )
            try:
                if not widens:
                    raise pa.ArrowTypeError("not a widening")
                out.append(array.cast(want, safe=True))
            except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
                raise TypeError(
                    f"column {names[i]!r} of this stream was {want} in earlier batches and needs {array.type} in "
                    f"this one, and Arrow takes one type per column: convert it in the query (toFloat, toString), "
                    f"or read the whole result at once with Database.execute(...).arrow()"
                ) from None
    # Learned only once the whole batch conformed.
    types[:] = learned
    return out


def _pandas_column(pd, column):
    kind, length, nulls, validity, buffers, param = column
    if kind == "object":
        return np.array(buffers + [None], dtype=object)[:-1] if length else np.array([], dtype=object)
    if kind == "null":
        return np.full(length, None, dtype=object)
    mask = None
    if validity is not None:
        mask = ~np.unpackbits(validity, bitorder="little", count=length).astype(bool)
    if kind == "int64":
        return buffers[0] if mask is None else pd.arrays.IntegerArray(buffers[0], mask)
    if kind == "float64":
        values = buffers[0]
        if mask is not None:
            values = values.copy()
            values[mask] = np.nan
        return values
    if kind == "bool":
        values = np.unpackbits(buffers[0], bitorder="little", count=length).astype(bool)
        return values if mask is None else pd.arrays.BooleanArray(values, mask)
    if kind == "timestamp":
        values = buffers[0].astype(f"datetime64[{param}]")
        if mask is not None:
            values[mask] = np.datetime64("NaT")
        return values
    raise AssertionError(f"unexpected column kind {kind}")


def frame_from_columns(names, columns):
    import pandas as pd

    data = {name: _pandas_column(pd, c) for name, c in zip(names, columns)}
    return pd.DataFrame(data, columns=list(names))


def graph_from_entities(nodes, relationships):
    import networkx as nx

    g = nx.MultiDiGraph()
    # Attributes are set as dicts, not keyword arguments: a property may be called `key` or `node_for_adding`.
    # A property called `labels` (`type`) keeps its name; the labels (type) then go under `_labels` (`_type`).
    for n in nodes:
        g.add_node(n.id)
        attrs = g.nodes[n.id]
        attrs.update(n.properties)
        attrs["_labels" if "labels" in n.properties else "labels"] = n.labels
    for r in relationships:
        g.add_edge(r.start, r.end, key=r.id)
        attrs = g.edges[r.start, r.end, r.id]
        attrs.update(r.properties)
        attrs["_type" if "type" in r.properties else "type"] = r.type
    return g
