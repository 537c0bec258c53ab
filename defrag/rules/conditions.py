"""Conditions: ``lower < x_d <= upper`` or ``x_d in S`` / ``not in S``, with the side a missing
value takes, as a reader sees them and as the C kernels test them.

The kernels (src_c/dfg_condition_stats.c, dfg_rules.c through ``_rules_eval``) test every
condition of a rule set in one pass over X: truth values (bit-packed or as booleans), and
what printing needs from the training rows: each bound's training neighbours, so that the
printed threshold is the shortest decimal that splits the training values as the fitted one
does (``printed_between``; it then replaces the fitted one, so that the text is the test),
the rows each condition holds on, the NaN count per column.
"""
import copy
import decimal

import numpy as np

from . import _rules_eval, document
from ..splits import ZERO_THRESHOLD, category_words
from ..utils.text import is_plain, printed_name


# ends a condition of a rule set's listing that a missing value satisfies where training
# had no missing value in its feature (Condition.text, missing_value_note)
MISSING_MARK = "*"


def missing_value_note(conditions, supports_missing=True, unknown_missing=()):
    """The line below a rule set's listing that says where a missing value goes (and what a
    bound printed as 0 at LightGBM's zero threshold means), or None when the conditions
    say it all: when a condition carries MISSING_MARK; when a "not
    in" set fails on a missing value (a reader could take a missing value for one
    outside the set); when a set condition is on a feature of unknown_missing, where a
    category the model was not trained with reads as missing (the labels are known:
    LightGBM's pandas categories, HistGradientBoosting). Where the rules' source has no
    direction for missing values (supports_missing False), a missing value that no
    condition lets through is an error of predict."""
    conditions = list(conditions)
    said = any(c.missing and not c.marked() for c in conditions)  # "(or missing)", "is missing"
    notes = []
    if any(c.marked() for c in conditions):
        notes.append(f"{MISSING_MARK} or missing (none was missing there in training)")
        if not supports_missing:
            notes.append("anywhere else a missing value is an error (the source model has no direction for it)")
        elif said:
            notes.append(f'a missing value fails every condition without {MISSING_MARK} or "(or missing)"')
        else:
            notes.append("a missing value fails every other condition")
    elif supports_missing and any(c.is_set and c.negated and not c.missing for c in conditions):
        notes.append('a missing value fails every condition without "(or missing)"')
    if any(c.is_set and c.feature in unknown_missing for c in conditions):
        notes.append("a category the model was not trained with counts as missing")
    if any(_at_zero_threshold(c) for c in conditions):
        # the printed 0 is LightGBM's zero band, not the number: 1e-36 fails "x > 0"
        notes.append("a bound printed as 0 is LightGBM's zero: a value within 10^-35 of 0 counts as 0 there")
    return "; ".join(notes) or None


def _at_zero_threshold(c):
    """Whether a condition has a bound at LightGBM's zero threshold (printed as 0)."""
    return not c.is_set and any(b is not None and abs(b) == ZERO_THRESHOLD for b in (c.lower, c.upper))


_EXACT = decimal.Context(prec=800, Emin=-2000, Emax=2000)  # any double, exactly


def printed_thresholds(X, features, thresholds, n_threads=1):
    """For each split ``x[feature] > threshold``, the shortest decimal that splits the rows of
    X (NaN ignored) as the threshold does (printed_between of its neighbours in X, found
    for all splits in one pass of the C kernel)."""
    thresholds = np.asarray(thresholds, dtype=np.float64)
    lo, hi = _rules_eval.bound_neighbours(np.ascontiguousarray(X, dtype=np.float64),
                                          np.asarray(features, dtype=np.int32), thresholds, n_threads=n_threads)
    return np.array([printed_between(t, a, b) for t, a, b in zip(thresholds, lo, hi)], dtype=np.float64)


def printed_between(value, lo, hi):
    """The shortest decimal p with the same training split as the bound value, given its
    training neighbours: lo, the largest training value <= value (-inf if none), and hi,
    the smallest > value (+inf if none); every training value is <= p exactly when it is <=
    value. Printed instead of the bound, and used in its place once printed
    (conditions_printed): no training point lies between the two."""
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


def condition_arrays(conditions, supports_missing=True):
    """Flat arrays of conditions for the C kernels: feature, lower, upper (+-inf where
    absent), missing (1: a NaN satisfies it, 0: it fails, 2: an error where the source
    model has no rule for missing values), and the category sets when any is a set."""
    return part_arrays([c.feature for c in conditions],
                       [-np.inf if c.lower is None else c.lower for c in conditions],
                       [np.inf if c.upper is None else c.upper for c in conditions],
                       [1 if c.missing else (0 if supports_missing else 2) for c in conditions],
                       [c.categories for c in conditions], [c.negated for c in conditions])


def part_arrays(feature, lower, upper, missing, categories, negated):
    """condition_arrays of conditions given field by field (one entry per condition;
    categories: a set's codes or None; lower / upper -inf / inf where absent), for callers
    that hold the fields rather than Condition objects (rules/extract.py's units)."""
    arrays = dict(
        feature=np.array(feature, dtype=np.int32).reshape(-1),
        lower=np.array(lower, dtype=np.float64).reshape(-1),
        upper=np.array(upper, dtype=np.float64).reshape(-1),
        missing=np.array(missing, dtype=np.uint8).reshape(-1),
    )
    if any(codes is not None for codes in categories):
        sets = [() if codes is None else tuple(sorted({int(c) for c in codes})) for codes in categories]
        set_ptr = np.zeros(len(sets) + 1, dtype=np.int64)
        np.cumsum([len(codes) for codes in sets], out=set_ptr[1:])
        arrays["set_ptr"], arrays["set_words"] = category_words(
            set_ptr, np.array([c for codes in sets for c in codes], dtype=np.int64))
        arrays["kind"] = np.array([0 if codes is None else (2 if neg else 1) for codes, neg in zip(categories, negated)],
                                  dtype=np.uint8)
    return arrays


def holds_arrays(conditions):
    """Condition.holds of each condition as the kernels take it (a missing value: NaN, or
    zero where the condition reads zero as missing)."""
    return dict(condition_arrays(conditions), zero_threshold=ZERO_THRESHOLD,
                zero_missing=np.array([c.zero_missing for c in conditions], dtype=np.uint8))


def conditions_holds(conditions, X, n_threads=1):
    """Condition.holds of each condition on X, boolean (n_conditions, n_samples), from one
    pass over X."""
    return _rules_eval.condition_holds(np.ascontiguousarray(X, dtype=np.float64),
                                       n_threads=n_threads, **holds_arrays(list(conditions)))


def pruned_by_support(columns, n_samples):
    """Sec. 3.2 of the AISTATS 2018 paper over bit-packed condition columns (one row per
    part of a conjunction): drop a part when the count of samples satisfying all the
    kept parts does not change (src_c/dfg_prune.c). Returns (kept: bool per row, the
    support of the kept conjunction)."""
    keep = np.ones(columns.shape[0], dtype=np.uint8)
    support = _rules_eval.prune_conditions(np.ascontiguousarray(columns), n_samples, keep)
    return keep.astype(bool), support


def count_all(columns, n_samples):
    """Samples where every bit-packed column of ``columns`` holds (a popcount of their AND)."""
    return _rules_eval.count_all(np.ascontiguousarray(columns), n_samples)


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
                                                **holds_arrays(conditions))
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
    printed bounds, missing_seen, train_share.

    The printed bounds become the bounds: each is the shortest decimal that splits the
    training rows as the fitted bound does, and predict, the exports and the text then
    use the same number, so that a reader who applies the printed rules by hand gets
    predict's answer on any row, not only on training rows. (Bounds at LightGBM's zero
    threshold, +-1e-35, print as 0 with the encoding's reading of zero and stay as they
    are; two bounds that would cross, no training row lying between them, stay too.)"""
    new = [copy.copy(c) for c in conditions]
    n = stats["n_rows"]
    for i, c in enumerate(new):
        if not c.is_set:
            printed = [None if value is None else printed_between(value, stats["below"][i, j], stats["above"][i, j])
                       for j, value in enumerate((c.lower, c.upper))]
            if None not in printed and printed[0] >= printed[1]:
                printed = [c.lower, c.upper]
            c.printed_lower, c.printed_upper = printed
            c._test_printed_bounds()
        c.missing_seen = bool(stats["n_nan"][c.feature])
        c.train_share = float(stats["holds"][i] / n) if n else None
    return new


def _shortest(value):
    """The shortest text that reads back as value, without a trailing '.0' (896 for 896.0)."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def _bound_text(value, lower, zero_missing):
    """(operator, number) of a printed bound ``x > value`` (lower) or ``x <= value``: the
    number exactly (the shortest text that reads back as it), so that the text is the test
    predict makes; conditions printed for training rows have short bounds
    (conditions_printed).

    A bound at +-1e-35 is LightGBM's zero threshold: its encoding reads |x| <= 1e-35 as
    0 (or as missing, zero_missing), so x > 1e-35 means x > 0, x > -1e-35 means
    x >= 0, x <= 1e-35 means x <= 0 and x <= -1e-35 means x < 0; where zero is
    missing, >= 0 and <= 0 are > 0 and < 0."""
    if abs(value) != ZERO_THRESHOLD:
        return (">" if lower else "<="), _shortest(value)
    if lower:
        return (">=" if value < 0 and not zero_missing else ">"), "0"
    return ("<=" if value > 0 and not zero_missing else "<"), "0"


class Condition:
    """One test on one feature: an interval or a set of categories.

    A numeric condition holds where ``lower < x[feature] <= upper`` (a bound that is
    None is absent); a categorical one where the category code ``x[feature]`` is in
    ``categories`` (not in them when ``negated``). A missing value (NaN) satisfies the
    condition where ``missing`` is true. The printed bounds are the tested ones.

    Parameters
    ----------
    feature : int
        The column the condition reads.
    name : str
        The feature's name as printed.
    lower : float, default=None
        The lower bound (excluded); None for none.
    upper : float, default=None
        The upper bound (included); None for none.
    train_share : float, default=None
        The share of the training rows that satisfy the condition, when known; rule
        evaluation checks the most selective conditions first.
    missing : bool, default=False
        Whether a missing value satisfies the condition (the source model sends missing
        values into the region).
    categories : iterable of int, default=None
        The category codes of a categorical condition; None for an interval. A condition
        is either an interval or a category set (ValueError for both).
    negated : bool, default=False
        Whether a categorical condition is ``not in`` its categories.
    category_names : sequence of str, default=None
        Printable names of the category codes (indexed by code), when known.
    zero_missing : bool, default=False
        Whether the source model reads zero (``|x| <= 1e-35``) as missing too (LightGBM's
        ``missing_type`` Zero).
    printed_lower : float, default=None
        The lower bound as printed, which replaces ``lower``; None: ``lower`` printed with
        6 significant digits.
    printed_upper : float, default=None
        The upper bound as printed, which replaces ``upper``.
    missing_seen : bool, default=True
        Whether the training rows had missing values in this feature; where they had none,
        a rule set's listing marks a condition that a missing value satisfies rather than
        saying "(or missing)".

    Attributes
    ----------
    is_set : bool
        Whether the condition is on categories.

    See Also
    --------
    Rule : A conjunction of conditions and the prediction of its region.
    RuleSet : An ordered list of rules.

    Examples
    --------
    >>> import numpy as np
    >>> from defrag import Condition
    >>> condition = Condition(0, "age", lower=30.0, upper=60.0)
    >>> print(condition)
    30 < age <= 60
    >>> condition.holds(np.array([[25.0], [45.0], [np.nan]]))
    array([False,  True, False])
    >>> print(Condition(1, "colour", categories=[0, 2], category_names=["red", "green", "blue"]))
    colour in {red, blue}
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
        # how the bounds print (printed_between; None: 6 significant digits), and whether the
        # training data had missing values here (if not, a rule set's listing marks a
        # condition that lets a missing value through with MISSING_MARK, explained below
        # the listing, rather than "(or missing)")
        self.printed_lower = None if printed_lower is None else float(printed_lower)
        self.printed_upper = None if printed_upper is None else float(printed_upper)
        self.missing_seen = bool(missing_seen)
        self._test_printed_bounds()

    def _test_printed_bounds(self):
        """Make the printed bounds the bounds that are tested (see conditions_printed): a
        condition printed for its training rows tests what it prints. Bounds at LightGBM's
        zero threshold, and printed bounds that cross, stay as they are."""
        lo, hi = self.printed_lower, self.printed_upper
        if lo is not None and hi is not None and lo >= hi:
            return
        if lo is not None and self.lower is not None and abs(self.lower) != ZERO_THRESHOLD:
            self.lower = lo
        if hi is not None and self.upper is not None and abs(self.upper) != ZERO_THRESHOLD:
            self.upper = hi

    def on_training_rows(self, X):
        """Return a copy printed for the training rows X.

        The copy's printed bounds, whether X has missing values in the feature, and the share
        of X that satisfies it follow X.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
            The training rows, prepared as the model reads them (float64, category codes).

        Returns
        -------
        Condition
            The copy.
        """
        return conditions_on_training_rows([self], X)[0]

    @property
    def is_set(self):
        return self.categories is not None

    def holds(self, X):
        """Test the condition on each row of X.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
            The rows as the model reads them (categorical columns as codes, NaN as missing).

        Returns
        -------
        ndarray of shape (n_samples,)
            Boolean: whether the condition holds on each row.
        """
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
        """Labels as printed: with repr's quotes and escapes where a label is not plain
        (utils/text.py: a comma, brace, quote, line break or outer space would make the set
        say something else)."""
        return [n if is_plain(n) else repr(n) for n in self._labels()]

    def _empty(self):
        """Whether no present value satisfies the condition (an interval whose bounds
        cross, one above +inf, an empty set)."""
        if self.is_set:
            return not self.categories and not self.negated
        return self.lower is not None and (self.lower == np.inf or
                                           (self.upper is not None and self.lower >= self.upper))

    def _text(self):
        """The condition on present values, or None when no present value satisfies it."""
        return None if self._empty() else self._test_text()

    def _test_text(self):
        """The test on present values as the kernels make it (also where none passes it:
        "5 < x <= 3", "x in {}")."""
        name = printed_name(self.name)
        if self.is_set:
            return f"{name} {'not in' if self.negated else 'in'} {{{', '.join(self._printed_labels())}}}"
        lo = None if self.lower is None else _bound_text(self.lower, True, self.zero_missing)
        hi = None if self.upper is None else _bound_text(self.upper, False, self.zero_missing)
        if lo is not None and hi is not None:
            return f"{lo[1]} {lo[0].replace('>', '<')} {name} {hi[0]} {hi[1]}"
        if lo is not None:
            return f"{name} {lo[0]} {lo[1]}"
        if hi is not None:
            return f"{name} {hi[0]} {hi[1]}"
        # no bound: every present value (a missing one fails unless the condition says so)
        return f"{name} is any number" if self.missing else f"{name} is not missing"

    def __str__(self):
        return self.text()

    def text(self, mark_unseen=False):
        """Return the condition as printed, saying where a missing value goes.

        A test that a missing value satisfies ends with "(or missing)" ("(or missing or 0)"
        where zero reads as missing too); where no present value satisfies it, it prints as
        "x is missing". A missing value fails any other condition.

        Parameters
        ----------
        mark_unseen : bool, default=False
            As a rule set's listing prints it: a condition that a missing value satisfies,
            where the training rows had none in this feature, ends with a mark explained once
            below the listing instead of "(or missing)".

        Returns
        -------
        str
            The printed condition.
        """
        text = self._text()
        missing = "missing or 0" if self.zero_missing else "missing"
        if text is None:
            # no present value passes: a missing value alone, or no row at all (then the
            # test as it is, which a reader finds false on every number)
            return f"{printed_name(self.name)} is {missing}" if self.missing else self._test_text()
        if self.missing:
            # a zero read as missing (LightGBM's zero-as-missing) is common at predict
            # time: always said in full
            if mark_unseen and not self.missing_seen and not self.zero_missing:
                return text + MISSING_MARK
            return f"{text} (or {missing})"
        # does the printed interval hold 0? (where zero is missing, a bound at +-1e-35
        # prints as one that excludes it: x > 0, x < 0)
        zero_inside = self.zero_missing and not self.is_set and (
            (self.lower is None or (self.lower < 0.0 and self.lower != -ZERO_THRESHOLD))
            and (self.upper is None or (self.upper >= 0.0 and self.upper != ZERO_THRESHOLD)))
        return f"{text} (except 0)" if zero_inside else text

    def marked(self):
        """Tell whether ``text(mark_unseen=True)`` ends with the missing-value mark.

        Returns
        -------
        bool
            True where the listing marks this condition.
        """
        return self.missing and not self.missing_seen and not self.zero_missing and self._text() is not None

    def to_dict(self):
        """Return the condition as a JSON-ready dict.

        Returns
        -------
        dict
            Its feature, name, bounds, categories (labels and codes), missing-value
            fields and printing fields, as ``RuleTree.to_json`` writes them.
        """
        return document.condition_to_dict(self)

    def __eq__(self, other):
        same = ("feature", "name", "lower", "upper", "missing", "categories", "negated", "zero_missing")
        return isinstance(other, Condition) and all(getattr(self, a) == getattr(other, a) for a in same)

    def __repr__(self):
        return f"Condition({self})"


def comparisons(condition):
    """The comparisons a reader makes to check a condition: two for an interval
    ``a < x <= b``, one for any other (a one-sided bound, a category set, "is missing")."""
    return 2 if (not condition.is_set and condition.lower is not None and condition.upper is not None) else 1


def box_arrays(boxes, supports_missing=True):
    """The router's arrays (src_c/dfg_route.h) of boxes (each a sequence of conditions) as
    the kernels test them: within a box, the condition most training rows fail comes
    first (a row leaves the box after fewer comparisons; the result does not depend on
    the order)."""
    ordered = [sorted(box, key=lambda c: 1.0 if c.train_share is None else c.train_share) for box in boxes]
    return dict(rule_ptr=np.cumsum([0] + [len(box) for box in ordered], dtype=np.int64),
                **condition_arrays([c for box in ordered for c in box], supports_missing))


def reading_arrays(boxes, supports_missing=True):
    """The router's arrays (src_c/dfg_route.h) of boxes (each a sequence of conditions) as
    a reader checks them: each box's conditions in printed order, with the comparisons each
    costs (``comparisons``), so that the router counts the comparisons a reader makes."""
    conds = [c for box in boxes for c in box]
    return dict(rule_ptr=np.cumsum([0] + [len(box) for box in boxes], dtype=np.int64),
                cost=np.array([comparisons(c) for c in conds], dtype=np.uint8),
                **condition_arrays(conds, supports_missing))
