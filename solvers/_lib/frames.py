"""pandas input at the boundary: a DataFrame or Series becomes a numpy array once.

Entry points that take array data call :func:`unwrap_frame` on it first; the labels it
returns (a DataFrame's columns, a Series' name) travel to the results that have axes (the
node labels of a learned DAG, the feature names of a fitted model). pandas is never
imported: a frame is recognised by its type's module, so the library works, and imports
quickly, without it.
"""
import numpy as np

__all__ = ["is_pandas", "unwrap_frame"]


def is_pandas(x):
    """True for a pandas DataFrame, Series or Index (checked by type; never imports
    pandas). dask dataframes are not pandas objects and return False."""
    module = type(x).__module__ or ""
    return module.split(".")[0] == "pandas" and hasattr(x, "to_numpy")


def unwrap_frame(x, name):
    """``(values, labels)`` of pandas input; ``(x, None)`` for anything else.

    A DataFrame gives its values as a float64 array (nullable integers and booleans
    included; missing values become NaN, which the caller's finiteness check reports) and
    its column labels as a list; a Series gives a 1-d array and its name (``None`` when
    unnamed) in a one-element list.

    Raises
    ------
    TypeError
        A frame with a non-numeric column (strings, categories, dates), naming ``name``
        and the offending columns.
    """
    if not is_pandas(x):
        return x, None
    frame = x.to_frame() if x.ndim == 1 else x
    bad = [str(col) for col, kind in zip(frame.columns, frame.dtypes)
           if getattr(kind, "kind", "O") not in "biuf"]
    if bad:
        raise TypeError(f"{name} must hold numeric columns only; columns {bad} are not "
                        "numeric (encode or drop them first)")
    values = frame.to_numpy(dtype=np.float64, na_value=np.nan)
    if x.ndim == 1:
        return values[:, 0], [x.name]
    return values, list(frame.columns)
