"""The training rows as the fit's stages read them, in one process.

The stages (fit/pipeline.py) read the rows through a small interface that
``InMemoryRows`` implements here and ``DaskRows`` (fit/dask_rows.py) on a cluster:

* ``names_in``, ``n_features``, ``meta`` (what ``InputEncoding.bind`` reads), and after
  ``code(encoding)`` (X as the source model reads it) ``n_samples``;
* ``first_pass(supports_missing, task, source, rows)``: the NaN check, the missing
  values per column, the targets (y, or the ensemble's predictions) and their summary,
  and the restarts' rows of coded X and y (``rows``: sorted indices of the subsample, or
  None for all rows), as a ``FirstPass``;
* ``variance(mean)`` and ``all_targets(...)``: the targets of all rows, encoded;
* over all rows once the restarts have run: ``scorer`` (a mixture's training error),
  ``refit_rule_list`` (a list's outputs; ``refit_rule_lists`` of several) and
  ``on_training_rows`` (how the rules print).
"""
import dataclasses

import numpy as np

from ..rules import refit_rule_list, refit_rule_lists
from ..rules.conditions import conditions_on_training_rows
from ..utils.exact import exact_mean, exact_partial, squared_deviations
from ..utils.validation import (
    check_missing,
    check_target_length,
    distinct_labels,
    feature_names_of,
    n_columns,
)
from .mixture import kernel_problem
from .targets import PREDICTIONS, class_target, regression_target, target_values


@dataclasses.dataclass
class FirstPass:
    """What the first pass over the rows gives the fit."""

    nan_columns: np.ndarray  # bool (n_features,): the column has a missing value
    labels: np.ndarray  # classification: the distinct labels (None for regression)
    partial_sums: list  # regression: exact partial sums of y (utils/exact.py)
    y_range: tuple  # regression: (min, max) of y
    X_fit: np.ndarray  # the restarts' rows of coded X (float64, C-contiguous)
    y_fit: np.ndarray  # their targets, checked (values, or labels)


def target_summary(y, task):
    """(labels, partial_sums, y_range) of FirstPass for checked targets y."""
    if task == "regression":
        return None, [exact_partial(y)], (float(y.min(initial=np.inf)), float(y.max(initial=-np.inf)))
    return distinct_labels(y), None, None


def first_pass_of(X_coded, y, task, rows):
    """The FirstPass statistics of one block of coded rows and their checked targets y;
    rows: the block's rows of the restarts (local indices), or None for all of them."""
    X_fit, y_fit = (X_coded, y) if rows is None else (X_coded[rows], y[rows])
    return FirstPass(np.isnan(X_coded).any(axis=0), *target_summary(y, task),
                     np.ascontiguousarray(X_fit, dtype=np.float64), y_fit)


def take_rows(X, rows):
    """The rows of X (a DataFrame's by position, else an array's)."""
    return X.iloc[rows] if hasattr(X, "iloc") else np.asarray(X)[rows]


def exact_variance(y, mean):
    """The variance of y about mean, correctly rounded from exact sums."""
    return exact_mean([exact_partial(squared_deviations(y, mean))], y.size)


def summary_of_fit_rows(first, task):
    """first (a FirstPass) with the targets' summary of the restarts' rows alone
    (``targets_of_fit_rows``), however the rows are held."""
    return dataclasses.replace(first, **dict(zip(("labels", "partial_sums", "y_range"),
                                                 target_summary(first.y_fit, task))))


class RowCount:
    """The all-rows Problem of run_restarts (fit/restarts.py) where the scores read the
    rows themselves: only its size is read."""

    def __init__(self, n_samples):
        self.n_samples = n_samples


class InMemoryRows:
    """The training rows X (and y, None for the ensemble's predictions) in this process."""

    distributed = False

    def __init__(self, X, y=None):
        self.X_input = X
        self.y_input = y
        self.names_in = feature_names_of(X)
        self.n_features = n_columns(X)
        self.meta = X
        self.threads = 1  # the kernels' OpenMP threads on all rows (set by the pipeline)

    def code(self, encoding):
        """X as the source model reads it (category codes, zero as missing), checked."""
        X = encoding.transform(self.X_input, allow_nan=True)
        if X.shape[0] < 1:
            raise ValueError("X has no samples")
        if self.y_input is not None:
            check_target_length(self.y_input, X.shape[0])
        self.X = np.ascontiguousarray(X, dtype=np.float64)  # as the kernels read it
        self.n_samples = X.shape[0]

    def resident_rows(self, n_fit):
        """Rows of X held in this process through the fit (all of them)."""
        return self.n_samples

    def first_pass(self, supports_missing, task, source, rows, fit_rows_only=False):
        check_missing(self.X, supports_missing)  # before the ensemble sees a NaN
        if self.y_input is not None:
            self.y = target_values(self.y_input, task, classes=source.classes)
        elif fit_rows_only and rows is not None:
            # the ensemble's predictions of the restarts' rows only (targets_of_fit_rows)
            self.y = target_values(source.predict(take_rows(self.X_input, rows)), task, PREDICTIONS, source.classes)
            return FirstPass(np.isnan(self.X).any(axis=0), *target_summary(self.y, task),
                             np.ascontiguousarray(self.X[rows], dtype=np.float64), self.y)
        else:
            self.y = target_values(source.predict(self.X_input), task, PREDICTIONS, source.classes)
        return first_pass_of(self.X, self.y, task, rows)

    def variance(self, mean):
        """The variance of y about mean, correctly rounded from exact sums."""
        return exact_variance(self.y, mean)

    def all_targets(self, task, classes=None, mean=0.0, var=1.0):
        """The Target of all rows (regression: of the given mean and variance)."""
        if task == "regression":
            self.target = regression_target(self.y, mean, var)
        else:
            self.target = class_target(self.y, classes)
        return self.target

    def scorer(self, score, splits, bits):
        """(the Problem of all rows, score): score(problem, params, target, eps, n_threads)
        of the restarts, on all rows (bits: the s matrix's encoding, as the restarts')."""
        s_matrix = splits.kernel_input(self.X, self.threads, bits=bits)
        return kernel_problem(splits, s_matrix, self.target), score

    def refit_rule_list(self, rules, target, classes):
        """The rule list's outputs refitted on all rows (rules/lists.py)."""
        return refit_rule_list(rules, self.X, target.y, target.n_classes, classes)

    def refit_rule_lists(self, rule_lists, target, classes):
        """refit_rule_list of each list, each distinct rule read from the rows once."""
        return refit_rule_lists(rule_lists, self.X, target.y, target.n_classes, classes)

    def on_training_rows(self, rule_set):
        """The rule set printed for all rows (RuleSet.on_training_rows)."""
        return rule_set.on_training_rows(self.X, self.threads)

    def printed_conditions(self, conditions):
        """The conditions printed for all rows (conditions_on_training_rows), in order."""
        return conditions_on_training_rows(conditions, self.X, self.threads)

    def key_counts(self, tree):
        """RuleTree.key_counts on all rows: the rows through each node and leaf."""
        return tree.key_counts(self.X, self.threads)
