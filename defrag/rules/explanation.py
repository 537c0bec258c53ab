"""What every printed explanation does the same way, whatever its form (a RuleSet: an
ordered list; a RuleTree: a tree of rules or a sum of trees): how it reads rows (column
matching by name, the source model's encoding, zero read as missing, the count of
features), the arrays of its boxes the C kernels test and the router over them, its
predictions, regions and per-row checks, and the copy printed for its training rows; what
it delivers besides (documents, exports, displays, diffs) it inherits from
``Deliverables`` (rules/deliverables.py). A subclass gives ``_boxes()`` (the conditions of
each box it tests, in reading order: a list's rules, a tree's inner nodes), ``_items()``
(the router's items), ``_covering``, ``_predict_coded``, ``_on_training_rows``,
``_heading()`` and what ``Deliverables`` asks for, and calls ``_read_as`` when it is
built."""
import copy
import functools

import numpy as np

from ..utils.dask_collections import is_dask_collection, map_rows
from ..utils.threads import checked_threads
from ..utils.validation import as_2d_float, checked_names
from . import _route
from .columns import column_positions, zero_as_missing
from .deliverables import Deliverables
from .conditions import box_arrays, comparisons, conditions_on_training_rows, reading_arrays


class Explanation(Deliverables):
    """The methods a RuleSet and a RuleTree share (see the module docstring)."""

    # arrays built from the boxes on first use: a copy or a pickle drops them
    _CACHES = ("_arrays", "_printed_arrays", "_chain_arrays", "_flat")

    def _boxes(self):
        raise NotImplementedError

    def _conditions(self):
        """Every condition the explanation tests, box after box."""
        return (c for box in self._boxes() for c in box)

    def _read_as(self, feature_names, feature_names_in, encoding, supports_missing):
        """Set how rows are read (the constructors' parameters of the same names) and check
        the names: never empty nor repeated (printed rules and exports name columns by
        them), as many of each, and every condition on a feature of feature_names that it
        prints by that name (the exports name the column by feature_names, the printout by
        the condition: "income > 0" reading column "b" would say one thing and do another).
        Without feature_names the features are positions (x0, x1, ...)."""
        self.supports_missing = bool(supports_missing)
        self.encoding = encoding
        self.feature_names_in = None if feature_names_in is None else checked_names(feature_names_in,
                                                                                    "feature_names_in")
        self.feature_names = names = None if feature_names is None else checked_names(feature_names)
        if names is None:
            return
        if self.feature_names_in is not None and len(names) != len(self.feature_names_in):
            raise ValueError(f"feature_names has {len(names)} names but feature_names_in "
                             f"{len(self.feature_names_in)}")
        for c in self._conditions():
            if not 0 <= c.feature < len(names):
                raise ValueError(f"a condition is on feature {c.feature}, outside the {len(names)} "
                                 "features of feature_names")
            if c.name != names[c.feature]:
                raise ValueError(f"a condition names feature {c.feature} {c.name!r}, but feature_names "
                                 f"calls it {names[c.feature]!r}")

    def _n_features(self):
        if self.feature_names is not None:
            return len(self.feature_names)
        return 1 + max((c.feature for c in self._conditions()), default=0)

    def _used_features(self):
        """The features the conditions read, in order."""
        return sorted({c.feature for c in self._conditions()})

    def _zero_features(self):
        """Features where a condition reads zero as missing."""
        return sorted({c.feature for c in self._conditions() if c.zero_missing})

    def _compiled(self, used_only=False):
        """The boxes' arrays for the C kernels (``box_arrays``, built once); with used_only,
        their features numbered among the used ones (``_used_features``), for blocks
        holding only those columns."""
        cached = self.__dict__.setdefault("_arrays", {})
        key = "used" if used_only else "all"
        if key not in cached:
            arrays = box_arrays(self._boxes(), self.supports_missing)
            if used_only:
                arrays["feature"] = np.searchsorted(self._used_features(), arrays["feature"]).astype(np.int32)
            cached[key] = arrays
        return cached[key]

    def _printed_boxes(self):
        """The boxes' arrays as a reader checks them (``reading_arrays``: printed order, the
        comparisons of each condition), for the per-row checks (built once)."""
        cached = self.__dict__.get("_printed_arrays")
        if cached is None:
            cached = self._printed_arrays = reading_arrays(self._boxes(), self.supports_missing)
        return cached

    def _copy(self):
        """A shallow copy without the cached arrays (the copy's boxes may change)."""
        new = copy.copy(self)
        for key in self._CACHES:
            new.__dict__.pop(key, None)
        return new

    def __getstate__(self):
        state = dict(self.__dict__)
        for key in self._CACHES:
            state.pop(key, None)  # rebuilt on first use
        return state

    # ------------------------------------------------------------ routing rows
    def _route(self, X_coded, n_threads, label=None, items=True, reads=False, visits=None, arrays=None):
        """The router (src_c/dfg_route.h) on rows as read (``encode``), down the form's items
        (``_items()``: a list's chain, a tree's nodes and leaves): (items, reads), the item
        each row reaches in each term, or its label (one per item), and the comparisons a
        reader makes per row; visits gets the rows through each item added. arrays: the
        boxes' (None: ``_compiled()``, or as printed where reads)."""
        if arrays is None:
            arrays = self._printed_boxes() if reads else self._compiled()
        return _route.route(np.ascontiguousarray(X_coded, dtype=np.float64), **self._items(),
                            n_threads=checked_threads(n_threads), label=label, items=items, reads=reads,
                            visits=visits, **arrays)

    def checks(self, X_coded, n_threads=1):
        """Count the comparisons a reader makes for each row.

        A reader goes through a list's rules in order, or down each term of a tree; in each
        rule or box, the conditions in printed order until the first that fails (an interval
        whose lower bound fails costs one), all of them where the box holds.

        Parameters
        ----------
        X_coded : ndarray of shape (n_samples, n_features)
            The rows as the explanation reads them (``encode``).
        n_threads : int, default=1
            The threads to use: an integer >= 1, at most the cores used.

        Returns
        -------
        ndarray of shape (n_samples,)
            The comparisons of each row (float64).
        """
        return self._route(X_coded, n_threads, items=False, reads=True)[1]

    def covering(self, X_coded, n_threads=1):
        """Tell which regions each row of X (as the explanation reads it) lies in.

        Parameters
        ----------
        X_coded : ndarray of shape (n_samples, n_features)
            The rows as the explanation reads them (``encode``).
        n_threads : int, default=1
            The threads to use: an integer >= 1, at most the cores used.

        Returns
        -------
        ndarray of shape (n_samples, n_rules) or (n_samples, n_leaves)
            Boolean: a list's rule j covers row i (first match or not); row i reaches a
            tree's leaf j, over the leaves of every term in reading order.
        """
        return self._covering(X_coded, n_threads)

    def covers(self, X, n_threads=1):
        """Tell which regions each row lies in (``covering`` of ``encode(X)``, in C).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            The rows, read as ``predict`` reads them.
        n_threads : int, default=1
            The threads to use: an integer >= 1, at most the cores used.

        Returns
        -------
        ndarray of shape (n_samples, n_rules) or (n_samples, n_leaves)
            Boolean, as ``covering``'s.
        """
        n_threads = checked_threads(n_threads)
        return self.covering(self.encode(X), n_threads)

    def predict_coded(self, X_coded, n_threads=1):
        """Predict the rows of X as the explanation reads it (see ``predict``).

        Parameters
        ----------
        X_coded : ndarray of shape (n_samples, n_features)
            The rows as the explanation reads them (``encode``).
        n_threads : int, default=1
            The threads to use: an integer >= 1, at most the cores used.

        Returns
        -------
        ndarray of shape (n_samples,)
            The predictions.
        """
        return self._predict_coded(X_coded, n_threads)

    def on_training_rows(self, X, n_threads=1):
        """Return a copy printed for the training rows X.

        The conditions print for X (``Condition.on_training_rows``). A list counts each
        rule's ``coverage`` and ``share`` and the default's support and share on X; a tree
        orders each box's conditions by their share (the one most rows fail first: a reader
        stops there) and counts each leaf's support and share on X.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
            The training rows, prepared as the model reads them.
        n_threads : int, default=1
            The threads to use: an integer >= 1, at most the cores used.

        Returns
        -------
        RuleSet or RuleTree
            The copy.
        """
        n_threads = checked_threads(n_threads)
        return self._on_training_rows(X, conditions_on_training_rows(list(self._conditions()), X, n_threads),
                                      n_threads)

    @property
    def n_conditions(self):
        """The comparisons the text prints, each once (an interval ``a < x <= b`` two)."""
        return int(sum(comparisons(c) for c in self._conditions()))

    # ------------------------------------------------------------ reading rows
    def encode(self, X, matched=False):
        """Return X as the explanation reads it.

        X becomes float64 with categorical columns as category codes (by the source model's
        encoding, when there is one; otherwise X must hold codes). A DataFrame is matched
        by column name when the explanation was fitted on one. The kernels then refuse a
        NaN where the source model has no direction for missing values, and read -inf as
        below every threshold.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            The rows.
        matched : bool, default=False
            Whether X's columns are already those read, in order (an estimator has matched
            them by name).

        Returns
        -------
        ndarray of shape (n_samples, n_features)
            C-contiguous float64; a value that reads as missing is NaN.
        """
        if not matched:
            positions = column_positions(self.feature_names_in, X)
            X = X if positions is None else X.iloc[:, positions]
        return self._encoded(X)

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
            X[:, zero] = zero_as_missing(X[:, zero])
        return np.ascontiguousarray(X, dtype=np.float64)

    # ------------------------------------------------------------ predicting
    def predict(self, X, n_threads=1, matched=False):
        """Predict each row as the text reads.

        A list predicts its first rule that holds (else its default), a tree its leaf, a
        sum its base plus its terms' values. Only the features the conditions name are read, in C. A NaN in a feature where the
        source model has no direction for missing values is a ValueError. With two
        classes, a sum predicts the second class where it exceeds one half.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            The rows: array-like, a DataFrame (matched by column name where the explanation
            was fitted on one), or a Dask collection (a lazy Dask array comes back).
        n_threads : int, default=1
            The threads to use: an integer >= 1, at most the cores used.
        matched : bool, default=False
            Whether X's columns are already those read, in order (an estimator has matched
            them by name).

        Returns
        -------
        ndarray of shape (n_samples,)
            The predictions.
        """
        n_threads = checked_threads(n_threads)
        if is_dask_collection(X):
            return map_rows(functools.partial(self.predict, n_threads=n_threads, matched=matched), X,
                            self._prediction_dtype())
        return self._predict(X, n_threads, matched)

    def predict_proba(self, X, n_threads=1, matched=False):
        """Return the class probabilities of each row (classification).

        A list's and a tree's are those of the region the row takes; a sum's, its
        second-class probability clipped to [0, 1]. AttributeError in regression.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            The rows, read as ``predict`` reads them (a Dask collection gives a lazy Dask
            array).
        n_threads : int, default=1
            The threads to use: an integer >= 1, at most the cores used.
        matched : bool, default=False
            Whether X's columns are already those read, in order (an estimator has matched
            them by name).

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            The probabilities.
        """
        if self.classes is None:
            raise AttributeError("class probabilities are for classification")
        n_threads = checked_threads(n_threads)
        if is_dask_collection(X):
            return map_rows(functools.partial(self.predict_proba, n_threads=n_threads, matched=matched), X,
                            np.float64, len(self.classes))
        return self._predict_proba(X, n_threads, matched)

    def apply(self, X, n_threads=1, matched=False):
        """Return the region of each row: a list's rule that predicts it, a tree's leaf.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            The rows, read as ``predict`` reads them (a Dask collection gives a lazy Dask
            array; not for a sum).
        n_threads : int, default=1
            The threads to use: an integer >= 1, at most the cores used.
        matched : bool, default=False
            Whether X's columns are already those read, in order (an estimator has matched
            them by name).

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_terms)
            A list's first covering rule (-1: the default); the number of a tree's leaf in
            reading order; a sum's leaf in each term.
        """
        n_threads = checked_threads(n_threads)
        if is_dask_collection(X):
            if self._regions_per_row() != 1:
                raise TypeError("apply of a sum of trees on a Dask collection: compute X first")
            return map_rows(functools.partial(self.apply, n_threads=n_threads, matched=matched), X, np.int64)
        return self._apply(X, n_threads, matched)

    def _regions_per_row(self):
        return 1

    def _predict(self, X, n_threads, matched):
        return self.predict_coded(self.encode(X, matched), n_threads)

    def _predict_proba(self, X, n_threads, matched):
        return self.probabilities_coded(self.encode(X, matched), n_threads)

    def _labels(self, values):
        """values as an array of the classes' dtype (NumPy's own strings would drop a
        label's trailing NULs), or as NumPy reads them in regression."""
        return np.asarray(values, dtype=None if self.classes is None else self.classes.dtype)

    def __repr__(self):
        return f"<{self._heading()}>"
