"""The targets of the mixture's output model: the task, y checked, and y encoded for the
kernels (float64 values with their exact mean and variance, or int32 class codes)."""
from dataclasses import dataclass

import numpy as np
from sklearn.utils.multiclass import type_of_target

from ..utils.validation import check_labels, distinct_labels


@dataclass
class Target:
    """Targets of the mixture's output model, encoded for the kernels."""

    y: np.ndarray  # float64 values (regression) or int32 class codes
    n_classes: int  # 0 for regression
    mean: float = 0.0
    std: float = 1.0
    var: float = 1.0
    var_floor: float = 1e-12


def decide_task(task, source, y, split_array):
    """The task: as set (task != "auto"), else the model's own, else from the type of y."""
    if split_array and y is None:
        raise ValueError("y is required when the splits are given as an array")
    if task != "auto":
        return task
    if source.task is not None:
        return source.task
    if y is None:  # a raw Booster
        raise ValueError("y is required with a raw Booster; or pass the scikit-learn wrapper")
    kind = type_of_target(y)
    if kind in ("binary", "multiclass"):
        return "classification"
    if kind == "continuous" or not split_array:
        return "regression"
    raise ValueError(f"cannot infer the task from y of type {kind!r}; set task=")


def target_values(y, task):
    """y as a checked 1-D array: float64 for regression, the labels for classification."""
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D; got shape {y.shape}")
    if task == "regression":
        try:
            y = y.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError("y must be numeric for regression") from exc
    else:
        check_labels(y)
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinite values")
    return y


def regression_target(y, mean, var):
    """The Target of regression values y (float64) of the given mean and variance (both
    correctly rounded from exact sums, utils/exact.py: the same bits however the rows
    are partitioned)."""
    floor = 1e-9 * var if var > 0 else 1e-12
    scale = var if var > 0 else 1.0
    return Target(np.ascontiguousarray(y), 0, float(mean), float(np.sqrt(scale)), scale, floor)


def target_classes(classes, labels):
    """The classes of the labels (y, or its distinct values): the source model's classes
    when it has them and they hold every label, else the labels' own."""
    if classes is not None and not np.all(np.isin(labels, classes)):
        classes = None  # y has labels the ensemble does not know: use y's own
    return distinct_labels(labels) if classes is None else classes


def class_codes(y, classes):
    """The int32 codes of labels y in classes."""
    return np.searchsorted(classes, y).astype(np.int32)


def class_target(y, classes):
    """The Target of labels y: their codes in classes."""
    return Target(np.ascontiguousarray(class_codes(y, classes)), int(classes.size))


def is_constant(task, summary):
    """Whether the targets take a single value: one class, or a regressor's constant to
    rounding. summary: the distinct labels (classification), or (min, max) of the values."""
    if task == "classification":
        return np.asarray(summary).size == 1
    lo, hi = summary
    return hi - lo <= 1e-12 * max(1.0, abs(lo), abs(hi))
