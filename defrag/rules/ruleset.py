"""Rules and rule sets as printed and as applied: a rule is a conjunction of conditions with
the prediction of its region; a rule set is ordered, and a point takes the prediction of
the first rule that covers it, else the default. Prediction runs in C (``_rules_eval``:
each row's first covering rule, one pass over the features the rules name). A rule set
is written to and read from JSON (``document``) and exported to SQL, Python and tables
(``export``).
"""
import copy
import functools
import json
import warnings

import numpy as np

from . import _rules_eval, document, export
from ..splits import ZERO_THRESHOLD
from ..utils.dask_collections import is_dask_collection, map_rows
from ..utils.validation import as_2d_float, checked_names
from .conditions import (Condition, _fmt, condition_arrays, conditions_on_training_rows,
                         missing_value_note)


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

    def condition_text(self, mark_unseen=False):
        """The conditions joined by "and" ("always" for none); mark_unseen: as a rule
        set's listing prints them (Condition.text)."""
        if not self.conditions:
            return "always"
        return " and ".join(c.text(mark_unseen) for c in self.conditions)

    def to_dict(self):
        """The rule as a JSON-ready dict (rules/document.py)."""
        return document.rule_to_dict(self)

    def __str__(self):
        return self.text()

    def text(self, mark_unseen=False):
        return f"if {self.condition_text(mark_unseen)} then y = {prediction_text(self.prediction, self.proba)}"

    def __repr__(self):
        return f"Rule({self})"


def rule_count_text(n_rules):
    """How a count of rules reads wherever it is printed (headers, titles, reprs):
    n_rules rules before the default, "1 rule and otherwise", "3 rules and otherwise"."""
    n_rules = int(n_rules)
    return f"{n_rules} rule{'' if n_rules == 1 else 's'} and otherwise"


def prediction_text(prediction, proba):
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
        # DataFrame given to predict is matched by these names. Names are never empty
        # nor repeated: printed rules and exports name columns by them
        self.feature_names_in = None if feature_names_in is None else checked_names(feature_names_in,
                                                                                    "feature_names_in")
        self.rules = list(rules)
        self.default_prediction = default_prediction
        self.default_proba = None if default_proba is None else np.asarray(default_proba)
        self.feature_names = None if feature_names is None else checked_names(feature_names)
        if self.feature_names is not None and self.feature_names_in is not None and \
                len(self.feature_names) != len(self.feature_names_in):
            raise ValueError(f"feature_names has {len(self.feature_names)} names but feature_names_in "
                             f"{len(self.feature_names_in)}")
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
            cached = self._arrays = dict(rule_ptr=ptr, **condition_arrays(conds, self.supports_missing))
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
        A Dask array or DataFrame gives a lazy Dask array."""
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
        return document.ruleset_to_dict(self)

    @classmethod
    def from_dict(cls, d):
        """The rule set of ``to_dict``; it predicts as the original did. The whole
        document is checked before anything is built: a bad one raises
        ``RulesDocumentError`` (a ValueError) naming the JSON path of the bad field."""
        fields = document.ruleset_fields(d)
        rules = [Rule([Condition(**c) for c in r.pop("conditions")], **r) for r in fields.pop("rules")]
        return cls(rules, **fields)

    def to_json(self, indent=None):
        """``to_dict`` as JSON text (strict JSON: infinite numbers as strings)."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False, ensure_ascii=False)

    @classmethod
    def from_json(cls, text):
        """The rule set of ``to_json`` (imports neither scikit-learn nor pandas); a bad
        document raises ``RulesDocumentError`` (see ``from_dict``), text that is not
        JSON or nests too deep too."""
        return cls.from_dict(document.parse(text))

    def to_frame(self, X=None, y=None):
        """One row per rule and a last one for the default, as a pandas DataFrame: rule
        text, n_conditions, prediction, support (training points it predicts for), weight,
        coverage (share of training points satisfying it), proba_<class> columns; given X,
        X_coverage (share of X it covers), X_support and X_share (rows of X it predicts
        for); given y too, precision and error (classification: share right / wrong) or
        error (regression: mean squared error) on those rows."""
        return export.to_frame(self, X, y)

    def to_sql(self, table=None, column_names=None):
        """One SQL ``CASE WHEN ... THEN ... ELSE ... END`` expression that gives
        ``predict`` on a table holding the columns as a DataFrame would (missing values
        as NULL, categorical columns as their labels). ``table`` qualifies the column
        names; ``column_names`` (a list in the rules' column order, or a dict from the
        rules' names to the table's) renames them. NULL where ``predict`` raises."""
        return export.to_sql(self, table, column_names)

    def to_python(self, name="predict"):
        """Source of a dependency-free Python function ``name(row)`` (a dict or pandas
        Series by column name, or a sequence in column order) returning ``predict``'s
        value for the row."""
        return export.to_python(self, name)

    def query_strings(self, column_names=None):
        """pandas ``DataFrame.query`` expressions, one per rule, selecting the rows the
        rule covers (column names in backticks; missing values as ``x != x``)."""
        return export.query_strings(self, column_names)

    def __str__(self):
        """The listing: one line per rule, in order, then the default; below it, where
        the conditions do not say it all, one line on where missing values go
        (conditions.missing_value_note)."""
        lines = []
        width = len(str(len(self.rules)))
        for i, rule in enumerate(self.rules, 1):
            lines.append(f"[{str(i).rjust(width)}] {rule.text(mark_unseen=True)}   "
                         f"(support {rule.support}, weight {rule.weight:.3f})")
        lines.append(
            f"[{'*'.rjust(width)}] otherwise y = {prediction_text(self.default_prediction, self.default_proba)}"
        )
        note = missing_value_note((c for r in self.rules for c in r.conditions), self.supports_missing,
                                  getattr(self.encoding, "unknown", None) == "missing")
        if note is not None:
            lines.append(note)
        return "\n".join(lines)

    def __repr__(self):
        return f"<RuleSet: {rule_count_text(len(self.rules))}>"
