"""Dask collections: recognised without importing dask, and mapped lazily partition by
partition (predictions on a Dask array or DataFrame)."""
import numpy as np


def is_dask_collection(obj):
    """Whether obj is a Dask collection (array, DataFrame, Series), without importing dask."""
    module = type(obj).__module__
    return module == "dask" or module.startswith("dask.")


def import_dask():
    """The dask module, or an ImportError saying how to install it."""
    try:
        import dask
    except ImportError as exc:  # pragma: no cover - a collection implies dask is installed
        raise ImportError("Dask inputs need dask: pip install 'defrag[dask]'") from exc
    return dask


def is_dask_frame(X):
    return hasattr(X, "columns") and hasattr(X, "map_partitions")


def map_rows(fn, X, dtype, n_columns=None):
    """fn (NumPy rows -> one value, or n_columns values, per row) on every partition of the
    Dask array or DataFrame X: a lazy Dask array."""
    if is_dask_frame(X):
        shape = (0,) if n_columns is None else (0, n_columns)
        return X.map_partitions(fn, meta=np.empty(shape, dtype=dtype))
    if not (hasattr(X, "chunks") and hasattr(X, "map_blocks")) or X.ndim != 2:
        raise ValueError("X must be a 2-D Dask array or a Dask DataFrame")
    X = X.rechunk({1: -1})
    if n_columns is None:
        return X.map_blocks(fn, dtype=dtype, drop_axis=1)
    return X.map_blocks(fn, dtype=dtype, chunks=(X.chunks[0], (n_columns,)))
