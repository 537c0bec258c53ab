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

from . import _rules_eval, display, document, export
from ..splits import ZERO_THRESHOLD
from ..utils.dask_collections import is_dask_collection, map_rows
from ..utils.threads import checked_threads
from ..utils.validation import as_2d_float, check_not_sparse, check_numeric_column, checked_names
from .conditions import (Condition, _fmt, condition_arrays, conditions_on_training_rows,
                         missing_value_note)


class Rule:
    """One rule: a conjunction of conditions and the prediction of its region.

    Attributes: ``conditions`` (list of Condition), ``prediction`` (value or class
    label), ``proba`` (class probabilities, classification only), ``support``
    (training points covered), ``weight`` (mixture weight alpha_k), ``coverage``
    (share of the training points that satisfy the conditions, when known), ``share``
    (share of the training points it is the first match for, when known: set where the
    rule set is printed for its training rows, ``RuleSet.on_training_rows``; not kept in
    JSON).
    """

    coverage = None  # (rules pickled before the attribute existed)
    share = None

    def __init__(self, conditions, prediction, proba=None, support=0, weight=0.0, coverage=None,
                 share=None):
        self.conditions = list(conditions)
        self.prediction = prediction
        self.proba = None if proba is None else np.asarray(proba, dtype=np.float64)
        self.support = int(support)
        self.weight = float(weight)
        self.coverage = None if coverage is None else float(coverage)
        self.share = None if share is None else float(share)

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


# rows of input converted at a time where predict cannot read the input in place
BLOCK_ROWS = 65536


def _zero_as_missing(values):
    """values (float64) with |x| <= ZERO_THRESHOLD as NaN (a copy)."""
    return np.where(np.abs(values) <= ZERO_THRESHOLD, np.nan, values)


def rule_count_text(n_rules):
    """How a count of rules reads wherever it is printed (headers, titles, reprs):
    n_rules rules before the default, "1 rule and otherwise", "3 rules and otherwise"."""
    n_rules = int(n_rules)
    return f"{n_rules} rule{'' if n_rules == 1 else 's'} and otherwise"


# how to read an ordered rule set, said once above its listing or table
FIRST_MATCH = "a point takes the prediction of the first rule whose conditions hold (first match wins), " \
              "else the last line's"


def prediction_text(prediction, proba):
    if proba is None:
        return _fmt(prediction) if isinstance(prediction, (float, np.floating)) else str(prediction)
    return f"{prediction} (p={float(np.max(proba)):.3f})"


class RuleSet:
    """The rules of a fitted model and the prediction for points no rule covers.

    ``predict`` uses the rules as written: a point takes the prediction of the
    first rule (rules are ordered by weight) that covers it, else the default.
    ``default_support`` and ``default_share``: the training points no rule covers and
    their share, when known (see Rule's ``share``).
    """

    default_support = default_share = None  # (rule sets pickled before the attributes existed)

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
        if self.feature_names is not None:
            self._check_condition_names()

    def _check_condition_names(self):
        """ValueError unless every condition is on a feature of feature_names and prints its
        name: the exports name the column by feature_names, the printout by the condition
        (a rule set that printed "income > 0" and read column "b" would say one thing and do
        another). Without feature_names the features are positions (x0, x1, ...)."""
        names = self.feature_names
        for c in (c for r in self.rules for c in r.conditions):
            if not 0 <= c.feature < len(names):
                raise ValueError(f"a condition is on feature {c.feature}, outside the {len(names)} "
                                 "features of feature_names")
            if c.name != names[c.feature]:
                raise ValueError(f"a condition names feature {c.feature} {c.name!r}, but feature_names "
                                 f"calls it {names[c.feature]!r}")

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

    def _used_features(self):
        """The features the rules name, in order."""
        return sorted({c.feature for r in self.rules for c in r.conditions})

    def _compiled(self, used_only=False):
        """Flat arrays of the conditions for the C kernels (built once, cached); with
        used_only, their features numbered among the used ones (_used_features), for
        blocks holding only those columns."""
        cached = self.__dict__.get("_arrays")
        if cached is None:
            cached = self._arrays = {}
        key = "used" if used_only else "all"
        if key not in cached:
            # within a rule, the condition most training points fail comes first: a row
            # leaves the rule after fewer comparisons (the result does not depend on order)
            def order(rule):
                return sorted(rule.conditions, key=lambda c: 1.0 if c.train_share is None else c.train_share)

            conds = [c for r in self.rules for c in order(r)]
            ptr = np.zeros(len(self.rules) + 1, dtype=np.int64)
            np.cumsum([len(r.conditions) for r in self.rules], out=ptr[1:])
            arrays = dict(rule_ptr=ptr, **condition_arrays(conds, self.supports_missing))
            if used_only:
                arrays["feature"] = np.searchsorted(self._used_features(), arrays["feature"]).astype(np.int32)
            cached[key] = arrays
        return cached[key]

    def encode(self, X):
        """X as the rules read it: float64, categorical columns as category codes (by the
        source model's encoding, when the rule set has one; otherwise X must hold codes).
        A DataFrame is matched by column name when the rules were fitted on one: its
        columns are taken in the fitted order, and a missing one is a ValueError. The
        kernels (covering, first_match) refuse a NaN where the rules' source has no
        direction for it, and compare -inf below every threshold."""
        return self._encoded(self._by_column_name(X))

    def _encoded(self, X):
        """encode of X whose columns are in the fitted order."""
        if self.encoding is not None:
            X = self.encoding.transform(X, allow_nan=True, allow_inf=True)
        else:
            X = as_2d_float(X, allow_nan=True, allow_inf=True)
        if X.shape[1] != self._n_features():
            raise ValueError(f"X has {X.shape[1]} features but the rules use {self._n_features()}")
        zero = self._zero_features()
        if zero:  # zero reads as missing on these features (idempotent after the encoding)
            X = np.array(X, dtype=np.float64)
            X[:, zero] = _zero_as_missing(X[:, zero])
        return np.ascontiguousarray(X, dtype=np.float64)

    def _zero_features(self):
        """Features where a condition reads zero as missing."""
        return sorted({c.feature for r in self.rules for c in r.conditions if c.zero_missing})

    def _by_column_name(self, X):
        positions = self._column_positions(X)
        return X if positions is None else X.iloc[:, positions]

    def _column_positions(self, X):
        """Where a DataFrame holds the fitted columns, in the fitted order (None: as they
        are), warning where names are there on one side only."""
        names = getattr(self, "feature_names_in", None)  # None in rule sets pickled before it
        is_frame = hasattr(X, "columns") and hasattr(X, "iloc")
        if names is None:
            if is_frame and not all(str(c) == f"x{d}" for d, c in enumerate(X.columns)):
                warnings.warn("X has feature names, but the rules were fitted without feature "
                              "names: its columns are read in order", UserWarning, stacklevel=4)
            return None
        if not is_frame:
            warnings.warn("X does not have valid feature names, but the rules were fitted with "
                          "feature names: its columns are read in the fitted order", UserWarning,
                          stacklevel=4)
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

    def covers(self, X, n_threads=1):
        """Boolean matrix (n_samples, n_rules): rule j covers point i (evaluated in C).
        n_threads: an integer >= 1, at most the cores used (here and in every method
        that takes it)."""
        n_threads = checked_threads(n_threads)
        return self.covering(self.encode(X), n_threads)

    def covering(self, X_coded, n_threads=1):
        """covers of X as the rules read it (``encode``)."""
        return _rules_eval.rules_cover(np.ascontiguousarray(X_coded, dtype=np.float64),
                                       n_threads=checked_threads(n_threads), **self._compiled())

    def first_match(self, X_coded, n_threads=1):
        """Index of the first rule covering each row of X as the rules read it (``encode``),
        -1 where none does."""
        return _rules_eval.rules_first(np.ascontiguousarray(X_coded, dtype=np.float64),
                                       n_threads=checked_threads(n_threads), **self._compiled())

    def predictions(self):
        """The rules' predictions followed by the default's (index -1 of first_match)."""
        return np.asarray([r.prediction for r in self.rules] + [self.default_prediction])

    def probabilities(self):
        """Class probabilities of the rules followed by the default's (classification)."""
        return np.vstack([r.proba for r in self.rules] + [self.default_proba])

    def predict(self, X, n_threads=1):
        """The prediction of the first covering rule, else the default (evaluated in C).

        Only the features the rules name are read, without a copy of the others: a
        C-ordered float64 array in place, any other input (float32, integers, Fortran
        order, strided views, DataFrames) converted in blocks of rows, those columns
        only. A NaN in a feature where the rules' source has no direction for missing
        values is a ValueError. A Dask array or DataFrame gives a lazy Dask array."""
        n_threads = checked_threads(n_threads)
        if is_dask_collection(X):
            return map_rows(functools.partial(self.predict, n_threads=n_threads), X, self.predictions().dtype)
        first = self._first_matches(X, n_threads)
        return self.predictions()[first]  # -1 (no rule) selects the default, the last entry

    def apply(self, X, n_threads=1, matched=False):
        """Index of the rule that predicts each row of X: its first covering rule, -1 for
        the default (X read as predict reads it). matched: X's columns are already those
        the rules read, in order (an estimator has matched them by name and said so)."""
        n_threads = checked_threads(n_threads)
        if is_dask_collection(X):
            return map_rows(functools.partial(self.apply, n_threads=n_threads, matched=matched), X, np.int64)
        return self._first_matches(X, n_threads, matched)

    def _first_matches(self, X, n_threads=1, matched=False):
        """first_match(encode(X)) without encoding X whole: the same values, bit for bit
        (encode converts each row on its own), with memory for the output and a block."""
        check_not_sparse(X)
        positions = None if matched else self._column_positions(X)
        is_frame = hasattr(X, "columns") and hasattr(X, "iloc")
        if not is_frame:
            try:
                X = np.asarray(X)
            except Exception:  # ragged lists and the like: encode says what is wrong
                return self.first_match(self._encoded(X), n_threads)
            if X.ndim != 2:
                return self.first_match(self._encoded(X), n_threads)  # (refused there)
        if self.encoding is not None and not self.encoding.trivial:
            # categories, LightGBM's reading: the encoding reads whole rows, a block at a time
            cols = slice(None) if positions is None else positions

            def block(r0, r1):
                return self._encoded(X.iloc[r0:r1, cols] if is_frame else X[r0:r1])

            return self._blockwise(len(X), block, self._compiled(), n_threads)
        used, zero = self._used_features(), self._zero_features()
        n = self._n_features()
        if is_frame:
            fitted = range(X.shape[1]) if positions is None else positions  # (extra columns ignored)
            if len(fitted) != n:
                raise ValueError(f"X has {len(fitted)} features but the rules use {n}")
            for j in fitted:  # the refusals of as_2d_float, by dtype
                check_numeric_column(X.iloc[:, j], X.columns[j])
            take = [fitted[d] for d in used]

            def block(r0, r1):
                try:
                    return X.iloc[r0:r1, take].to_numpy(dtype=np.float64, na_value=np.nan)
                except (TypeError, ValueError) as exc:
                    raise TypeError("X has non-numeric columns; defrag needs numeric features") from exc
        else:
            arr = X
            as_2d_float(arr[:0], allow_nan=True, allow_inf=True)  # its refusals, by dtype
            if arr.shape[1] != n:
                raise ValueError(f"X has {arr.shape[1]} features but the rules use {n}")
            if arr.dtype == np.float64 and arr.flags.c_contiguous and not zero:
                return self.first_match(arr, n_threads)  # read in place

            def block(r0, r1):
                out = np.empty((r1 - r0, len(used)))
                for j, d in enumerate(used):  # one strided column at a time (a cast as astype's)
                    out[:, j] = arr[r0:r1, d]
                return out

        if not used:  # no conditions: the first rule, if any, covers every row
            return np.full(len(X), 0 if self.rules else -1, dtype=np.int32)
        zero_at = [used.index(d) for d in zero]

        def used_block(r0, r1):
            out = block(r0, r1)
            if zero_at:
                out[:, zero_at] = _zero_as_missing(out[:, zero_at])
            return out

        return self._blockwise(len(X), used_block, self._compiled(used_only=True), n_threads)

    @staticmethod
    def _blockwise(n_rows, block, arrays, n_threads):
        """First matches of rows given BLOCK_ROWS at a time by block(r0, r1) (float64, the
        columns the arrays number), into one int32 array."""
        first = np.empty(n_rows, dtype=np.int32)
        for r0 in range(0, n_rows, BLOCK_ROWS):
            r1 = min(r0 + BLOCK_ROWS, n_rows)
            first[r0:r1] = _rules_eval.rules_first(np.ascontiguousarray(block(r0, r1), dtype=np.float64),
                                                   n_threads=n_threads, **arrays)
        return first

    def on_training_rows(self, X, n_threads=1):
        """The rule set with its conditions printed for the training rows X (prepared, as
        the model reads them; see Condition.on_training_rows)."""
        n_threads = checked_threads(n_threads)
        new = copy.copy(self)
        new.__dict__.pop("_arrays", None)
        new.rules = [copy.copy(r) for r in self.rules]
        printed = iter(conditions_on_training_rows([c for r in self.rules for c in r.conditions], X,
                                                      n_threads))
        for rule in new.rules:
            rule.conditions = [next(printed) for _ in rule.conditions]
        if X.shape[0]:
            covered, first = new.cover_counts(X, n_threads)
            for rule, count in zip(new.rules, covered):
                rule.coverage = float(count / X.shape[0])
            new.set_first_match_counts(first)
        return new

    def cover_counts(self, X_coded, n_threads=1):
        """(the rows of X each rule covers, the rows each is the first match for with the
        default's first), X as the rules read it (``encode``): one pass over the rows."""
        n_threads = checked_threads(n_threads)
        R = len(self.rules)
        if not X_coded.shape[0]:
            return np.zeros(R, dtype=np.int64), np.zeros(R + 1, dtype=np.int64)
        cover = self.covering(X_coded, n_threads)
        # the first matches from the same matrix (index R where no rule covers: the default)
        first = np.bincount(_rules_eval.first_cover(cover.view(np.uint8)), minlength=R + 1)
        return cover.sum(axis=0), np.roll(first, 1)

    def set_first_match_counts(self, counts):
        """Set each rule's ``share``, ``default_support`` and ``default_share`` from the
        training points each is the first match for: counts[0] no rule's (the default's),
        counts[k] rule k's."""
        counts = np.asarray(counts, dtype=np.float64)
        total = max(float(counts.sum()), 1.0)
        self.default_support = int(counts[0])
        self.default_share = float(counts[0] / total)
        for rule, count in zip(self.rules, counts[1:]):
            rule.share = float(count / total)

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
        coverage (share of training points satisfying it), share (share of training points
        it is the first match for; None where unknown; the default's support and share
        too), proba_<class>
        columns; given X,
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

    # ------------------------------------------------------------- for readers
    def table_rows(self):
        """The cells of the rule set's table (rules/display.py), one tuple per rule in
        order and a last one for the default: number, conditions as the listing prints
        them (missing-value marks included), prediction, support (training points it
        predicts for) and the share of the training points it is the first match for
        (the default's support and the shares blank where unknown)."""
        def share(value):
            return "" if value is None else f"{100.0 * value:.1f}%"

        rows = [(str(i), rule.condition_text(mark_unseen=True), prediction_text(rule.prediction, rule.proba),
                 str(rule.support), share(rule.share)) for i, rule in enumerate(self.rules, 1)]
        rows.append(("*", "otherwise", prediction_text(self.default_prediction, self.default_proba),
                     "" if self.default_support is None else str(self.default_support), share(self.default_share)))
        return rows

    def missing_note(self):
        """The line below the listing on where missing values go, or None where the
        conditions say it all (conditions.missing_value_note)."""
        enc = self.encoding
        unknown_missing = () if enc is None or enc.unknown != "missing" else \
            {d for d, cats in enumerate(enc.categories) if cats is not None}
        return missing_value_note((c for r in self.rules for c in r.conditions), self.supports_missing,
                                  unknown_missing)

    def to_markdown(self):
        """The rules as a Markdown table (rule number, conditions, prediction, support,
        share of the training points it is the first match for), the default last, then
        the note on missing values where the listing has one."""
        return display.markdown_table(self.table_rows(), self.missing_note())

    def _repr_markdown_(self):
        return self.to_markdown()

    def to_html(self, above=()):
        """The table of ``to_markdown`` in HTML (every text escaped), under the lines of
        text ``above``."""
        return display.html_table(self.table_rows(), self.missing_note(), above)

    def _repr_html_(self):
        return self.to_html([f"RuleSet: {rule_count_text(len(self.rules))}; {FIRST_MATCH}"])

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
        note = self.missing_note()
        if note is not None:
            lines.append(note)
        return "\n".join(lines)

    def __repr__(self):
        return f"<RuleSet: {rule_count_text(len(self.rules))}>"
