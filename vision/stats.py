"""Order statistics of small arrays, worked out faster than numpy's general path and equal to its results.

Owns :func:`median_rows`. Imports nothing of ours.
"""

from __future__ import annotations

import numpy as np


def median_rows(values: np.ndarray) -> np.ndarray:
    """``np.median(values, axis=1)`` of a 2-D array (the mean of the two middle values of an even
    count), found by one partial sort rather than np.median's general path."""
    n = values.shape[1]
    if n == 0:
        return np.median(values, axis=1)
    k = n // 2
    if n % 2:
        return np.partition(values, k, axis=1)[:, k].astype(np.float64)
    part = np.partition(values, (k - 1, k), axis=1)
    return (part[:, k - 1].astype(np.float64) + part[:, k]) / 2
