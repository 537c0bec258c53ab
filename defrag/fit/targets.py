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
    if y is None:  # a raw Booster whose predictions defrag does not read
        raise ValueError(source.no_predictions or "y is required with a raw Booster; or pass the "
                         "scikit-learn wrapper")
    with np.errstate(invalid="ignore", over="ignore"):  # (its cast of values beyond int64)
        kind = type_of_target(y)
    if kind in ("binary", "multiclass"):
        return "classification"
    if kind == "continuous" or not split_array:
        return "regression"
    raise ValueError(f"cannot infer the task from y of type {kind!r}; set task=")


# what the targets are where y is None, for target_values' messages
PREDICTIONS = "the ensemble's predictions (the targets where y is None)"


def target_values(y, task, what="y", classes=None):
    """y as a checked 1-D array: float64 for regression, the labels for classification.
    what: what y is, for the messages ("y", or the ensemble's predictions where y is None);
    classes: the model's classes, where it has them (float labels among them are labels)."""
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"{what} must be 1-D; got shape {y.shape}"
                         + (" (a model of several outputs: defrag explains one)" if what == PREDICTIONS else ""))
    if task == "regression":
        try:
            y = y.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{what} must be numeric for regression") from exc
    else:
        check_labels(y, what)
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError(f"{what} contains NaN or infinite values")
    if (task == "classification" and y.dtype.kind == "f" and _continuous(y)
            and not (classes is not None and np.isin(y, np.asarray(classes)).all())):
        # every distinct number would be a class of its own (as scikit-learn refuses them)
        raise ValueError(f"{what}: continuous values, not class labels, where the task is "
                         "classification (a classifier's, or task='classification'): give class "
                         "labels, or set task='regression'")
    return y


def _continuous(y):
    """Whether float values y are not all integers (scikit-learn's "continuous")."""
    with np.errstate(invalid="ignore", over="ignore"):  # (its cast of values beyond int64)
        return type_of_target(y) == "continuous"


# The regression targets defrag fits: values within +-MAX_TARGET that, unless constant,
# span at least MIN_TARGET_SPREAD. The validation's standard errors are sums of squared
# squared errors (about the spread to the fourth power), which overflow float64 above a
# spread of about 1e77 and underflow below 1e-77 (the rules then silently collapsed to one):
# 1e60 and 1e-60 leave room for sums over millions of rows.
MAX_TARGET = 1e60
MIN_TARGET_SPREAD = 1e-60


def check_regression_range(y_range, constant, what="the regression targets"):
    """ValueError where the targets (their (min, max)) lie outside what the fit computes
    with: beyond +-MAX_TARGET, or (not constant) spread over less than MIN_TARGET_SPREAD."""
    lo, hi = y_range
    advice = ("rescale y (the rules' outputs scale with it)" if what == "y" else
              "fit to a rescaled y instead (the rules' outputs scale with it)")
    if max(abs(lo), abs(hi)) > MAX_TARGET:
        raise ValueError(f"{what}: values as large as {lo if abs(lo) > abs(hi) else hi:.3g}; defrag "
                         f"fits regression targets within +-{MAX_TARGET:.0e}: {advice}")
    if not constant and hi - lo < MIN_TARGET_SPREAD:
        raise ValueError(f"{what}: values that span only {hi - lo:.3g}; defrag fits regression targets "
                         f"that vary by at least {MIN_TARGET_SPREAD:.0e}: {advice}")


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
    # relative to the values alone: targets of any scale vary or not alike (with a floor
    # of 1, every target within 1e-12 of zero was constant: y * 1e-13 gave one rule)
    return hi - lo <= 1e-12 * max(abs(lo), abs(hi))
