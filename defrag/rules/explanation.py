"""How a rule tree (rules/tree.py: an ordered list, a tree or a sum) reads rows, whatever
its form: column matching by name, the source model's encoding, zero read as missing, the
count of features; the arrays of its boxes the C kernels test and the router over them
(src_c/dfg_route.h); its predictions, regions and per-row checks, and the copy printed for
its training rows. What it delivers besides (documents, exports, displays, diffs) it
inherits from ``Deliverables`` (rules/deliverables.py). RuleTree gives ``_boxes()`` (the
conditions of each box, in reading order), ``_items()`` (the router's items),
``_predict_coded``, ``_on_training_rows``, ``_heading()`` and what ``Deliverables`` asks
for, and calls ``_read_as`` when it is built."""
import copy
import functools

import numpy as np

from ..utils.dask_collections import is_dask_collection, map_rows
from ..utils.memory import check_memory
from ..utils.docstrings import shared_parameters
from ..utils.threads import checked_threads
from ..utils.validation import as_2d_float, check_not_sparse, check_numeric_column, checked_names, is_frame
from . import _route, _rules_eval
from .columns import column_positions, zero_as_missing
from .deliverables import Deliverables
from .conditions import box_arrays, comparisons, conditions_on_training_rows, reading_arrays


# Rows are read a block at a time, so that predict, apply and their kin take their output
# plus a bounded block, whatever the explanation's size: at most BLOCK_ROWS rows of the
# columns read (converted where predict cannot read the input in place), and rows whose
# items (rows x terms, and what is read of them) take at most ROUTE_BLOCK_BYTES
BLOCK_ROWS = 65536
ROUTE_BLOCK_BYTES = 1 << 20
# bytes per row and term of a routed block (its item, int64, and one gather of it)
_BYTES_PER_ITEM = 16


class Explanation(Deliverables):
    """How a RuleTree reads rows (see the module docstring)."""

    # arrays built from the boxes on first use: a copy or a pickle drops them
    _CACHES = ("_arrays", "_printed_arrays", "_flat")

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

    @shared_parameters
    def checks(self, X_coded, n_threads=1):
        """Count the comparisons a reader makes for each row.

        A reader goes through a list's rules in order, or down each term of a tree; in each
        rule or box, the conditions in printed order until the first that fails (an interval
        whose lower bound fails costs one), all of them where the box holds.

        {Parameters: X_coded, n_threads}

        Returns
        -------
        ndarray of shape (n_samples,)
            The comparisons of each row (float64).
        """
        return self._route(X_coded, n_threads, items=False, reads=True)[1]

    @shared_parameters
    def covering(self, X_coded, n_threads=1):
        """Tell which boxes' conditions hold on each row of X (as the explanation reads it).

        A box is a list's rule or a tree's inner node, in reading order; its conditions are
        read on their own, whether or not a row reaches the box (a list's rule covers a row
        that an earlier rule takes).

        {Parameters: X_coded, n_threads}

        Returns
        -------
        ndarray of shape (n_samples, n_boxes)
            Boolean: every condition of box j holds on row i.
        """
        size = int(np.shape(X_coded)[0]) * len(self._boxes())  # (the guard checks it before it is allocated)
        check_memory(size, "RuleTree.covering", "fewer rows at a time", {"the output": size})
        return _rules_eval.rules_cover(np.ascontiguousarray(X_coded, dtype=np.float64),
                                       n_threads=checked_threads(n_threads), **self._compiled())

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
        ndarray of shape (n_samples, n_boxes)
            Boolean, as ``covering``'s.
        """
        n_threads = checked_threads(n_threads)
        return self.covering(self.encode(X), n_threads)

    @shared_parameters
    def predict_coded(self, X_coded, n_threads=1):
        """Predict the rows of X as the explanation reads it (see ``predict``).

        {Parameters: X_coded, n_threads}

        Returns
        -------
        ndarray of shape (n_samples,)
            The predictions.
        """
        return self._read_coded(X_coded, n_threads, self._reading("predict"))

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
        RuleTree
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
        return self._read(X, n_threads, matched, self._reading("predict"))

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
        return self._read(X, n_threads, matched, self._reading("predict_proba"))

    def apply(self, X, n_threads=1, matched=False):
        """Return the region of each row: the number of its leaf, in reading order.

        A list's rule k (from 0) is region k, its default the last one (``len(rules)``); a
        tree's leaves are numbered as printed; a sum gives the leaf of each part.

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
            The leaves' numbers (int64): a list's and a tree's, a sum's in each part.
        """
        n_threads = checked_threads(n_threads)
        if is_dask_collection(X):
            if self.form == "sum":
                raise TypeError("apply of a sum of trees on a Dask collection: compute X first")
            return map_rows(functools.partial(self.apply, n_threads=n_threads, matched=matched), X, np.int64)
        return self._read(X, n_threads, matched, self._reading("apply"))

    # ------------------------------------------------------------ the reader of rows
    def _read(self, X, n_threads, matched, reading):
        """What reading (``_reading``) makes of the rows of X, read as ``encode`` reads them
        without encoding X whole: the same values, bit for bit (encode converts each row on
        its own), with memory for the output and a block of the columns the conditions
        read (``_blockwise``)."""
        check_not_sparse(X)
        positions = None if matched else column_positions(self.feature_names_in, X)
        frame = is_frame(X)
        if not frame:
            try:
                X = np.asarray(X)
            except Exception:  # ragged lists and the like: encode says what is wrong
                return self._read_coded(self._encoded(X), n_threads, reading)
            if X.ndim != 2:
                return self._read_coded(self._encoded(X), n_threads, reading)  # (refused there)
        if self.encoding is not None and not self.encoding.trivial:
            # categories, LightGBM's reading: the encoding reads whole rows, a block at a time
            cols = slice(None) if positions is None else positions

            def block(r0, r1):
                return self._encoded(X.iloc[r0:r1, cols] if frame else X[r0:r1])

            return self._blockwise(len(X), block, self._compiled(), n_threads, reading)
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
                return self._read_coded(arr, n_threads, reading)  # read in place

            def block(r0, r1):
                out = np.empty((r1 - r0, len(used)))
                for j, d in enumerate(used):  # one strided column at a time (a cast as astype's)
                    out[:, j] = arr[r0:r1, d]
                return out

        zero_at = [used.index(d) for d in zero]

        def used_block(r0, r1):
            if not used:  # no condition: a column the router never reads
                return np.zeros((r1 - r0, 1))
            out = block(r0, r1)
            if zero_at:
                out[:, zero_at] = zero_as_missing(out[:, zero_at])
            return out

        return self._blockwise(len(X), used_block, self._compiled(used_only=True), n_threads, reading)

    def _read_coded(self, X_coded, n_threads, reading):
        """``_read`` of rows as the explanation reads them (``encode``)."""
        X_coded = np.ascontiguousarray(X_coded, dtype=np.float64)
        return self._blockwise(X_coded.shape[0], lambda r0, r1: X_coded[r0:r1], self._compiled(), n_threads,
                               reading)

    def _blockwise(self, n_rows, block, arrays, n_threads, reading):
        """One array of what reading makes of rows given a block at a time by block(r0, r1)
        (float64, the columns the arrays number). reading (``_reading``): (what, result,
        dtype, width, labelled): result(items) of each block, items being the item (or
        with labelled the leaf) each row reaches in each term, int64 (rows, n_terms), into
        an array of dtype, (n_rows,) or (n_rows, width); the memory guard checks the output
        and a block before any is routed."""
        what, result, dtype, width, labelled = reading
        shape = (n_rows,) if width is None else (n_rows, width)
        size = int(np.prod(shape, dtype=np.float64) * np.dtype(dtype).itemsize)
        if size > ROUTE_BLOCK_BYTES:  # (below, a block's own bound holds)
            check_memory(size + ROUTE_BLOCK_BYTES, what, "fewer rows at a time",
                         {"the output": size, "a block of rows": ROUTE_BLOCK_BYTES})
        out = np.empty(shape, dtype=dtype)
        step = max(1, min(BLOCK_ROWS, ROUTE_BLOCK_BYTES // (_BYTES_PER_ITEM * len(self.terms))))
        label = self._flat[3] if labelled else None
        for r0 in range(0, n_rows, step):
            r1 = min(r0 + step, n_rows)
            out[r0:r1] = result(self._route(block(r0, r1), n_threads, label=label, arrays=arrays)[0])
        return out

    def _labels(self, values):
        """values as an array of the classes' dtype (NumPy's own strings would drop a
        label's trailing NULs), or as NumPy reads them in regression."""
        return np.asarray(values, dtype=None if self.classes is None else self.classes.dtype)

    def __repr__(self):
        return f"<{self._heading()}>"
