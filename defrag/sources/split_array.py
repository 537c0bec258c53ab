"""Splits given as an array of (feature, threshold) pairs, from any ensemble.

Each row is a split ``x_feature > threshold``; there are no trees, so the targets y
must be given to fit, and missing values have no direction (NaN is rejected).
"""
import numbers

import numpy as np

from ..splits.table import SplitTable
from .base import SourceModel


def accepts(est):
    return isinstance(est, (list, tuple, np.ndarray))


def split_table_from_array(splits, n_features, keep_duplicates=False):
    """Build the split table of (feature, threshold) pairs.

    Each row is a numeric split ``x[feature] > threshold``; the table sorts them and drops
    repeats unless ``keep_duplicates``.

    Parameters
    ----------
    splits : array-like of shape (n_splits, 2)
        The (feature, threshold) pairs: integer features in ``[0, n_features)``,
        thresholds finite or +inf. At least one.
    n_features : int
        The number of input columns, >= 1.
    keep_duplicates : bool, default=False
        Keep repeated splits.

    Returns
    -------
    SplitTable
        The table.

    See Also
    --------
    split_table_from_estimator : The split table of a fitted ensemble.
    SplitTable : The table.

    Examples
    --------
    >>> from defrag import split_table_from_array
    >>> table = split_table_from_array([[0, 1.5], [1, 0.0], [0, 0.5], [0, 1.5]], n_features=2)
    >>> len(table), table.threshold
    (3, array([0.5, 1.5, 0. ]))
    """
    try:
        arr = np.asarray(splits, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError("splits must be a numeric array of (feature, threshold) pairs") from exc
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(f"splits must have shape (n_splits, 2); got {arr.shape}")
    if arr.shape[0] == 0:
        raise ValueError("splits is empty: at least one (feature, threshold) pair is needed")
    if not isinstance(n_features, numbers.Integral) or n_features < 1:
        raise ValueError("n_features must be a positive integer")
    return SplitTable(arr[:, 0], arr[:, 1], n_features, keep_duplicates=keep_duplicates)


class SplitArraySource(SourceModel):
    library = "split array"
    checks_trees = False  # no trees: the split table (checked by SplitTable) is all there is

    def __init__(self, estimator, n_features):
        super().__init__(estimator)
        self._n_features = n_features

    @property
    def n_features(self):
        return self._n_features

    def describe(self):
        return "an array of (feature, threshold) pairs"

    def tree_bytes(self):
        return 0  # no trees: the split table is all there is

    def split_table(self, keep_duplicates=False):
        return split_table_from_array(self.estimator, self._n_features, keep_duplicates)

    @property
    def has_predict(self):
        return False

    @property
    def classes(self):
        return None
