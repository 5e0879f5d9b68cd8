"""Host (numpy) implementations of Safe-KL kernel-table entries that need no compilation,
kept out of the Numba module so that using them never imports Numba."""
import numpy as np


def scatter_add(v, idx, vals):
    """``v[idx] += vals`` in place on numpy arrays (numpy's ``add.at``: repeated indices
    accumulated); returns ``v``."""
    np.add.at(v, idx, vals)
    return v
