"""Rules read off the fitted components: extraction, pruning, printing, export.

A component's Bernoulli parameters eta_k say, per split ``x_d > t``, whether its
region lies above (eta > 1 - kappa), below (eta < kappa) or across the split.
The bounds are merged per feature into one interval ``lower < x_d <= upper``, and
then pruned as in sec. 3.2 of the AISTATS 2018 paper: a bound is dropped when the
number of covered training points does not change (counted by popcount over
bit-packed condition columns, src_c/dfg_bits.c).
"""
import numpy as np

from . import _core


def _fmt(value):
    return f"{value:.6g}"


class Condition:
    """``lower < x[feature] <= upper``; a missing bound is None.

    ``missing``: whether a missing value (NaN) satisfies the condition (the source
    model sends missing values into the region). ``train_share``: share of the
    training points that satisfy the condition (when known); rule evaluation checks
    the most selective conditions first.
    """

    __slots__ = ("feature", "name", "lower", "upper", "train_share", "missing")

    def __init__(self, feature, name, lower=None, upper=None, train_share=None, missing=False):
        self.feature = int(feature)
        self.name = str(name)
        self.lower = None if lower is None else float(lower)
        self.upper = None if upper is None else float(upper)
        self.train_share = None if train_share is None else float(train_share)
        self.missing = bool(missing)

    def holds(self, X):
        col = np.asarray(X[:, self.feature], dtype=np.float64)
        ok = np.ones(col.shape[0], dtype=bool)
        if self.lower is not None:
            ok &= col > self.lower
        if self.upper is not None:
            ok &= col <= self.upper
        return np.where(np.isnan(col), self.missing, ok)

    def __str__(self):
        empty = (self.lower is not None and self.lower >= np.finfo(np.float64).max) or (
            self.lower is not None and self.upper is not None and self.lower >= self.upper)
        if empty and self.missing:
            return f"{self.name} is missing"  # no present value lies in the interval
        if self.lower is not None and self.upper is not None:
            text = f"{_fmt(self.lower)} < {self.name} <= {_fmt(self.upper)}"
        elif self.lower is not None:
            text = f"{self.name} > {_fmt(self.lower)}"
        else:
            text = f"{self.name} <= {_fmt(self.upper)}"
        return f"{text} (or missing)" if self.missing else text

    def to_dict(self):
        return {"feature": self.feature, "name": self.name, "lower": self.lower, "upper": self.upper,
                "missing": self.missing, "train_share": self.train_share}

    def __eq__(self, other):
        same = ("feature", "name", "lower", "upper", "missing")
        return isinstance(other, Condition) and all(getattr(self, a) == getattr(other, a) for a in same)

    def __repr__(self):
        return f"Condition({self})"


class Rule:
    """One rule: a conjunction of conditions and the prediction of its region.

    Attributes: ``conditions`` (list of Condition), ``prediction`` (value or class
    label), ``proba`` (class probabilities, classification only), ``support``
    (training points covered), ``weight`` (mixture weight alpha_k).
    """

    def __init__(self, conditions, prediction, proba=None, support=0, weight=0.0):
        self.conditions = list(conditions)
        self.prediction = prediction
        self.proba = None if proba is None else np.asarray(proba, dtype=np.float64)
        self.support = int(support)
        self.weight = float(weight)

    def covers(self, X):
        X = np.asarray(X)
        ok = np.ones(X.shape[0], dtype=bool)
        for cond in self.conditions:
            ok &= cond.holds(X)
        return ok

    def condition_text(self):
        return " and ".join(str(c) for c in self.conditions) if self.conditions else "always"

    def to_dict(self):
        pred = self.prediction.item() if isinstance(self.prediction, np.generic) else self.prediction
        return {
            "conditions": [c.to_dict() for c in self.conditions],
            "prediction": pred,
            "proba": None if self.proba is None else [float(p) for p in self.proba],
            "support": self.support,
            "weight": self.weight,
        }

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
                 classes=None, supports_missing=False):
        self.supports_missing = bool(supports_missing)
        self.rules = list(rules)
        self.default_prediction = default_prediction
        self.default_proba = None if default_proba is None else np.asarray(default_proba)
        self.feature_names = None if feature_names is None else list(feature_names)
        self.classes = classes

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
            cached = self._arrays = (
                ptr,
                np.array([c.feature for c in conds], dtype=np.int32),
                np.array([-np.inf if c.lower is None else c.lower for c in conds], dtype=np.float64),
                np.array([np.inf if c.upper is None else c.upper for c in conds], dtype=np.float64),
                # NaN: satisfies (1), fails (0), or is an error when the source model
                # defined no direction for missing values (2)
                np.array([1 if c.missing else (0 if self.supports_missing else 2) for c in conds],
                         dtype=np.uint8),
            )
        return cached

    def _checked(self, X):
        X = np.asarray(X)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D; got shape {X.shape}")
        if X.dtype == object or not (np.issubdtype(X.dtype, np.number) or X.dtype == bool):
            raise TypeError(f"X must be numeric; got dtype {X.dtype}")
        if X.shape[1] != self._n_features():
            raise ValueError(f"X has {X.shape[1]} features but the rules use {self._n_features()}")
        return np.ascontiguousarray(X, dtype=np.float64)

    def covers(self, X, n_threads=1):
        """Boolean matrix (n_samples, n_rules): rule j covers point i (evaluated in C)."""
        return _core.rules_cover(self._checked(X), *self._compiled(), n_threads)

    def predict(self, X, n_threads=1):
        """The prediction of the first covering rule, else the default (evaluated in C).

        Only the features the rules name are read; a NaN in one of them is a ValueError."""
        first = _core.rules_first(self._checked(X), *self._compiled(), n_threads)
        preds = np.asarray([r.prediction for r in self.rules] + [self.default_prediction])
        return preds[first]  # -1 (no rule) selects the default, the last entry

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_arrays", None)  # rebuilt on first use
        return state

    def to_dict(self):
        default = self.default_prediction
        if isinstance(default, np.generic):
            default = default.item()
        return {
            "rules": [r.to_dict() for r in self.rules],
            "default_prediction": default,
            "default_proba": None if self.default_proba is None else [float(p) for p in self.default_proba],
            "feature_names": self.feature_names,
            "classes": None if self.classes is None else [c.item() if isinstance(c, np.generic) else c for c in self.classes],
        }

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
    """Per-feature interval (lower, upper) of one component (eta > 1-kappa / eta < kappa),
    and whether a missing value lies in the region: every split that fixes the
    region (eta near 0 or 1) must send missing values to the region's side."""
    D = splits.n_features
    lower = np.full(D, -np.inf)
    upper = np.full(D, np.inf)
    above = eta_k > 1.0 - kappa
    below = eta_k < kappa
    np.maximum.at(lower, splits.feature[above], splits.threshold[above])
    np.minimum.at(upper, splits.feature[below], splits.threshold[below])
    wrong_side = (above | below) & (splits.missing_right.astype(bool) != above)
    missing_ok = np.ones(D, dtype=bool)
    missing_ok[splits.feature[wrong_side]] = False
    return lower, upper, missing_ok


def extract_rule_conditions(eta_k, splits, kappa, X_train, feature_names):
    """Merged and pruned conditions of one component, and its training support.

    X_train is the prepared (float64, C-contiguous) training input.
    """
    lower, upper, missing_ok = component_bounds(eta_k, splits, kappa)
    missing_ok &= splits.supports_missing
    bounds = [(d, lo, True) for d, lo in enumerate(lower) if np.isfinite(lo)]
    bounds += [(d, hi, False) for d, hi in enumerate(upper) if np.isfinite(hi)]
    bounds.sort(key=lambda b: (b[0], not b[2]))
    n = X_train.shape[0]
    if bounds:
        cols = np.stack([_core.condition_column(X_train, d, t, greater, bool(missing_ok[d]))
                         for d, t, greater in bounds])
    else:
        cols = np.zeros((0, max((n + 63) // 64, 1)), dtype=np.uint64)
    keep = np.ones(len(bounds), dtype=np.uint8)
    support = _core.prune_conditions(cols, n, keep)
    merged, columns = {}, {}
    for j, ((d, t, greater), kept) in enumerate(zip(bounds, keep)):
        if not kept:
            continue
        lo, hi = merged.get(d, (None, None))
        merged[d] = (t, hi) if greater else (lo, t)
        columns.setdefault(d, []).append(j)
    conditions = [
        Condition(d, feature_names[d], lo, hi,
                  _core.count_all(np.ascontiguousarray(cols[columns[d]]), n) / max(n, 1),
                  missing=bool(missing_ok[d]))
        for d, (lo, hi) in sorted(merged.items())
    ]
    return conditions, support
