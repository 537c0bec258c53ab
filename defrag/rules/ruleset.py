"""Rules and rule sets as printed and as applied: a rule is a conjunction of conditions with
the prediction of its region; a rule set is ordered, and a point takes the prediction of
the first rule that covers it, else the default. Prediction runs in C (``_rules_eval``:
each row's first covering rule, one pass over the features the rules name). A rule set
is written to and read from JSON (``document``) and exported to SQL, Python and tables
(``export``).
"""
import copy

import numpy as np

from . import _rules_eval, document, document_reader, export
from ..utils.text import printed_label
from ..utils.threads import checked_threads
from ..utils.validation import as_2d_float, check_not_sparse, check_numeric_column, is_frame
from .conditions import Condition
from .columns import column_positions, zero_as_missing
from .explanation import Explanation
from .tree_nodes import number_text, rounded, spread_decimals


class Rule:
    """One rule: a conjunction of conditions and the prediction of its region.

    A rule covers the rows where all its conditions hold (every row when it has none).

    Parameters
    ----------
    conditions : iterable of Condition
        The conditions, all of which must hold.
    prediction : object
        The prediction of the region: a value (regression) or a class label.
    proba : array-like of shape (n_classes,), default=None
        The class probabilities of the region (classification only).
    support : int, default=0
        The training points the rule covers.
    weight : float, default=0.0
        The rule's mixture weight.
    coverage : float, default=None
        The share of the training points that satisfy the conditions, when known.
    share : float, default=None
        The share of the training points the rule is the first match for, when known (set
        where the rule set is printed for its training rows, ``RuleSet.on_training_rows``;
        not kept in JSON).

    Attributes
    ----------
    conditions : list of Condition
        The conditions.
    prediction : object
        The prediction of the region.
    proba : ndarray of shape (n_classes,) or None
        The class probabilities (float64).
    support : int
        The training points covered.
    weight : float
        The mixture weight.
    coverage : float or None
        The share of the training points that satisfy the conditions.
    share : float or None
        The share of the training points it is the first match for.

    See Also
    --------
    Condition : One test on one feature.
    RuleSet : An ordered list of rules and a default prediction.

    Examples
    --------
    >>> import numpy as np
    >>> from defrag import Condition, Rule
    >>> rule = Rule([Condition(0, "age", lower=30.0)], prediction=1.5, support=12)
    >>> print(rule)
    if age > 30 then y = 1.5
    >>> rule.covers(np.array([[25.0], [45.0]]))
    array([False,  True])
    """

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
        """Tell which rows of X the rule covers.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows as the model reads them (categorical columns as codes).

        Returns
        -------
        ndarray of shape (n_samples,)
            Boolean: whether every condition holds on each row.
        """
        X = np.asarray(X)
        ok = np.ones(X.shape[0], dtype=bool)
        for cond in self.conditions:
            ok &= cond.holds(X)
        return ok

    def condition_text(self, mark_unseen=False):
        """Return the conditions joined by "and" ("always" for none).

        Parameters
        ----------
        mark_unseen : bool, default=False
            Print the conditions as a rule set's listing does (see ``Condition.text``).

        Returns
        -------
        str
            The printed conditions.
        """
        if not self.conditions:
            return "always"
        return " and ".join(c.text(mark_unseen) for c in self.conditions)

    def to_dict(self):
        """Return the rule as a JSON-ready dict.

        Returns
        -------
        dict
            Its conditions (``Condition.to_dict``), prediction, probabilities, support,
            weight and coverage.
        """
        return document.rule_to_dict(self)

    def __str__(self):
        return self.text()

    def text(self, mark_unseen=False):
        """Return the rule as printed: "if <conditions> then y = <prediction>".

        Parameters
        ----------
        mark_unseen : bool, default=False
            Print the conditions as a rule set's listing does (see ``Condition.text``).

        Returns
        -------
        str
            The printed rule.
        """
        return f"if {self.condition_text(mark_unseen)} then y = {prediction_text(self.prediction, self.proba)}"

    def __repr__(self):
        return f"Rule({self})"


# rows of input converted at a time where predict cannot read the input in place
BLOCK_ROWS = 65536


def rule_count_text(n_rules):
    """How a count of rules reads wherever it is printed (headers, titles, reprs):
    n_rules rules before the default, "1 rule and otherwise", "3 rules and otherwise"."""
    n_rules = int(n_rules)
    return f"{n_rules} rule{'' if n_rules == 1 else 's'} and otherwise"


# how to read an ordered rule set, said once above its listing or table
FIRST_MATCH = "a point takes the prediction of the first rule whose conditions hold (first match wins), " \
              "else the last line's"


def _with_prediction(rule, prediction):
    out = copy.copy(rule)
    out.prediction = prediction
    return out


def prediction_text(prediction, proba):
    if proba is None:  # a value: the shortest text of the number predicted, exactly
        return number_text(prediction) if isinstance(prediction, (float, np.floating)) else printed_label(prediction)
    return f"{printed_label(prediction)} (p={float(np.max(proba)):.3f})"


class RuleSet(Explanation):
    """An ordered list of rules and the prediction for rows no rule covers.

    ``predict`` uses the rules as written: a row takes the prediction of the first rule
    that covers it, else the default. Rows are read in C, only the columns the rules name.
    A rule set is saved as JSON (``to_json``, ``from_json``) and exported to SQL, Python,
    pandas queries and tables.

    Parameters
    ----------
    rules : iterable of Rule
        The rules, in order.
    default_prediction : object
        The prediction where no rule covers a row.
    default_proba : array-like of shape (n_classes,), default=None
        The default's class probabilities (classification only).
    feature_names : sequence of str, default=None
        The features' names as printed, one per column; every condition must name its
        feature so (ValueError otherwise). None: the features are positions.
    classes : array-like, default=None
        The class labels (classification).
    supports_missing : bool, default=False
        Whether the rules' source model routes missing values (NaN); otherwise a NaN in a
        feature a rule reads is refused.
    encoding : InputEncoding, default=None
        How the source model reads the inputs (category codes, zero as missing); None:
        the inputs are read as they are.
    feature_names_in : sequence of str, default=None
        The DataFrame columns the rules were fitted on (None: fitted on an array); a
        DataFrame given to ``predict`` is matched by these names.
    decimals : int, default=None
        Regression: the decimal places the values are rounded to (negative: a power of
        ten above one), so that the printed numbers are the predictions; None: 4
        significant digits of the values' range (6 of the largest where they do not
        spread). Ignored in classification.

    Attributes
    ----------
    rules : list of Rule
        The rules, in order.
    default_prediction : object
        The default's prediction.
    default_proba : ndarray or None
        The default's class probabilities.
    default_support : int or None
        The training points no rule covers, when known.
    default_share : float or None
        Their share of the training points, when known.

    See Also
    --------
    Rule : One rule of the set.
    RuleTree : A tree of rules or a sum of trees.
    DefragModel : Fits a rule set to a tree ensemble.

    Examples
    --------
    >>> import numpy as np
    >>> from defrag import Condition, Rule, RuleSet
    >>> rules = RuleSet([Rule([Condition(0, "age", lower=30.0)], 1.5, support=12),
    ...                  Rule([Condition(1, "income", upper=2.0)], 0.5, support=8)],
    ...                 default_prediction=0.0, feature_names=["age", "income"])
    >>> print(rules)
    [1] if age > 30 then y = 1.5   (support 12, weight 0.000)
    [2] if income <= 2 then y = 0.5   (support 8, weight 0.000)
    [*] otherwise y = 0
    >>> rules.predict(np.array([[45.0, 1.0], [20.0, 1.0], [20.0, 3.0]]))
    array([1.5, 0.5, 0. ])
    >>> rules.apply(np.array([[45.0, 1.0], [20.0, 3.0]]))
    array([ 0, -1], dtype=int32)
    """


    def __init__(self, rules, default_prediction, default_proba=None, feature_names=None,
                 classes=None, supports_missing=False, encoding=None, feature_names_in=None, decimals=None):
        self.default_support = self.default_share = None  # (set_first_match_counts)
        self.rules = list(rules)
        self.default_prediction = default_prediction
        self.default_proba = None if default_proba is None else np.asarray(default_proba)
        self.decimals = None
        values = [r.prediction for r in self.rules] + [default_prediction]
        if classes is None and all(isinstance(v, (float, np.floating)) for v in values) and \
                self.default_proba is None and all(r.proba is None for r in self.rules):
            # regression: the values rounded as printed (rules/tree_nodes.py, spread_decimals);
            # a rule whose value changes is a copy (the caller's rules stay as given)
            self.decimals = int(spread_decimals(values) if decimals is None else decimals)
            exact = rounded(values, self.decimals)
            self.rules = [r if float(r.prediction) == v else _with_prediction(r, float(v))
                          for r, v in zip(self.rules, exact[:-1])]
            self.default_prediction = float(exact[-1])
        self.classes = classes
        self._read_as(feature_names, feature_names_in, encoding, supports_missing)

    def __len__(self):
        return len(self.rules)

    def __iter__(self):
        return iter(self.rules)

    def __getitem__(self, i):
        return self.rules[i]

    def _covering(self, X_coded, n_threads):
        return _rules_eval.rules_cover(np.ascontiguousarray(X_coded, dtype=np.float64),
                                       n_threads=checked_threads(n_threads), **self._compiled())

    def first_match(self, X_coded, n_threads=1):
        """Return the first rule covering each row of X as the rules read it.

        Parameters
        ----------
        X_coded : ndarray of shape (n_samples, n_features)
            The rows as the rules read them (``encode``).
        n_threads : int, default=1
            The threads to use: an integer >= 1, at most the cores used.

        Returns
        -------
        ndarray of shape (n_samples,)
            The index of the first covering rule, -1 where none does.
        """
        return self._routed_first(X_coded, self._compiled(), n_threads)

    def _items(self):
        """The list as the router's items (src_c/dfg_route.h): rule r's box at item 2r, its
        leaf at 2r + 1, the default's leaf last."""
        cached = self.__dict__.get("_chain_arrays")
        if cached is None:
            item = np.arange(2 * len(self.rules) + 1, dtype=np.int64)
            box = np.where(item % 2 == 0, item // 2, -1)
            box[-1] = -1
            cached = self._chain_arrays = dict(box=box, then_item=np.where(box >= 0, item + 1, -1),
                                               else_item=np.where(box >= 0, item + 2, -1),
                                               roots=np.zeros(1, dtype=np.int64))
        return cached

    def _routed_first(self, X_coded, arrays, n_threads):
        """Each row's first covering rule, -1 where none does (int32): the router down the
        chain, each leaf labelled with its rule (-1: the default)."""
        label = np.arange(2 * len(self.rules) + 1, dtype=np.int64)
        label = np.where(label % 2 == 1, label // 2, -1)
        return self._route(X_coded, n_threads, label=label, arrays=arrays)[0][:, 0].astype(np.int32)

    def predictions(self):
        """Return the rules' predictions followed by the default's.

        Returns
        -------
        ndarray of shape (n_rules + 1,)
            The predictions; index -1 (``first_match``'s "no rule") is the default's.
        """
        return self._labels([r.prediction for r in self.rules] + [self.default_prediction])

    def probabilities(self):
        """Return the rules' class probabilities followed by the default's (classification).

        Returns
        -------
        ndarray of shape (n_rules + 1, n_classes)
            The probabilities; the last row is the default's.
        """
        return np.vstack([r.proba for r in self.rules] + [self.default_proba])

    def _predict_coded(self, X_coded, n_threads):
        return self.predictions()[self.first_match(X_coded, n_threads)]

    def _prediction_dtype(self):
        return self.predictions().dtype

    def _predict(self, X, n_threads, matched):
        return self.predictions()[self._first_matches(X, n_threads, matched)]  # -1 (no rule): the default

    def _predict_proba(self, X, n_threads, matched):
        return self.probabilities()[self._first_matches(X, n_threads, matched)]

    def _apply(self, X, n_threads, matched):
        return self._first_matches(X, n_threads, matched)

    def _first_matches(self, X, n_threads=1, matched=False):
        """first_match(encode(X)) without encoding X whole: the same values, bit for bit
        (encode converts each row on its own), with memory for the output and a block."""
        check_not_sparse(X)
        positions = None if matched else column_positions(self.feature_names_in, X)
        frame = is_frame(X)
        if not frame:
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
                return self._encoded(X.iloc[r0:r1, cols] if frame else X[r0:r1])

            return self._blockwise(len(X), block, self._compiled(), n_threads)
        used, zero = self._used_features(), self._zero_features()
        n = self._n_features()
        if frame:
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
                out[:, zero_at] = zero_as_missing(out[:, zero_at])
            return out

        return self._blockwise(len(X), used_block, self._compiled(used_only=True), n_threads)

    def _blockwise(self, n_rows, block, arrays, n_threads):
        """First matches of rows given BLOCK_ROWS at a time by block(r0, r1) (float64, the
        columns the arrays number), into one int32 array."""
        first = np.empty(n_rows, dtype=np.int32)
        for r0 in range(0, n_rows, BLOCK_ROWS):
            r1 = min(r0 + BLOCK_ROWS, n_rows)
            first[r0:r1] = self._routed_first(block(r0, r1), arrays, n_threads)
        return first

    def _on_training_rows(self, X, printed, n_threads):
        new = self._copy()
        new.rules = [copy.copy(r) for r in self.rules]
        printed = iter(printed)
        for rule in new.rules:
            rule.conditions = [next(printed) for _ in rule.conditions]
        if X.shape[0]:
            covered, first = new.cover_counts(X, n_threads)
            for rule, count in zip(new.rules, covered):
                rule.coverage = float(count / X.shape[0])
            new.set_first_match_counts(first)
        return new

    def cover_counts(self, X_coded, n_threads=1):
        """Count the rows each rule covers and the rows each is the first match for.

        Parameters
        ----------
        X_coded : ndarray of shape (n_samples, n_features)
            The rows as the rules read them (``encode``).
        n_threads : int, default=1
            The threads to use: an integer >= 1, at most the cores used.

        Returns
        -------
        covered : ndarray of shape (n_rules,)
            The rows each rule covers.
        first : ndarray of shape (n_rules + 1,)
            The rows each is the first match for, the default's first.
        """
        n_threads = checked_threads(n_threads)
        R = len(self.rules)
        if not X_coded.shape[0]:
            return np.zeros(R, dtype=np.int64), np.zeros(R + 1, dtype=np.int64)
        cover = self.covering(X_coded, n_threads)
        # the first matches from the same matrix (index R where no rule covers: the default)
        first = np.bincount(_rules_eval.first_cover(cover.view(np.uint8)), minlength=R + 1)
        return cover.sum(axis=0), np.roll(first, 1)

    def set_first_match_counts(self, counts):
        """Set the rules' ``share`` and the default's support and share from counts.

        Parameters
        ----------
        counts : array-like of shape (n_rules + 1,)
            The training points each is the first match for: ``counts[0]`` the default's,
            ``counts[k]`` rule k's.
        """
        counts = np.asarray(counts, dtype=np.float64)
        total = max(float(counts.sum()), 1.0)
        self.default_support = int(counts[0])
        self.default_share = float(counts[0] / total)
        for rule, count in zip(self.rules, counts[1:]):
            rule.share = float(count / total)

    _exports = export

    def _boxes(self):
        return [r.conditions for r in self.rules]

    # ------------------------------------------------------------------ exports
    def _document(self):
        return document.ruleset_to_dict(self)

    @classmethod
    def _from_document(cls, d):
        fields = document_reader.ruleset_fields(d)
        rules = [Rule([Condition(**c) for c in r.pop("conditions")], **r) for r in fields.pop("rules")]
        return cls(rules, **fields)

    # ------------------------------------------------------------- for readers
    def table_rows(self):
        """Return the cells of the rule set's table, one tuple per rule and the default last.

        Returns
        -------
        list of tuple of str
            Number, conditions as the listing prints them, prediction, support and the share
            of the training points it is the first match for (blank where unknown).
        """
        def share(value):
            return "" if value is None else f"{100.0 * value:.1f}%"

        rows = [(str(i), rule.condition_text(mark_unseen=True), prediction_text(rule.prediction, rule.proba),
                 str(rule.support), share(rule.share)) for i, rule in enumerate(self.rules, 1)]
        rows.append(("*", "otherwise", prediction_text(self.default_prediction, self.default_proba),
                     "" if self.default_support is None else str(self.default_support), share(self.default_share)))
        return rows

    def _table(self):
        return self.table_rows()

    def _heading(self):
        return f"RuleSet: {rule_count_text(len(self.rules))}"

    def _guide(self):
        return FIRST_MATCH

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

