"""The split table: every split of an ensemble, one binary feature each, sorted by feature.

A split's binary feature s_l is 1 when a sample goes right at that node in the
source model, missing values included. Numeric splits ``x_d > t`` of one feature
are contiguous with increasing thresholds, so for a sample they form a
thermometer code determined by one rank per feature (src_c/dfg_ranks.h). A
categorical split tests the feature's category code against a set
(src_c/dfg_sets.h); sets have no thermometer code, so each categorical split is
ranked as a one-split feature of its own (rank s_l, or 2 for a missing value;
``rank_ptr``). Table order is by feature, so these groups keep every split in
place: that order is the split index ``l`` used everywhere, by the fit kernels too.
"""
import functools

import numpy as np

from . import _encoding
from .inputs import InputEncoding
from ..utils.memory import check_memory

NUMERIC, IN_SET, NOT_IN_SET = 0, 1, 2  # split kinds (DFG_KIND_* in src_c/dfg_sets.h)
MAX_CATEGORY = 2**31 - 1


def category_words(ptr, codes):
    """Bitsets of CSR code lists: item j's codes codes[ptr[j]:ptr[j+1]] become words
    words[word_ptr[j]:word_ptr[j+1]] (code c is bit c % 64 of word c // 64)."""
    ptr = np.asarray(ptr, dtype=np.int64)
    codes = np.asarray(codes, dtype=np.int64)
    item = np.repeat(np.arange(ptr.size - 1), np.diff(ptr))
    n_words = np.zeros(ptr.size - 1, dtype=np.int64)
    np.maximum.at(n_words, item, codes // 64 + 1)
    # a set is a bitset up to its largest code (as LightGBM's own cat_threshold words, for
    # codes up to 2**31 - 1): a few large codes cost code / 8 bytes each, checked first
    if n_words.sum() >= 2**17:  # 1 MB
        check_memory(8.0 * float(n_words.sum()), f"the bitsets of {ptr.size - 1} category sets "
                     f"(largest category code {int(codes.max())})",
                     "category codes numbered 0 .. n_categories - 1 (a set's bitset grows with "
                     "its largest code)")
    word_ptr = np.zeros(ptr.size, dtype=np.int64)
    np.cumsum(n_words, out=word_ptr[1:])
    words = np.zeros(int(word_ptr[-1]), dtype=np.uint64)
    np.bitwise_or.at(words, word_ptr[item] + codes // 64,
                     np.left_shift(np.uint64(1), (codes % 64).astype(np.uint64)))
    return word_ptr, words


def slices(values, starts, lengths):
    """values[starts[i]:starts[i] + lengths[i]] for every i, concatenated, and their CSR offsets."""
    ptr = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=ptr[1:])
    index = np.repeat(np.asarray(starts, dtype=np.int64) - ptr[:-1], lengths) + np.arange(ptr[-1])
    return ptr, values[index]


def _csr_take(ptr, values, rows):
    """(ptr, values) of the CSR rows ``rows`` of (ptr, values), in that order."""
    if values.size == 0:  # (a numeric table's sets: all empty)
        return np.zeros(len(rows) + 1, dtype=np.int64), values
    return slices(values, ptr[rows], ptr[rows + 1] - ptr[rows])


def _lexsorted(keys):
    """np.lexsort(keys) (the last key first, ties in index order): None where the rows are
    in that order already, else stable sorts from the first key to the last, a key of
    small integers (features, flags) by radix."""
    n = keys[0].size
    tied = np.ones(max(n - 1, 0), dtype=bool)  # rows equal on every key so far, last first
    for k in reversed(keys):
        if np.any(tied & (k[1:] < k[:-1])):
            break
        tied &= k[1:] == k[:-1]
    else:
        return None
    order = None
    for k in keys:
        if k.dtype.kind in "iu" and k.size and -2**15 <= k.min() and k.max() < 2**15:
            k = k.astype(np.int16)
        order = np.argsort(k, kind="stable") if order is None else order[np.argsort(k[order], kind="stable")]
    return order


def _canonical_sets(ptr, codes):
    """Each row's codes sorted and unique; and one integer key per row, equal for equal sets."""
    if codes.size == 0:
        return ptr, codes, np.zeros(ptr.size - 1, dtype=np.int64)
    row = np.repeat(np.arange(ptr.size - 1), np.diff(ptr))
    order = np.lexsort((codes, row))
    row, codes = row[order], codes[order]
    new = np.ones(codes.size, dtype=bool)
    new[1:] = (row[1:] != row[:-1]) | (codes[1:] != codes[:-1])
    row, codes = row[new], codes[new]
    ptr = np.zeros(ptr.size, dtype=np.int64)
    np.cumsum(np.bincount(row, minlength=ptr.size - 1), out=ptr[1:])
    rows = np.flatnonzero(np.diff(ptr))  # non-empty sets (a loop over splits, not samples)
    key = np.zeros(ptr.size - 1, dtype=np.int64)
    _, inverse = np.unique(np.array([codes[ptr[j]:ptr[j + 1]].tobytes() for j in rows], dtype=object),
                           return_inverse=True)
    key[rows] = inverse + 1
    return ptr, codes, key


# Largest rank matrix kernel_input builds for a table with categorical splits before it
# takes the packed bits instead.
RANK_BYTES_LIMIT = 256 * 2**20


class SplitTable:
    """The splits of an ensemble, sorted, one binary feature each.

    For a present value, a numeric split (kind 0) is ``s_l = [x_{feature[l]} > threshold[l]]``;
    a categorical split is ``s_l = [code in set_l]`` (kind 1) or ``[code not in set_l]``
    (kind 2), where a negative code, or one no set names, is in no set. For a missing x
    (NaN), ``s_l = missing_right[l]``. The splits are sorted by feature, then threshold
    (numeric) or kind and set (categorical), then missing direction; repeated splits are
    dropped unless ``keep_duplicates``.

    Parameters
    ----------
    feature : array-like of int of shape (L,)
        The feature of each split, in ``[0, n_features)``.
    threshold : array-like of float of shape (L,)
        The threshold of each split: finite or +inf (ignored for categorical splits).
    n_features : int
        The number of input columns.
    keep_duplicates : bool, default=False
        Keep repeated splits (same feature, test and missing direction).
    float32_inputs : bool, default=False
        The source model compares float32 copies of the inputs (scikit-learn trees do):
        the thresholds are replaced by the float64 thresholds that give the same outcome
        on unrounded inputs, so no rounded copy of X is made.
    missing_right : array-like of shape (L,), default=None
        1 where the source model sends a missing value right; None: all 0.
    supports_missing : bool, default=False
        The source model defines where missing values go; otherwise NaN inputs are
        refused.
    kind : array-like of shape (L,), default=None
        The kind of each split: 0 numeric, 1 in set, 2 not in set; None: all numeric.
    cat_ptr : array-like of shape (L + 1,), default=None
        Offsets into ``cat_codes``: split l's set is ``cat_codes[cat_ptr[l]:cat_ptr[l + 1]]``.
    cat_codes : array-like of int, default=None
        The category codes of the sets (integers in ``[0, 2**31 - 1]``).
    encoding : InputEncoding, default=None
        How the source model reads the inputs; None: as they are.
    no_missing : array-like of bool of shape (n_features,), default=None
        Features where the data has no missing value: splits that differ there only by
        their missing direction are repeats (the one sending missing values left is kept).
    gain : array-like of shape (L,), default=None
        Per split, the largest training-objective gain of its nodes in the source's trees
        (a repeated split keeps the largest); ``top`` keeps the splits that gain most.

    Attributes
    ----------
    feature : ndarray of shape (L,)
        The feature of each split (int32), in table order.
    threshold : ndarray of shape (L,)
        The thresholds (float64), 0 for categorical splits.
    kind : ndarray of shape (L,)
        The kinds (uint8): 0 numeric, 1 / 2 categorical.
    cat_ptr : ndarray of shape (L + 1,)
        Offsets (int64) into ``cat_codes``.
    cat_codes : ndarray
        The sorted codes of each split's set (int32).
    categorical : ndarray of shape (n_features,)
        Whether each feature has categorical splits (a feature is either numeric or
        categorical).
    has_categorical : bool
        Whether any split is categorical.
    feat_ptr : ndarray of shape (n_features + 1,)
        The splits of feature d are ``feat_ptr[d]:feat_ptr[d + 1]`` (int64).
    rank_ptr : ndarray of shape (G + 1,)
        The rank groups of the fit kernels (``ranks``): group g is the splits
        ``rank_ptr[g]:rank_ptr[g + 1]``, all of a numeric feature's splits or one
        categorical split (int64).
    rank_feature : ndarray of shape (G,)
        The input column of each rank group (int32).
    n_features : int
        The number of input columns.
    float32_inputs : bool
        Whether the thresholds were converted for float32 comparisons.
    missing_right : ndarray of shape (L,)
        1 where the source model sends a missing value right (uint8).
    supports_missing : bool
        Whether the source model defines where missing values go.
    gain : ndarray of shape (L,) or None
        The splits' gains.
    encoding : InputEncoding
        How the source model reads the inputs: ``encoding.transform(X)`` gives the X the
        other methods take.

    See Also
    --------
    split_table_from_estimator : The split table of a fitted tree ensemble.
    split_table_from_array : The split table of (feature, threshold) pairs.

    Examples
    --------
    >>> import numpy as np
    >>> from defrag import SplitTable
    >>> table = SplitTable(feature=[1, 0, 0, 0], threshold=[0.0, 1.5, 0.5, 1.5], n_features=2)
    >>> len(table), table.feature, table.threshold
    (3, array([0, 0, 1], dtype=int32), array([0.5, 1.5, 0. ]))
    >>> table.binary_features(np.array([[1.0, -1.0], [2.0, 3.0]]))
    array([[ True, False, False],
           [ True,  True,  True]])
    """

    def __init__(self, feature, threshold, n_features, keep_duplicates=False,
                 float32_inputs=False, missing_right=None, supports_missing=False,
                 kind=None, cat_ptr=None, cat_codes=None, encoding=None, no_missing=None,
                 gain=None):
        feature = np.asarray(feature)
        threshold = np.asarray(threshold, dtype=np.float64)
        if feature.ndim != 1 or threshold.shape != feature.shape:
            raise ValueError("split features and thresholds must be 1-D arrays of equal length")
        if feature.size and feature.dtype.kind not in "iub" and not np.all(np.equal(np.mod(feature, 1), 0)):
            raise ValueError("split feature indices must be integers")
        feature = feature.astype(np.int64)
        if feature.size and (feature.min() < 0 or feature.max() >= n_features):
            raise ValueError(
                f"split feature indices must lie in [0, {n_features}); got "
                f"[{feature.min()}, {feature.max()}]"
            )
        kind, cat_ptr, cat_codes = self._check_sets(feature, kind, cat_ptr, cat_codes)
        threshold = np.where(kind == NUMERIC, threshold, 0.0)
        # +inf is allowed: scikit-learn separates missing from present values with a
        # split at +inf that sends only the missing ones right
        if np.any(np.isnan(threshold) | (threshold == -np.inf)):
            raise ValueError("split thresholds must be finite (or +inf)")
        if float32_inputs:
            threshold = np.where(kind == NUMERIC, float32_threshold(threshold), 0.0)
        if missing_right is None:
            missing_right = np.zeros(feature.size, dtype=np.uint8)
        missing_right = np.asarray(missing_right).astype(np.uint8)
        if missing_right.shape != feature.shape or np.any(missing_right > 1):
            raise ValueError("missing_right must hold one 0/1 flag per split")
        categorical = np.zeros(n_features, dtype=bool)
        categorical[feature[kind != NUMERIC]] = True
        mixed = categorical & (np.bincount(feature[kind == NUMERIC], minlength=n_features) > 0)
        if mixed.any():
            raise ValueError(f"feature {int(np.flatnonzero(mixed)[0])} has both numeric and categorical splits")
        cat_ptr, cat_codes, set_key = _canonical_sets(cat_ptr, cat_codes)
        # (feature, threshold) order makes each numeric feature's splits a thermometer
        # code; categorical splits follow (kind, set); the missing direction breaks ties
        keys = (missing_right, set_key, kind, threshold, feature)
        # a key of one value orders nothing (lexsort is stable): most tables are numeric
        keys = tuple(k for k in keys if k is feature or (k.size and np.any(k != k[0])))
        order = _lexsorted(keys)
        if order is None:
            order = np.arange(feature.size)
        if gain is not None:
            gain = np.nan_to_num(np.asarray(gain, dtype=np.float64), nan=0.0)
            if gain.shape != feature.shape:
                raise ValueError("gain must hold one value per split")
            gain = gain[order]
        if not keep_duplicates and feature.size:
            # a duplicate is a split with the same feature, test (threshold, or kind and
            # set) and missing direction; on a feature in no_missing the direction
            # changes no bit, so splits that differ only there are duplicates too (the
            # one sending missing values left is kept: it sorts first)
            direction_matters = np.ones(feature.size, dtype=bool)
            if no_missing is not None:
                direction_matters = ~np.asarray(no_missing, dtype=bool)[feature]
            new = np.zeros(feature.size, dtype=bool)
            new[0] = True
            for key in keys:
                k = key[order]
                differs = k[1:] != k[:-1]
                if key is missing_right:
                    differs &= direction_matters[order[1:]]
                new[1:] |= differs
            if gain is not None:  # a repeated split keeps the largest gain of its copies
                group = np.cumsum(new) - 1
                kept = np.full(int(group[-1]) + 1, -np.inf)
                np.maximum.at(kept, group, gain)
                gain = kept
            order = order[new]
        feature, threshold, missing_right, kind = (a[order] for a in (feature, threshold, missing_right, kind))
        self.cat_ptr, codes = _csr_take(cat_ptr, cat_codes, order)
        self.cat_codes = np.ascontiguousarray(codes, dtype=np.int32)
        self.kind = np.ascontiguousarray(kind, dtype=np.uint8)
        self.missing_right = np.ascontiguousarray(missing_right)
        self.supports_missing = bool(supports_missing)
        self.feature = np.ascontiguousarray(feature, dtype=np.int32)
        self.threshold = np.ascontiguousarray(threshold)
        self.gain = gain
        self.n_features = int(n_features)
        counts = np.bincount(self.feature, minlength=self.n_features)
        self.feat_ptr = np.zeros(self.n_features + 1, dtype=np.int64)
        np.cumsum(counts, out=self.feat_ptr[1:])
        self.float32_inputs = bool(float32_inputs)
        self.categorical = categorical
        self.has_categorical = bool(categorical.any())
        self._set_ptr, self._set_words = category_words(self.cat_ptr, self.cat_codes)
        if encoding is None:
            encoding = InputEncoding(self.n_features)
        if encoding.n_features != self.n_features:
            raise ValueError("the input encoding and the split table differ in the number of features")
        self.encoding = encoding.with_categorical(categorical | encoding.categorical)

    @staticmethod
    def _check_sets(feature, kind, cat_ptr, cat_codes):
        L = feature.size
        kind = np.zeros(L, dtype=np.uint8) if kind is None else np.asarray(kind)
        if kind.shape != (L,) or (L and (kind.min() < 0 or kind.max() > NOT_IN_SET)):
            raise ValueError("kind must hold one split kind (0 numeric, 1 in set, 2 not in set) per split")
        kind = kind.astype(np.uint8)
        if cat_ptr is None and cat_codes is None:
            if np.any(kind != NUMERIC):
                raise ValueError("categorical splits need their category sets (cat_ptr, cat_codes)")
            return kind, np.zeros(L + 1, dtype=np.int64), np.zeros(0, dtype=np.int64)
        cat_ptr = np.asarray(cat_ptr)
        cat_codes = np.asarray(cat_codes)
        if (cat_ptr.shape != (L + 1,) or cat_codes.ndim != 1 or cat_ptr[0] != 0
                or np.any(np.diff(cat_ptr) < 0) or cat_ptr[-1] != cat_codes.size):
            raise ValueError("cat_ptr must be L + 1 non-decreasing offsets from 0 to len(cat_codes)")
        if cat_codes.size and not (np.issubdtype(cat_codes.dtype, np.number)
                                   and np.all(np.equal(np.mod(cat_codes, 1), 0))
                                   and cat_codes.min() >= 0 and cat_codes.max() <= MAX_CATEGORY):
            raise ValueError(f"category codes must be integers in [0, {MAX_CATEGORY}]")
        if np.any((np.diff(cat_ptr) > 0) & (kind == NUMERIC)):
            raise ValueError("numeric splits cannot have category sets")
        return kind, cat_ptr.astype(np.int64), cat_codes.astype(np.int64)

    def __len__(self):
        return int(self.feature.size)

    def without_idle_directions(self, X):
        """Drop the splits that repeat another but for a missing direction no row of X takes.

        On a feature with no missing value in X the direction changes no bit.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows, prepared as the model reads them.

        Returns
        -------
        SplitTable
            The smaller table, or this one when nothing repeats.
        """
        no_missing = ~np.isnan(np.asarray(X, dtype=np.float64)).any(axis=0)
        if not no_missing.any():
            return self
        table = self._rebuilt(np.arange(len(self)), keep_duplicates=False, no_missing=no_missing)
        return self if len(table) == len(self) else table

    def top(self, n_splits):
        """Keep the n_splits splits with the largest gain (ties: table order).

        Parameters
        ----------
        n_splits : int
            The number of splits to keep.

        Returns
        -------
        SplitTable
            Those splits in table order; this table when it has no more, or no gains.
        """
        if self.gain is None or len(self) <= n_splits:
            return self
        return self._rebuilt(self.top_rows(n_splits), keep_duplicates=True)

    def top_rows(self, n_splits):
        """The rows of the n_splits splits with the largest gain (ties: the lower row).

        Those above the n_splits-th largest gain, then the first of those at it: a
        partition of the gains, not a sort.

        Parameters
        ----------
        n_splits : int
            How many rows to give (``top`` keeps their splits).

        Returns
        -------
        ndarray of int64
            The rows in table order; every row where the table has no more, or no gains.
        """
        n_splits = max(0, int(n_splits))
        if n_splits >= len(self) or self.gain is None:
            return np.arange(len(self))
        if n_splits == 0:
            return np.zeros(0, dtype=np.int64)
        gain = self.gain
        kth = np.partition(gain, gain.size - n_splits)[gain.size - n_splits]
        above = np.flatnonzero(gain > kth)
        return np.sort(np.concatenate([above, np.flatnonzero(gain == kth)[:n_splits - above.size]]))

    def _rebuilt(self, rows, **options):
        """A table of the splits ``rows`` of this one (thresholds already converted)."""
        ptr, codes = _csr_take(self.cat_ptr, self.cat_codes, rows)
        return SplitTable(self.feature[rows], self.threshold[rows], self.n_features,
                          missing_right=self.missing_right[rows], supports_missing=self.supports_missing,
                          kind=self.kind[rows], cat_ptr=ptr, cat_codes=codes, encoding=self.encoding,
                          gain=None if self.gain is None else self.gain[rows], **options)

    def set_of(self, l):
        """Return the sorted category codes of split l.

        Parameters
        ----------
        l : int
            The split.

        Returns
        -------
        ndarray
            The codes (empty for a numeric split).
        """
        return self.cat_codes[self.cat_ptr[l]:self.cat_ptr[l + 1]]

    def prepare(self, X):
        """Return X as the kernels read it: C-contiguous float64 (no copy when it already is).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows, coded as the model reads them.

        Returns
        -------
        ndarray of shape (n_samples, n_features)
            The prepared rows.
        """
        return np.ascontiguousarray(X, dtype=np.float64)

    @functools.cached_property
    def _rank_groups(self):
        counts = np.diff(self.feat_ptr)
        per_feature = np.where(self.categorical, counts, 1)  # groups of each feature
        feature = np.repeat(np.arange(self.n_features, dtype=np.int32), per_feature)
        ptr = np.zeros(feature.size + 1, dtype=np.int64)
        np.cumsum(np.where(self.categorical[feature], 1, counts[feature]), out=ptr[1:])
        return ptr, feature

    @property
    def rank_ptr(self):
        return self._rank_groups[0]

    @property
    def rank_feature(self):
        return self._rank_groups[1]

    def ranks(self, X, n_threads=1):
        """Return the ranks of prepared X, computed in C.

        A numeric feature's rank is its thermometer code (for a present value, how many of
        its splits go right; a missing value has a code of its own); a categorical split's
        is s_l (0 or 1, 2 when missing).

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
            The rows, prepared as the model reads them (``prepare``).
        n_threads : int, default=1
            The threads to use.

        Returns
        -------
        ndarray of shape (len(rank_ptr) - 1, n_samples)
            The ranks.
        """
        if not self.has_categorical:
            return _encoding.compute_ranks(X, self.feat_ptr, self.threshold, n_threads)
        return _encoding.compute_group_ranks(X, self.rank_feature, self.rank_ptr, self.threshold, n_threads,
                                         kind=self.kind, set_ptr=self._set_ptr, set_words=self._set_words)

    def pack(self, X, n_threads=1):
        """Return the bit-packed s matrix of prepared X, computed in C.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
            The rows, prepared as the model reads them (``prepare``).
        n_threads : int, default=1
            The threads to use.

        Returns
        -------
        ndarray of shape (n_samples, ceil(L / 64))
            The bits, 64 splits per word.
        """
        sets = {}
        if self.has_categorical:
            sets = dict(kind=self.kind, set_ptr=self._set_ptr, set_words=self._set_words)
        return _encoding.pack_rows(X, self.feature, self.threshold, n_threads, self.missing_right, **sets)

    def kernel_input(self, X, n_threads=1, bits=None):
        """Return the s matrix of prepared X as the fit kernels take it.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
            The rows, prepared as the model reads them (``prepare``).
        n_threads : int, default=1
            The threads to use.
        bits : bool, default=None
            True for the packed bits, False for the ranks; None chooses the ranks unless
            categorical splits would make them larger than ``RANK_BYTES_LIMIT`` and 4 times the
            packed bits (see ``uses_bits``).

        Returns
        -------
        dict
            ``{"ranks": ranks(X)}`` or ``{"bits": pack(X)}``.
        """
        if bits is None:
            bits = self.uses_bits(np.asarray(X).shape[0])
        if bits:
            return {"bits": self.pack(X, n_threads)}
        return {"ranks": self.ranks(X, n_threads)}

    def uses_bits(self, n_samples):
        """Tell whether ``kernel_input(bits=None)`` packs the s matrix of n_samples rows as bits.

        Parameters
        ----------
        n_samples : int
            The rows.

        Returns
        -------
        bool
            True for the bits.
        """
        rank_bytes = 4 * n_samples * (len(self.rank_ptr) - 1)
        bit_bytes = 8 * n_samples * ((len(self) + 63) // 64)
        return bool(self.has_categorical and rank_bytes > max(RANK_BYTES_LIMIT, 4 * bit_bytes))

    def binary_features(self, X):
        """Return the dense boolean s matrix, computed in NumPy (for tests and small inspection).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows, coded as the model reads them.

        Returns
        -------
        ndarray of shape (n_samples, L)
            ``s[i, l]``: row i goes right at split l.
        """
        X = self.prepare(X)[:, self.feature]
        S = X > self.threshold
        for l in np.flatnonzero(self.kind != NUMERIC):  # over splits, not samples
            S[:, l] = np.isin(X[:, l], self.set_of(l)) ^ (self.kind[l] == NOT_IN_SET)
        return np.where(np.isnan(X), self.missing_right.astype(bool), S)


def float32_threshold(t):
    """Float64 thresholds t2 with ``x > t2  <=>  float32(x) > t`` for every float64 x.

    float32 rounding is monotonic, so float32(x) > t holds exactly when x rounds to
    at least f_up, the smallest float32 above t: when x > m, the midpoint between
    f_up and its float32 predecessor, or when x == m and the tie goes to f_up
    (round half to even: f_up has an even mantissa). m is exact in float64.
    """
    t = np.asarray(t, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):  # (beyond float32: inf, as the trees compare)
        t32 = t.astype(np.float32)
        f_up = np.where(t32.astype(np.float64) > t, t32, np.nextafter(t32, np.float32(np.inf)))
        f_lo = np.nextafter(f_up, np.float32(-np.inf))
        mid = (f_lo.astype(np.float64) + f_up.astype(np.float64)) / 2.0
    even = (f_up.view(np.uint32) & 1) == 0
    return np.where(even, np.nextafter(mid, -np.inf), mid)
