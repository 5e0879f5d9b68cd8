"""Array namespace detection.

Thin layer over ``array_api_compat``: the algorithms are written against the returned
``xp`` so they run unchanged on numpy, cupy, array-api-strict and other conforming
libraries. Nothing here imports cupy.
"""
import numpy as np
import array_api_compat


def array_namespace(*arrays):
    """Return the Array API namespace shared by ``arrays`` (``None`` entries are ignored).

    Python scalars and lists are treated as numpy input, the way SciPy treats them.

    Raises
    ------
    TypeError
        If the arrays come from different libraries.
    """
    arrays = [a for a in arrays if a is not None]
    arrays = [np.asarray(a) if isinstance(a, (int, float, bool, list, tuple)) else a
              for a in arrays]
    if not arrays:
        return array_api_compat.array_namespace(np.empty(0))
    try:
        return array_api_compat.array_namespace(*arrays)
    except TypeError as exc:
        raise TypeError(f"inputs must be arrays from one array library: {exc}") from None


def is_numpy_namespace(xp):
    """True for numpy (including the array-api-compat numpy wrapper)."""
    return array_api_compat.is_numpy_namespace(xp)


def is_cupy_namespace(xp):
    """True for cupy (including the array-api-compat cupy wrapper); never imports cupy."""
    return array_api_compat.is_cupy_namespace(xp)


def to_numpy_scalar(x):
    """Turn a 0-d array of any namespace into a Python float.

    Meant for scalars the *user* asked for (``result.fun``), never for bulk data.
    """
    return float(x)


def is_dask_collection(x):
    """True for a dask array, dataframe or series (checked by type; never imports dask)."""
    module = type(x).__module__ or ""
    return module.split(".")[0] == "dask" and hasattr(x, "npartitions")


def is_dask_array(x):
    """True for a dask array (checked by type; never imports dask)."""
    return is_dask_collection(x) and hasattr(x, "chunks")
