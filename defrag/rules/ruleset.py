"""Rules read off the fitted components: extraction, pruning, printing, export.

A component's Bernoulli parameters eta_k say, per split, whether its region lies
on the split's right side (eta > 1 - kappa), its left side (eta < kappa) or
across it. Numeric splits ``x_d > t`` merge per feature into one interval
``lower < x_d <= upper``; categorical splits (right side: the code is in, or not
in, a set) merge into one set condition ``x_d in S`` or ``x_d not in S``, S the
intersection of the sets the region lies in minus the union of those it lies
outside. Then the conditions are pruned as in sec. 3.2 of the AISTATS 2018
paper: a bound (or the "in" / "not in" part of a set condition) is dropped when
the number of covered training points does not change (counted by popcount
over bit-packed condition columns, src_c/dfg_prune.c).
"""
import copy
import decimal
import functools
import warnings

import numpy as np

from . import _rules_eval
from ..splits.inputs import ZERO_THRESHOLD
from ..utils.validation import as_2d_float
from ..splits.table import IN_SET, NOT_IN_SET, NUMERIC, category_words


def _fmt(value):
    return f"{value:.6g}"


_EXACT = decimal.Context(prec=800, Emin=-2000, Emax=2000)  # any double, exactly


def printed_bound(value, column):
    """The shortest decimal p with the same training split as the bound value: every
    training value of column (NaN ignored) is <= p exactly when it is <= value. Printed
    instead of the bound, so that no training point lies between the printed and the
    real threshold; the real one is kept for prediction and exports."""
    column = column[~np.isnan(column)]
    below = column[column <= value]
    above = column[column > value]
    return printed_between(value, below.max() if below.size else -np.inf,
                           above.min() if above.size else np.inf)


def printed_between(value, lo, hi):
    """printed_bound of value given its training neighbours: lo, the largest training
    value <= value (-inf if none), and hi, the smallest > value (+inf if none)."""
    if not np.isfinite(value):
        return float(value)
    exact = decimal.Decimal(float(value))
    for digits in range(1, 18):
        # the k-digit decimals next to the value, below and above it: if any k-digit
        # decimal splits the training values as the value does, one of these two does
        step = decimal.Decimal(1).scaleb(exact.adjusted() - digits + 1)
        down, up = (float(exact.quantize(step, rounding=r, context=_EXACT))
                    for r in (decimal.ROUND_FLOOR, decimal.ROUND_CEILING))
        fits = [p for p in (down, up) if lo <= p < hi and np.isfinite(p)]
        if fits:
            return min(fits, key=lambda p: (abs(p - value), p))
    return float(value)


def _condition_arrays(conditions, supports_missing=True):
    """Flat arrays of conditions for the C kernels: feature, lower, upper (+-inf where
    absent), missing (1: a NaN satisfies it, 0: it fails, 2: an error where the source
    model has no rule for missing values), and the category sets when any is a set."""
    arrays = dict(
        feature=np.array([c.feature for c in conditions], dtype=np.int32),
        lower=np.array([-np.inf if c.lower is None else c.lower for c in conditions], dtype=np.float64),
        upper=np.array([np.inf if c.upper is None else c.upper for c in conditions], dtype=np.float64),
        missing=np.array([1 if c.missing else (0 if supports_missing else 2) for c in conditions],
                         dtype=np.uint8),
    )
    if any(c.is_set for c in conditions):
        sets = [c.categories if c.is_set else () for c in conditions]
        set_ptr = np.zeros(len(conditions) + 1, dtype=np.int64)
        np.cumsum([len(codes) for codes in sets], out=set_ptr[1:])
        arrays["set_ptr"], arrays["set_words"] = category_words(
            set_ptr, np.array([c for codes in sets for c in codes], dtype=np.int64))
        arrays["kind"] = np.array([(2 if c.negated else 1) if c.is_set else 0 for c in conditions],
                                  dtype=np.uint8)
    return arrays


def _holds_arrays(conditions):
    """Condition.holds of each condition as the kernels take it (a missing value: NaN, or
    zero where the condition reads zero as missing)."""
    return dict(_condition_arrays(conditions), zero_threshold=ZERO_THRESHOLD,
                zero_missing=np.array([c.zero_missing for c in conditions], dtype=np.uint8))


def conditions_holds(conditions, X, n_threads=1):
    """Condition.holds of each condition on X, boolean (n_conditions, n_samples), from one
    pass over X."""
    return _rules_eval.condition_holds(np.ascontiguousarray(X, dtype=np.float64),
                                       n_threads=n_threads, **_holds_arrays(list(conditions)))


def conditions_on_training_rows(conditions, X, n_threads=1):
    """Condition.on_training_rows of each condition, from one pass of the C kernels over
    X (prepared, C-contiguous float64) for all of them."""
    return conditions_printed(conditions, training_row_statistics(conditions, X, n_threads))


def training_row_statistics(conditions, X, n_threads=1):
    """What printing the conditions needs from the rows X, one pass of the C kernels:
    dict(below, above: per condition and side (lower, upper), the largest value of X at
    or below the bound and the smallest above it, +-inf where none or no bound; holds:
    the rows each condition holds on; n_nan: the NaN values of each column; n_rows).
    Maxima, minima and sums: the statistics of row blocks combine exactly
    (combine_training_row_statistics)."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    conditions = list(conditions)
    bounds = [(i, j, getattr(c, side)) for i, c in enumerate(conditions) if not c.is_set
              for j, side in enumerate(("lower", "upper")) if getattr(c, side) is not None]
    lo, hi = _rules_eval.bound_neighbours(
        X, np.array([conditions[i].feature for i, _, _ in bounds], dtype=np.int32),
        np.array([v for _, _, v in bounds], dtype=np.float64), n_threads=n_threads)
    below = np.full((len(conditions), 2), -np.inf)
    above = np.full((len(conditions), 2), np.inf)
    index = (np.array([i for i, _, _ in bounds], dtype=np.intp), np.array([j for _, j, _ in bounds], dtype=np.intp))
    below[index], above[index] = lo, hi
    holds, n_nan = _rules_eval.condition_holds(X, n_threads=n_threads, output="count",
                                                **_holds_arrays(conditions))
    return dict(below=below, above=above, holds=holds, n_nan=n_nan, n_rows=X.shape[0])


def combine_training_row_statistics(parts):
    """The training_row_statistics of the union of the row blocks of parts (exact)."""
    parts = list(parts)
    return dict(below=np.max([p["below"] for p in parts], axis=0),
                above=np.min([p["above"] for p in parts], axis=0),
                holds=np.sum([p["holds"] for p in parts], axis=0),
                n_nan=np.sum([p["n_nan"] for p in parts], axis=0),
                n_rows=sum(p["n_rows"] for p in parts))


def conditions_printed(conditions, stats):
    """Copies of the conditions printed for the rows of stats (training_row_statistics):
    printed bounds, missing_seen, train_share."""
    new = [copy.copy(c) for c in conditions]
    n = stats["n_rows"]
    for i, c in enumerate(new):
        if not c.is_set:
            c.printed_lower, c.printed_upper = (
                None if value is None else printed_between(value, stats["below"][i, j], stats["above"][i, j])
                for j, value in enumerate((c.lower, c.upper)))
        c.missing_seen = bool(stats["n_nan"][c.feature])
        c.train_share = float(stats["holds"][i] / n) if n else None
    return new


def _shortest(value):
    """The shortest text that reads back as value, without a trailing '.0' (896 for 896.0)."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def _bound_text(value, lower, zero_missing, printed=None):
    """(operator, number) of a printed bound ``x > value`` (lower) or ``x <= value``.

    A bound at +-1e-35 is LightGBM's zero threshold: its encoding reads |x| <= 1e-35 as
    0 (or as missing, zero_missing), so x > 1e-35 means x > 0, x > -1e-35 means
    x >= 0, x <= 1e-35 means x <= 0 and x <= -1e-35 means x < 0; where zero is
    missing, >= 0 and <= 0 are > 0 and < 0."""
    if abs(value) != ZERO_THRESHOLD:
        return (">" if lower else "<="), _fmt(value) if printed is None else _shortest(printed)
    if lower:
        return (">=" if value < 0 and not zero_missing else ">"), "0"
    return ("<=" if value > 0 and not zero_missing else "<"), "0"


class Condition:
    """``lower < x[feature] <= upper`` (a missing bound is None), or for a categorical
    feature ``x[feature] in categories`` (``not in`` when negated), categories being
    category codes.

    ``missing``: whether a missing value (NaN) satisfies the condition (the source
    model sends missing values into the region). ``zero_missing``: the source model
    reads zero (|x| <= 1e-35) as missing too (LightGBM ``missing_type`` Zero).
    ``category_names``: printable names of the codes (indexed by code), when known.
    ``train_share``: share of the training points that satisfy the condition (when
    known); rule evaluation checks the most selective conditions first.
    """

    __slots__ = ("feature", "name", "lower", "upper", "train_share", "missing", "categories",
                 "negated", "category_names", "zero_missing", "printed_lower", "printed_upper",
                 "missing_seen")

    def __init__(self, feature, name, lower=None, upper=None, train_share=None, missing=False,
                 categories=None, negated=False, category_names=None, zero_missing=False,
                 printed_lower=None, printed_upper=None, missing_seen=True):
        self.feature = int(feature)
        self.name = str(name)
        self.lower = None if lower is None else float(lower)
        self.upper = None if upper is None else float(upper)
        self.train_share = None if train_share is None else float(train_share)
        self.missing = bool(missing)
        self.categories = None if categories is None else tuple(sorted({int(c) for c in categories}))
        if self.categories is not None and (self.lower is not None or self.upper is not None):
            raise ValueError("a condition is either an interval or a category set")
        self.negated = bool(negated)
        self.category_names = None if category_names is None else tuple(str(n) for n in category_names)
        self.zero_missing = bool(zero_missing)
        # how the bounds print (printed_bound; None: 6 significant digits), and whether the
        # training data had missing values here (if not, "(or missing)" is not printed:
        # the condition still lets a missing value through, as the exports say)
        self.printed_lower = None if printed_lower is None else float(printed_lower)
        self.printed_upper = None if printed_upper is None else float(printed_upper)
        self.missing_seen = bool(missing_seen)

    def on_training_rows(self, X):
        """A copy whose printing follows the training rows X (prepared, as the model reads
        them): printed bounds, whether X has missing values here, the share that holds."""
        return conditions_on_training_rows([self], X)[0]

    def __setstate__(self, state):  # conditions pickled before the printing fields existed
        state = state[1] if isinstance(state, tuple) else state
        for name in self.__slots__:
            setattr(self, name, state.get(name, True if name == "missing_seen" else None))

    @property
    def is_set(self):
        return self.categories is not None

    def holds(self, X):
        """Truth values on X as the model reads it (categorical columns as codes)."""
        col = np.asarray(X[:, self.feature], dtype=np.float64)
        if self.is_set:
            ok = np.isin(col, np.asarray(self.categories, dtype=np.float64)) ^ self.negated
        else:
            ok = np.ones(col.shape[0], dtype=bool)
            if self.lower is not None:
                ok &= col > self.lower
            if self.upper is not None:
                ok &= col <= self.upper
        missing = np.isnan(col)
        if self.zero_missing:
            missing |= np.abs(col) <= ZERO_THRESHOLD
        return np.where(missing, self.missing, ok)

    def _labels(self):
        names = self.category_names
        return [names[c] if names is not None and c < len(names) else str(c) for c in self.categories]

    def _printed_labels(self):
        """Labels as printed: quoted when a comma, brace or outer space would make the set ambiguous."""
        return [repr(n) if not n or n != n.strip() or any(ch in n for ch in ",{}'") else n
                for n in self._labels()]

    def _text(self):
        """The condition on present values, or None when no present value satisfies it."""
        if self.is_set:
            if not self.categories and not self.negated:
                return None
            return f"{self.name} {'not in' if self.negated else 'in'} {{{', '.join(self._printed_labels())}}}"
        if (self.lower is not None and self.lower >= np.finfo(np.float64).max) or (
                self.lower is not None and self.upper is not None and self.lower >= self.upper):
            return None
        lo = None if self.lower is None else _bound_text(self.lower, True, self.zero_missing,
                                                         self.printed_lower)
        hi = None if self.upper is None else _bound_text(self.upper, False, self.zero_missing,
                                                         self.printed_upper)
        if lo is not None and hi is not None:
            return f"{lo[1]} {lo[0].replace('>', '<')} {self.name} {hi[0]} {hi[1]}"
        if lo is not None:
            return f"{self.name} {lo[0]} {lo[1]}"
        return f"{self.name} {hi[0]} {hi[1]}"

    def __str__(self):
        text = self._text()
        missing = "missing or 0" if self.zero_missing else "missing"
        if text is None:
            return f"{self.name} is {missing}" if self.missing else f"{self.name} in {{}}"
        # "(or missing)" where training had missing values; a zero read as missing
        # (LightGBM's zero-as-missing) is common at predict time: always said
        if self.missing and (self.missing_seen or self.zero_missing):
            return f"{text} (or {missing})"
        # does the printed interval hold 0? (where zero is missing, a bound at +-1e-35
        # prints as one that excludes it: x > 0, x < 0)
        zero_inside = self.zero_missing and not self.is_set and (
            (self.lower is None or (self.lower < 0.0 and self.lower != -ZERO_THRESHOLD))
            and (self.upper is None or (self.upper >= 0.0 and self.upper != ZERO_THRESHOLD)))
        return f"{text} (except 0)" if zero_inside else text

    def to_dict(self):
        from .export import condition_to_dict

        return condition_to_dict(self)

    def __eq__(self, other):
        same = ("feature", "name", "lower", "upper", "missing", "categories", "negated", "zero_missing")
        return isinstance(other, Condition) and all(getattr(self, a) == getattr(other, a) for a in same)

    def __repr__(self):
        return f"Condition({self})"


class Rule:
    """One rule: a conjunction of conditions and the prediction of its region.

    Attributes: ``conditions`` (list of Condition), ``prediction`` (value or class
    label), ``proba`` (class probabilities, classification only), ``support``
    (training points covered), ``weight`` (mixture weight alpha_k), ``coverage``
    (share of the training points that satisfy the conditions, when known).
    """

    coverage = None  # (rules pickled before the attribute existed)

    def __init__(self, conditions, prediction, proba=None, support=0, weight=0.0, coverage=None):
        self.conditions = list(conditions)
        self.prediction = prediction
        self.proba = None if proba is None else np.asarray(proba, dtype=np.float64)
        self.support = int(support)
        self.weight = float(weight)
        self.coverage = None if coverage is None else float(coverage)

    def covers(self, X):
        X = np.asarray(X)
        ok = np.ones(X.shape[0], dtype=bool)
        for cond in self.conditions:
            ok &= cond.holds(X)
        return ok

    def condition_text(self):
        return " and ".join(str(c) for c in self.conditions) if self.conditions else "always"

    def to_dict(self):
        from .export import rule_to_dict

        return rule_to_dict(self)

    def __str__(self):
        return f"if {self.condition_text()} then y = {_prediction_text(self.prediction, self.proba)}"

    def __repr__(self):
        return f"Rule({self})"


def _prediction_text(prediction, proba):
    if proba is None:
        return _fmt(prediction) if isinstance(prediction, (float, np.floating)) else str(prediction)
    return f"{prediction} (p={float(np.max(proba)):.3f})"


class RuleSet:
    """The rules of a fitted model and the prediction for points no rule covers.

    ``predict`` uses the rules as written: a point takes the prediction of the
    first rule (rules are ordered by weight) that covers it, else the default.
    """

    def __init__(self, rules, default_prediction, default_proba=None, feature_names=None,
                 classes=None, supports_missing=False, encoding=None, feature_names_in=None):
        self.supports_missing = bool(supports_missing)
        # the DataFrame columns the rules were fitted on (None: fitted on an array); a
        # DataFrame given to predict is matched by these names
        self.feature_names_in = None if feature_names_in is None else [str(n) for n in feature_names_in]
        self.rules = list(rules)
        self.default_prediction = default_prediction
        self.default_proba = None if default_proba is None else np.asarray(default_proba)
        self.feature_names = None if feature_names is None else list(feature_names)
        self.classes = classes
        self.encoding = encoding

    def __len__(self):
        return len(self.rules)

    def __iter__(self):
        return iter(self.rules)

    def __getitem__(self, i):
        return self.rules[i]

    def _n_features(self):
        if self.feature_names is not None:
            return len(self.feature_names)
        return 1 + max((c.feature for r in self.rules for c in r.conditions), default=0)

    def _compiled(self):
        """Flat arrays of the conditions for the C kernels (built once, cached)."""
        cached = getattr(self, "_arrays", None)
        if cached is None:
            # within a rule, the condition most training points fail comes first: a row
            # leaves the rule after fewer comparisons (the result does not depend on order)
            def order(rule):
                return sorted(rule.conditions, key=lambda c: 1.0 if c.train_share is None else c.train_share)

            conds = [c for r in self.rules for c in order(r)]
            ptr = np.zeros(len(self.rules) + 1, dtype=np.int64)
            np.cumsum([len(r.conditions) for r in self.rules], out=ptr[1:])
            cached = self._arrays = dict(rule_ptr=ptr, **_condition_arrays(conds, self.supports_missing))
        return cached

    def encode(self, X):
        """X as the rules read it: float64, categorical columns as category codes (by the
        source model's encoding, when the rule set has one; otherwise X must hold codes).
        A DataFrame is matched by column name when the rules were fitted on one: its
        columns are taken in the fitted order, and a missing one is a ValueError."""
        X = self._by_column_name(X)
        if self.encoding is not None:
            X = self.encoding.transform(X, allow_nan=True, allow_inf=True)
        else:
            X = as_2d_float(X, allow_nan=True, allow_inf=True)
        if X.shape[1] != self._n_features():
            raise ValueError(f"X has {X.shape[1]} features but the rules use {self._n_features()}")
        zero = sorted({c.feature for r in self.rules for c in r.conditions if c.zero_missing})
        if zero:  # zero reads as missing on these features (idempotent after the encoding)
            X = np.array(X, dtype=np.float64)
            sub = X[:, zero]
            sub[np.abs(sub) <= ZERO_THRESHOLD] = np.nan
            X[:, zero] = sub
        X = np.ascontiguousarray(X, dtype=np.float64)
        # a NaN where a condition has no direction for it is an error wherever it lies
        # (the kernels would refuse it only where they happen to read it)
        strict = sorted({c.feature for r in self.rules for c in r.conditions
                         if not c.missing and not self.supports_missing})
        if strict and np.isnan(X[:, strict]).any():
            raise ValueError("X contains NaN in a feature the rules use, and the model they come "
                             "from has no rule for missing values")
        # -inf is below every threshold: x <= t holds. The kernels test an absent lower
        # bound as x > -inf, which -inf fails; -DBL_MAX compares as -inf with every
        # finite threshold
        neg_inf = np.isneginf(X)
        if neg_inf.any():
            X = np.where(neg_inf, -np.finfo(np.float64).max, X)
        return X

    def _by_column_name(self, X):
        names = getattr(self, "feature_names_in", None)  # None in rule sets pickled before it
        is_frame = hasattr(X, "columns") and hasattr(X, "iloc")
        if names is None:
            if is_frame and not all(str(c) == f"x{d}" for d, c in enumerate(X.columns)):
                warnings.warn("X has feature names, but the rules were fitted without feature "
                              "names: its columns are read in order", UserWarning, stacklevel=3)
            return X
        if not is_frame:
            warnings.warn("X does not have valid feature names, but the rules were fitted with "
                          "feature names: its columns are read in the fitted order", UserWarning,
                          stacklevel=3)
            return X
        columns = [str(c) for c in X.columns]
        if columns == names:
            return X
        missing = [n for n in names if n not in columns]
        if missing:
            raise ValueError(f"X lacks the columns the rules were fitted with: {', '.join(map(repr, missing[:10]))}")
        if len(set(columns)) != len(columns):
            raise ValueError("X has repeated column names")
        position = {c: i for i, c in enumerate(columns)}
        return X.iloc[:, [position[n] for n in names]]

    def covers(self, X, n_threads=1):
        """Boolean matrix (n_samples, n_rules): rule j covers point i (evaluated in C)."""
        return self.covering(self.encode(X), n_threads)

    def covering(self, X_coded, n_threads=1):
        """covers of X as the rules read it (``encode``)."""
        return _rules_eval.rules_cover(np.ascontiguousarray(X_coded, dtype=np.float64),
                                       n_threads=n_threads, **self._compiled())

    def first_match(self, X_coded, n_threads=1):
        """Index of the first rule covering each row of X as the rules read it (``encode``),
        -1 where none does."""
        return _rules_eval.rules_first(np.ascontiguousarray(X_coded, dtype=np.float64),
                                       n_threads=n_threads, **self._compiled())

    def predictions(self):
        """The rules' predictions followed by the default's (index -1 of first_match)."""
        return np.asarray([r.prediction for r in self.rules] + [self.default_prediction])

    def probabilities(self):
        """Class probabilities of the rules followed by the default's (classification)."""
        return np.vstack([r.proba for r in self.rules] + [self.default_proba])

    def predict(self, X, n_threads=1):
        """The prediction of the first covering rule, else the default (evaluated in C).

        Only the features the rules name are read; a NaN in one of them is a ValueError.
        A Dask array or DataFrame gives a lazy Dask array (defrag/_dask.py)."""
        from ..fit.dask_rows import is_dask_collection, map_rows

        if is_dask_collection(X):
            return map_rows(functools.partial(self.predict, n_threads=n_threads), X, self.predictions().dtype)
        first = self.first_match(self.encode(X), n_threads)
        return self.predictions()[first]  # -1 (no rule) selects the default, the last entry

    def on_training_rows(self, X, n_threads=1):
        """The rule set with its conditions printed for the training rows X (prepared, as
        the model reads them; see Condition.on_training_rows)."""
        new = copy.copy(self)
        new.__dict__.pop("_arrays", None)
        new.rules = [copy.copy(r) for r in self.rules]
        printed = iter(conditions_on_training_rows([c for r in self.rules for c in r.conditions], X,
                                                      n_threads))
        for rule in new.rules:
            rule.conditions = [next(printed) for _ in rule.conditions]
        if X.shape[0]:
            for rule, share in zip(new.rules, new.covering(X, n_threads).mean(axis=0)):
                rule.coverage = float(share)
        return new

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_arrays", None)  # rebuilt on first use
        return state

    # ------------------------------------------------------------------ exports
    def to_dict(self):
        """JSON-ready dict with everything needed to rebuild the rule set (``from_dict``):
        exact bounds, outputs, feature names, the input encoding, a schema version."""
        from .export import ruleset_to_dict

        return ruleset_to_dict(self)

    @classmethod
    def from_dict(cls, d):
        """The rule set of ``to_dict``; it predicts as the original did."""
        from .export import ruleset_from_dict

        return ruleset_from_dict(d)

    def to_json(self, indent=None):
        """``to_dict`` as JSON text (strict JSON: infinite numbers as strings)."""
        from .export import to_json

        return to_json(self, indent)

    @classmethod
    def from_json(cls, text):
        """The rule set of ``to_json`` (imports neither scikit-learn nor pandas)."""
        from .export import from_json

        return from_json(text)

    def to_frame(self, X=None, y=None):
        """One row per rule and a last one for the default, as a pandas DataFrame: rule
        text, n_conditions, prediction, support (training points it predicts for), weight,
        coverage (share of training points satisfying it), proba_<class> columns; given X,
        X_coverage (share of X it covers), X_support and X_share (rows of X it predicts
        for); given y too, precision and error (classification: share right / wrong) or
        error (regression: mean squared error) on those rows."""
        from .export import to_frame

        return to_frame(self, X, y)

    def to_sql(self, table=None, column_names=None):
        """One SQL ``CASE WHEN ... THEN ... ELSE ... END`` expression that gives
        ``predict`` on a table holding the columns as a DataFrame would (missing values
        as NULL, categorical columns as their labels). ``table`` qualifies the column
        names; ``column_names`` (a list in the rules' column order, or a dict from the
        rules' names to the table's) renames them. NULL where ``predict`` raises."""
        from .export import to_sql

        return to_sql(self, table, column_names)

    def to_python(self, name="predict"):
        """Source of a dependency-free Python function ``name(row)`` (a dict or pandas
        Series by column name, or a sequence in column order) returning ``predict``'s
        value for the row."""
        from .export import to_python

        return to_python(self, name)

    def query_strings(self, column_names=None):
        """pandas ``DataFrame.query`` expressions, one per rule, selecting the rows the
        rule covers (column names in backticks; missing values as ``x != x``)."""
        from .export import query_strings

        return query_strings(self, column_names)

    def __str__(self):
        lines = []
        width = len(str(len(self.rules)))
        for i, rule in enumerate(self.rules, 1):
            lines.append(
                f"[{str(i).rjust(width)}] {rule}   (support {rule.support}, weight {rule.weight:.3f})"
            )
        lines.append(
            f"[{'*'.rjust(width)}] otherwise y = {_prediction_text(self.default_prediction, self.default_proba)}"
        )
        return "\n".join(lines)

    def __repr__(self):
        return f"<RuleSet of {len(self.rules)} rules>"


def component_bounds(eta_k, splits, kappa):
    """Per-feature interval (lower, upper) of one component (eta > 1-kappa / eta < kappa)
    from its numeric splits, and whether a missing value lies in the region: every
    split that fixes the region (eta near 0 or 1) must send missing values to the
    region's side."""
    D = splits.n_features
    lower = np.full(D, -np.inf)
    upper = np.full(D, np.inf)
    above = eta_k > 1.0 - kappa
    below = eta_k < kappa
    numeric = splits.kind == NUMERIC
    np.maximum.at(lower, splits.feature[above & numeric], splits.threshold[above & numeric])
    np.minimum.at(upper, splits.feature[below & numeric], splits.threshold[below & numeric])
    wrong_side = (above | below) & (splits.missing_right.astype(bool) != above)
    missing_ok = np.ones(D, dtype=bool)
    missing_ok[splits.feature[wrong_side]] = False
    return lower, upper, missing_ok


def component_sets(eta_k, splits, kappa):
    """Per categorical feature of one component: (codes the region lies in: the
    intersection of its splits' sets, or None; codes it lies outside: the union, or None)."""
    above = eta_k > 1.0 - kappa
    below = eta_k < kappa
    in_set, not_in_set = splits.kind == IN_SET, splits.kind == NOT_IN_SET
    inside = (above & in_set) | (below & not_in_set)
    outside = (below & in_set) | (above & not_in_set)
    sets = {}
    for l in np.flatnonzero(inside | outside):  # over the fixed splits of one component
        d, codes = int(splits.feature[l]), splits.set_of(l)
        inc, exc = sets.get(d, (None, None))
        if inside[l]:
            inc = codes if inc is None else np.intersect1d(inc, codes)
        else:
            exc = codes if exc is None else np.union1d(exc, codes)
        sets[d] = (inc, exc)
    return sets


def _unit_columns(X, units, missing, n_threads=1):
    """Bits over the samples of the prunable parts of conditions (see
    extract_rule_conditions), all from one pass over X: (n_units, ceil(N / 64)); missing:
    per unit, whether a missing value satisfies it."""
    parts = [Condition(d, "", categories=value, negated=part == "out", missing=ok) if part in ("in", "out")
             else Condition(d, "", **{part: value}, missing=ok) for (d, part, value), ok in zip(units, missing)]
    return _rules_eval.condition_holds(np.ascontiguousarray(X, dtype=np.float64), n_threads=n_threads,
                                       output="bits", **_holds_arrays(parts))


def extract_rule_conditions(eta_k, splits, kappa, X_train, feature_names, n_threads=1):
    """Merged and pruned conditions of one component, and its training support.

    X_train is the prepared (float64, C-contiguous) training input, as the model reads it.
    """
    return extract_rules_conditions([eta_k], splits, kappa, X_train, feature_names, n_threads)[0]


def _prunable_units(eta_k, splits, kappa):
    """A component's prunable parts, (feature, "lower" / "upper", bound) and (feature,
    "in" / "out", codes), in feature order, and whether a missing value satisfies each
    feature's condition."""
    lower, upper, missing_ok = component_bounds(eta_k, splits, kappa)
    missing_ok &= splits.supports_missing
    units = [(d, "lower", lo) for d, lo in enumerate(lower) if np.isfinite(lo)]
    units += [(d, "upper", hi) for d, hi in enumerate(upper) if np.isfinite(hi)]
    for d, (inc, exc) in component_sets(eta_k, splits, kappa).items():
        units += [(d, part, codes) for part, codes in (("in", inc), ("out", exc)) if codes is not None]
    rank = {"lower": 0, "upper": 1, "in": 2, "out": 3}
    units.sort(key=lambda u: (u[0], rank[u[1]]))
    return units, missing_ok


def extract_rules_conditions(etas, splits, kappa, X_train, feature_names, n_threads=1):
    """extract_rule_conditions of several components: [(conditions, support), ...], the
    columns of all their parts from one pass over X_train."""
    per_component = [_prunable_units(eta_k, splits, kappa) for eta_k in etas]
    n = X_train.shape[0]
    units = [u for us, _ in per_component for u in us]
    unit_missing = np.array([bool(ok[u[0]]) for us, ok in per_component for u in us], dtype=bool)
    # one missing flag per unit: a feature's flag differs between components
    all_cols = _unit_columns(X_train, units, unit_missing, n_threads)
    out, start = [], 0
    for units, missing_ok in per_component:
        cols = all_cols[start:start + len(units)]
        start += len(units)
        out.append(_pruned_conditions(units, missing_ok, cols, n, splits, feature_names))
    return out


def _pruned_conditions(units, missing_ok, cols, n, splits, feature_names):
    keep = np.ones(len(units), dtype=np.uint8)
    support = _rules_eval.prune_conditions(np.ascontiguousarray(cols), n, keep)
    merged, columns = {}, {}
    for j, ((d, part, value), kept) in enumerate(zip(units, keep)):
        if kept:
            merged.setdefault(d, {})[part] = value
            columns.setdefault(d, []).append(j)
    conditions = []
    for d, parts in sorted(merged.items()):
        share = _rules_eval.count_all(np.ascontiguousarray(cols[columns[d]]), n) / max(n, 1)
        common = dict(train_share=share, missing=bool(missing_ok[d]),
                      zero_missing=bool(splits.encoding.zero_missing[d]))
        if "in" in parts or "out" in parts:
            inc, exc = parts.get("in"), parts.get("out")
            codes = exc if inc is None else (inc if exc is None else np.setdiff1d(inc, exc))
            conditions.append(Condition(d, feature_names[d], categories=codes, negated=inc is None,
                                        category_names=splits.encoding.category_names(d), **common))
        else:
            conditions.append(Condition(d, feature_names[d], parts.get("lower"), parts.get("upper"),
                                        **common))
    return conditions, support
