"""Checks and conversions of array arguments, vectorised: no Python work per element."""

from __future__ import annotations

import numpy as np

from .errors import ArgumentError


def _as_numpy(obj, name, what="an integer id"):
    if isinstance(obj, np.ndarray):
        arr = obj
    elif hasattr(obj, "to_numpy"):  # pandas Series/Index, pyarrow Array/ChunkedArray
        try:
            arr = obj.to_numpy(zero_copy_only=False)
        except TypeError:
            arr = obj.to_numpy()
    else:
        arr = np.asarray(obj)
    if arr.ndim == 0:
        # A single value that is no Python int (those are taken before this): say what it is.
        raise ArgumentError(f"{name} must be {what} or a one-dimensional array of them, got {obj!r}")
    if arr.ndim != 1:
        raise ArgumentError(f"{name} must be one-dimensional, got an array of shape {arr.shape}")
    return arr


def int64_array(obj, name="ids"):
    """``obj`` as a contiguous int64 array; refuses other dtypes instead of silently rounding."""
    arr = _as_numpy(obj, name)
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    if arr.dtype.kind == "u":
        if arr.dtype.itemsize == 8 and arr.max() > np.iinfo(np.int64).max:
            raise ArgumentError(f"{name} holds ids above 2**63 - 1")
    elif arr.dtype.kind != "i":
        hint = " (missing values, or integers beyond 64 bits?)" if arr.dtype.kind in "fO" else ""
        raise ArgumentError(f"{name} must hold integers, got dtype {arr.dtype}{hint}")
    return np.ascontiguousarray(arr, dtype=np.int64)


def float64_array(obj, name="weight"):
    """``obj`` as a contiguous float64 array (integers and booleans are converted, other dtypes refused)."""
    arr = _as_numpy(obj, name, "a number")
    if arr.size == 0:
        return np.zeros(0, dtype=np.float64)
    if arr.dtype.kind not in "fiub":
        raise ArgumentError(f"{name} must hold numbers, got dtype {arr.dtype}")
    return np.ascontiguousarray(arr, dtype=np.float64)
