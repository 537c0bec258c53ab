"""How an explanation reads the columns of X: a DataFrame matched by name to the columns it
was fitted on (``column_positions``), and zero read as missing where the source model
reads it so (``zero_as_missing``)."""
import warnings

import numpy as np

from ..splits import ZERO_THRESHOLD
from ..utils.validation import is_frame, user_stacklevel


def zero_as_missing(values):
    """values (float64) with |x| <= ZERO_THRESHOLD as NaN (a copy)."""
    return np.where(np.abs(values) <= ZERO_THRESHOLD, np.nan, values)


def column_positions(names, X):
    """Where a DataFrame X holds the fitted columns names, in the fitted order (None: as
    they are), warning where names are there on one side only."""
    frame = is_frame(X)
    if names is None:
        if frame and not all(str(c) == f"x{d}" for d, c in enumerate(X.columns)):
            warnings.warn("X has feature names, but the rules were fitted without feature "
                          "names: its columns are read in order", UserWarning, stacklevel=user_stacklevel())
        return None
    if not frame:
        warnings.warn("X does not have valid feature names, but the rules were fitted with "
                      "feature names: its columns are read in the fitted order", UserWarning,
                      stacklevel=user_stacklevel())
        return None
    columns = [str(c) for c in X.columns]
    if columns == names:
        return None
    missing = [n for n in names if n not in columns]
    if missing:
        raise ValueError(f"X lacks the columns the rules were fitted with: {', '.join(map(repr, missing[:10]))}")
    if len(set(columns)) != len(columns):
        raise ValueError("X has repeated column names")
    position = {c: i for i, c in enumerate(columns)}
    return [position[n] for n in names]
