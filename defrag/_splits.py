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
import numbers

import numpy as np

from . import _encoding, _fit
from ._inputs import InputEncoding

_SKLEARN_FORESTS = (
    "RandomForestClassifier",
    "RandomForestRegressor",
    "ExtraTreesClassifier",
    "ExtraTreesRegressor",
    "GradientBoostingClassifier",
    "GradientBoostingRegressor",
)
_SKLEARN_HIST = ("HistGradientBoostingClassifier", "HistGradientBoostingRegressor")
_SUPPORTED = _SKLEARN_FORESTS + _SKLEARN_HIST

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
    word_ptr = np.zeros(ptr.size, dtype=np.int64)
    np.cumsum(n_words, out=word_ptr[1:])
    words = np.zeros(int(word_ptr[-1]), dtype=np.uint64)
    np.bitwise_or.at(words, word_ptr[item] + codes // 64,
                     np.left_shift(np.uint64(1), (codes % 64).astype(np.uint64)))
    return word_ptr, words


def _slices(values, starts, lengths):
    """values[starts[i]:starts[i] + lengths[i]] for every i, concatenated, and their CSR offsets."""
    ptr = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=ptr[1:])
    index = np.repeat(np.asarray(starts, dtype=np.int64) - ptr[:-1], lengths) + np.arange(ptr[-1])
    return ptr, values[index]


def _csr_take(ptr, values, rows):
    """(ptr, values) of the CSR rows ``rows`` of (ptr, values), in that order."""
    return _slices(values, ptr[rows], ptr[rows + 1] - ptr[rows])


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
    """Sorted splits. For a present value, a numeric split (kind 0) is
    ``s_l = [x_{feature[l]} > threshold[l]]``; a categorical split is
    ``s_l = [code in set_l]`` (kind 1) or ``[code not in set_l]`` (kind 2), where a
    negative code, or one no set names, is in no set. For a missing x (NaN),
    ``s_l = missing_right[l]``.

    Attributes
    ----------
    feature : int32 array (L,)
    threshold : float64 array (L,), 0 for categorical splits
    kind : uint8 array (L,), 0 numeric, 1 / 2 categorical (see above)
    cat_ptr, cat_codes : int64 (L + 1,) and int32 arrays, the sorted codes of
        split l's set are ``cat_codes[cat_ptr[l]:cat_ptr[l + 1]]`` (empty for numeric splits)
    categorical : bool array (n_features,), the feature has categorical splits (a
        feature is either numeric or categorical)
    has_categorical : bool
    feat_ptr : int64 array (n_features + 1,), splits of feature d are
        ``feat_ptr[d]:feat_ptr[d + 1]``.
    rank_ptr, rank_feature : int64 (G + 1,) and int32 (G,) arrays, the rank
        "features" of the fit kernels (``ranks``): group g is the splits
        ``rank_ptr[g]:rank_ptr[g + 1]`` of input column ``rank_feature[g]``, all of
        a numeric feature's splits or one categorical split. Equal to ``feat_ptr``
        and ``arange(n_features)`` when every split is numeric.
    n_features : int
    float32_inputs : bool
        The source model compares float32 copies of the inputs (scikit-learn
        trees do). The thresholds are then replaced by the float64 thresholds
        that give the same outcome on unrounded inputs (float32_threshold), so
        no rounded copy of X is ever made.
    missing_right : uint8 array (L,)
        1 where the source model sends a missing value right (s = 1).
    supports_missing : bool
        The source model defines where missing values go; otherwise NaN inputs
        are rejected.
    encoding : InputEncoding
        How the source model reads the inputs (category codes, zero as missing):
        ``encoding.transform(X)`` gives the X that the other methods take.
    """

    def __init__(self, feature, threshold, n_features, keep_duplicates=False,
                 float32_inputs=False, missing_right=None, supports_missing=False,
                 kind=None, cat_ptr=None, cat_codes=None, encoding=None):
        feature = np.asarray(feature)
        threshold = np.asarray(threshold, dtype=np.float64)
        if feature.ndim != 1 or threshold.shape != feature.shape:
            raise ValueError("split features and thresholds must be 1-D arrays of equal length")
        if feature.size and not np.all(np.equal(np.mod(feature, 1), 0)):
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
        order = np.lexsort(keys)
        if not keep_duplicates and feature.size:
            new = np.zeros(feature.size, dtype=bool)
            new[0] = True
            for key in keys:
                k = key[order]
                new[1:] |= k[1:] != k[:-1]
            order = order[new]
        feature, threshold, missing_right, kind = (a[order] for a in (feature, threshold, missing_right, kind))
        self.cat_ptr, codes = _csr_take(cat_ptr, cat_codes, order)
        self.cat_codes = np.ascontiguousarray(codes, dtype=np.int32)
        self.kind = np.ascontiguousarray(kind, dtype=np.uint8)
        self.missing_right = np.ascontiguousarray(missing_right)
        self.supports_missing = bool(supports_missing)
        self.feature = np.ascontiguousarray(feature, dtype=np.int32)
        self.threshold = np.ascontiguousarray(threshold)
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

    def set_of(self, l):
        """Sorted category codes of split l (empty for a numeric split)."""
        return self.cat_codes[self.cat_ptr[l]:self.cat_ptr[l + 1]]

    def prepare(self, X):
        """X as the kernels read it: C-contiguous float64 (no copy when it already is)."""
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
        """Ranks (len(rank_ptr) - 1, n_samples) of prepared X: the thermometer rank of
        each numeric feature, and s_l (0 / 1, 2 when missing) of each categorical split."""
        if not self.has_categorical:
            return _encoding.compute_ranks(X, self.feat_ptr, self.threshold, n_threads)
        return _encoding.compute_group_ranks(X, self.rank_feature, self.rank_ptr, self.threshold, n_threads,
                                         kind=self.kind, set_ptr=self._set_ptr, set_words=self._set_words)

    def pack(self, X, n_threads=1):
        """Bit-packed s matrix (n_samples, ceil(L / 64)) of prepared X."""
        sets = {}
        if self.has_categorical:
            sets = dict(kind=self.kind, set_ptr=self._set_ptr, set_words=self._set_words)
        return _encoding.pack_rows(X, self.feature, self.threshold, n_threads, self.missing_right, **sets)

    def kernel_input(self, X, n_threads=1, bits=None):
        """The s matrix of prepared X as the fit kernels take it: ranks (``{"ranks": ...}``),
        or with bits=True the packed bits (``{"bits": ...}``, the slower path).

        bits=None chooses: ranks, unless categorical splits (4 bytes per split and row as
        ranks, 1 bit packed) would make the ranks larger than RANK_BYTES_LIMIT and 4x
        the packed bits; then the bits, about 2x slower but that much smaller."""
        if bits is None:
            n = np.asarray(X).shape[0]
            rank_bytes = 4 * n * (len(self.rank_ptr) - 1)
            bit_bytes = 8 * n * ((len(self) + 63) // 64)
            bits = self.has_categorical and rank_bytes > max(RANK_BYTES_LIMIT, 4 * bit_bytes)
        if bits:
            return {"bits": self.pack(X, n_threads)}
        return {"ranks": self.ranks(X, n_threads)}

    def problem(self, s_matrix, **targets):
        """The fit kernels' ``_fit.Problem`` over s_matrix from kernel_input (or a
        subset of its rows); targets are Problem's y_value / y_class / n_classes."""
        feat_ptr = self.rank_ptr if "ranks" in s_matrix else self.feat_ptr
        return _fit.Problem(feat_ptr, **s_matrix, missing_right=self.missing_right, **targets)

    def binary_features(self, X):
        """Dense boolean s matrix (n_samples, L) in NumPy: for tests and small inspection only."""
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
    t32 = t.astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        f_up = np.where(t32.astype(np.float64) > t, t32, np.nextafter(t32, np.float32(np.inf)))
        f_lo = np.nextafter(f_up, np.float32(-np.inf))
        mid = (f_lo.astype(np.float64) + f_up.astype(np.float64)) / 2.0
    even = (f_up.view(np.uint32) & 1) == 0
    return np.where(even, np.nextafter(mid, -np.inf), mid)


def _check_supported(estimator):
    from sklearn.utils.validation import check_is_fitted

    name = type(estimator).__name__
    if name not in _SUPPORTED or not type(estimator).__module__.startswith("sklearn."):
        raise TypeError(
            f"unsupported estimator type {type(estimator).__module__}.{name}; supported: "
            f"scikit-learn {', '.join(_SUPPORTED)}, or an array of (feature, threshold) pairs"
        )
    check_is_fitted(estimator)
    return name


class _Splits:
    """Splits gathered tree by tree, then made into one SplitTable."""

    def __init__(self):
        self.parts = []

    def add(self, feature, threshold, missing_right, kind=None, set_sizes=None, set_codes=None):
        n = len(feature)
        self.parts.append((
            np.asarray(feature, dtype=np.int64), np.asarray(threshold, dtype=np.float64),
            np.asarray(missing_right, dtype=np.uint8),
            np.zeros(n, dtype=np.uint8) if kind is None else np.asarray(kind, dtype=np.uint8),
            np.zeros(n, dtype=np.int64) if set_sizes is None else np.asarray(set_sizes, dtype=np.int64),
            np.zeros(0, dtype=np.int64) if set_codes is None else np.asarray(set_codes, dtype=np.int64),
        ))

    def table(self, n_features, keep_duplicates=False, **kwargs):
        empty = (np.int64, np.float64, np.uint8, np.uint8, np.int64, np.int64)
        feature, threshold, missing_right, kind, sizes, codes = (
            np.concatenate([p[i] for p in self.parts]) if self.parts else np.zeros(0, dtype=t)
            for i, t in enumerate(empty))
        cat_ptr = np.zeros(sizes.size + 1, dtype=np.int64)
        np.cumsum(sizes, out=cat_ptr[1:])
        return SplitTable(feature, threshold, n_features, keep_duplicates=keep_duplicates,
                          missing_right=missing_right, kind=kind, cat_ptr=cat_ptr, cat_codes=codes,
                          **kwargs)


def _bitset_rows_to_sets(rows):
    """(sizes, codes) of bitset rows of uint32 words (scikit-learn's layout: code c is
    bit c % 32 of word c // 32)."""
    rows = np.ascontiguousarray(np.asarray(rows).astype("<u4"))
    bits = np.unpackbits(rows.view(np.uint8), axis=1, bitorder="little")
    return bits.sum(axis=1), np.nonzero(bits)[1]


def _hist_input_columns(estimator):
    """Input column of each feature index the predictors use: with categorical
    features, the estimator's ColumnTransformer puts them first."""
    n = estimator.n_features_in_
    pre = getattr(estimator, "_preprocessor", None)
    if pre is None:
        return np.arange(n)
    column = np.full(n, -1, dtype=np.int64)
    for name, _, cols in pre.transformers_:
        if name in pre.output_indices_:
            column[pre.output_indices_[name]] = np.arange(n)[cols]
    if np.any(column < 0):
        raise ValueError("cannot map the HistGradientBoosting features back to its input columns")
    return column


def _hist_splits(estimator, out):
    """Add the splits of a HistGradientBoosting model to out; returns its InputEncoding.

    Numeric nodes go left when x <= num_threshold (float64 inputs). A categorical
    node goes left for the categories in its raw_left_cat_bitsets row, right for
    the other known ones; codes are the positions in the estimator's encoder
    categories, and an unknown category is missing. Missing values as
    missing_go_to_left says."""
    column = _hist_input_columns(estimator)
    encoding = None
    if getattr(estimator, "is_categorical_", None) is not None:
        if getattr(estimator, "_preprocessor", None) is None:
            raise TypeError("defrag reads HistGradientBoosting categories from the estimator's "
                            "internal OrdinalEncoder, which this scikit-learn version does not "
                            "have; refit the model with a newer scikit-learn")
        encoder = estimator._preprocessor.named_transformers_["encoder"]
        categories = [None] * estimator.n_features_in_
        first = column[estimator._preprocessor.output_indices_["encoder"]]
        for j, cats in zip(first, encoder.categories_):
            cats = np.asarray(cats)
            if cats.size and cats[-1] != cats[-1]:  # the encoder lists NaN last
                cats = cats[:-1]
            categories[j] = cats
        encoding = InputEncoding(estimator.n_features_in_, categories=categories,
                                 lookup_numbers=True, unknown="missing")
        known, known_row = estimator._bin_mapper.make_known_categories_bitsets()
    for per_class in estimator._predictors:  # iterations x classes
        for predictor in per_class:
            nodes = predictor.nodes[predictor.nodes["is_leaf"] == 0]
            cat = nodes["is_categorical"] == 1
            sizes, codes = np.zeros(nodes.size, dtype=np.int64), None
            if cat.any():
                left = predictor.raw_left_cat_bitsets[nodes["bitset_idx"][cat]]
                sizes[cat], codes = _bitset_rows_to_sets(known[known_row[nodes["feature_idx"][cat]]] & ~left)
            out.add(column[nodes["feature_idx"]], nodes["num_threshold"], nodes["missing_go_to_left"] == 0,
                    np.where(cat, IN_SET, NUMERIC), sizes, codes)
    return encoding


def split_table_from_estimator(estimator, keep_duplicates=False):
    """SplitTable of a fitted scikit-learn tree ensemble (left child when x <= t, so s = x > t).

    Forests and gradient boosting (all per-class trees) compare float32-rounded
    inputs; HistGradientBoosting compares float64 inputs and may split
    categorical features by category sets.
    """
    name = _check_supported(estimator)
    out = _Splits()
    if name in _SKLEARN_HIST:
        encoding = _hist_splits(estimator, out)
        return out.table(estimator.n_features_in_, keep_duplicates, supports_missing=True,
                         encoding=encoding)
    trees = np.ravel(estimator.estimators_)
    for tree in trees:  # one vectorised read per tree
        t = tree.tree_
        internal = t.children_left >= 0
        go_left = getattr(t, "missing_go_to_left", None)
        out.add(t.feature[internal], t.threshold[internal],
                np.zeros(internal.sum(), bool) if go_left is None else go_left[internal] == 0)
    # Forests predict on NaN with each node's missing_go_to_left (scikit-learn >= 1.4);
    # gradient boosting rejects NaN inputs.
    supports_missing = "Forest" in name or "ExtraTrees" in name
    supports_missing &= all(hasattr(t.tree_, "missing_go_to_left") for t in trees)
    return out.table(estimator.n_features_in_, keep_duplicates, float32_inputs=True,
                     supports_missing=supports_missing)


def split_table_from_array(splits, n_features, keep_duplicates=False):
    """SplitTable from a user array of (feature, threshold) rows."""
    try:
        arr = np.asarray(splits, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError("splits must be a numeric array of (feature, threshold) pairs") from exc
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(f"splits must have shape (n_splits, 2); got {arr.shape}")
    if arr.shape[0] == 0:
        raise ValueError("splits is empty: at least one (feature, threshold) pair is needed")
    if not isinstance(n_features, numbers.Integral) or n_features < 1:
        raise ValueError("n_features must be a positive integer")
    return SplitTable(arr[:, 0], arr[:, 1], n_features, keep_duplicates=keep_duplicates)


def _is_xgboost(obj):
    mod = type(obj).__module__ or ""
    return mod.startswith("xgboost")


def xgboost_model_json(model):
    """The parsed JSON of an XGBoost Booster, scikit-learn wrapper, or JSON text/dict."""
    if isinstance(model, dict):
        return model
    if isinstance(model, (str, bytes, bytearray)):
        import json

        try:
            return json.loads(model)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ValueError(f"malformed XGBoost model JSON: {exc}") from exc
    booster = model.get_booster() if hasattr(model, "get_booster") else model
    return xgboost_model_json(bytes(booster.save_raw(raw_format="json")))


def _xgboost_sets(tree, internal):
    """(kind, set sizes, codes) of a tree's internal nodes: split_type 1 nodes send
    the categories listed for them (categories_nodes / _segments / _sizes) right."""
    split_type = np.asarray(tree["split_type"], dtype=np.int64)[internal]
    if np.any((split_type != 0) & (split_type != 1)):
        raise ValueError("split_type must be 0 (numeric) or 1 (categorical)")
    sizes = np.zeros(internal.size, dtype=np.int64)
    cat = np.flatnonzero(split_type == 1)
    if cat.size == 0:
        return split_type, sizes, None
    nodes = np.asarray(tree["categories_nodes"], dtype=np.int64)
    segments = np.asarray(tree["categories_segments"], dtype=np.int64)
    lengths = np.asarray(tree["categories_sizes"], dtype=np.int64)
    categories = np.asarray(tree["categories"])
    if not (nodes.ndim == segments.ndim == lengths.ndim == categories.ndim == 1
            and nodes.size == segments.size == lengths.size):
        raise ValueError("categories_nodes, categories_segments and categories_sizes must be "
                         "lists of equal length")
    if np.any(segments < 0) or np.any(lengths < 0) or np.any(segments + lengths > categories.size):
        raise ValueError("categories_segments / categories_sizes point outside categories")
    if categories.size and not (np.issubdtype(categories.dtype, np.integer) and categories.min() >= 0):
        raise ValueError("categories must be non-negative integer category codes")
    order = np.argsort(nodes, kind="stable")
    pos = order[np.minimum(np.searchsorted(nodes[order], internal[cat]), max(nodes.size - 1, 0))] \
        if nodes.size else None
    if pos is None or np.any(nodes[pos] != internal[cat]):
        raise ValueError("a categorical node has no entry in categories_nodes")
    sizes[cat] = lengths[pos]
    return split_type, sizes, _slices(categories, segments[pos], lengths[pos])[1]


def _xgboost_categories(model, n_features):
    """Per feature, the categories a DataFrame had at training time (XGBoost >= 3.1
    stores them as "cats" and re-codes new DataFrames by them), or None."""
    cats = model.get("cats")
    categories = [None] * n_features
    if not cats or not cats.get("enc"):
        return categories
    enc = cats["enc"]
    if len(enc) != n_features:
        raise ValueError(f"cats lists {len(enc)} features for {n_features}")
    for d, entry in enumerate(enc):
        offsets = np.asarray(entry.get("offsets", []), dtype=np.int64)
        values = np.asarray(entry.get("values", []))
        if offsets.size:  # strings: UTF-8 bytes (as int8) cut at the offsets
            raw = values.astype(np.int64).astype(np.uint8).tobytes()
            if offsets[0] != 0 or np.any(np.diff(offsets) < 0) or offsets[-1] != len(raw):
                raise ValueError(f"cats offsets of feature {d} do not cut its values")
            # XGBoost 3.1-3.2 cut non-ASCII names at character offsets (and re-code them
            # wrongly): such names are not read, the DataFrame's categories are used
            if raw.isascii():
                categories[d] = np.array([raw[a:b].decode("ascii") for a, b in zip(offsets[:-1], offsets[1:])],
                                         dtype=object)
        elif values.size:
            categories[d] = values
    return categories


def split_table_from_xgboost(model, keep_duplicates=False):
    """SplitTable of an XGBoost tree model (Booster, XGBModel, or its JSON).

    XGBoost stores inputs as float32 and goes left when x < t, missing values as
    default_left says; in terms of float64 inputs that is s = x > t2 with
    t2 = float32_threshold(the float32 just below t). A categorical node
    (split_type 1) sends the listed category codes right and every other code,
    negative ones included, left.
    """
    doc = xgboost_model_json(model)
    out = _Splits()
    try:
        learner = doc["learner"]
        booster = learner["gradient_booster"]
        name = booster["name"]
        gbtree = (booster["gbtree"] if name == "dart" else booster)["model"]
        n_features = int(learner["learner_model_param"]["num_feature"])
        for tree in gbtree["trees"]:
            internal = np.flatnonzero(np.asarray(tree["left_children"], dtype=np.int64) >= 0)
            t32 = np.asarray(tree["split_conditions"], dtype=np.float32)[internal]
            below = np.nextafter(t32, np.float32(-np.inf))  # float32(x) >= t  <=>  float32(x) > below
            out.add(np.asarray(tree["split_indices"], dtype=np.int64)[internal],
                    float32_threshold(below.astype(np.float64)),
                    np.asarray(tree["default_left"], dtype=np.int64)[internal] == 0,
                    *_xgboost_sets(tree, internal))
        types = learner.get("feature_types") or []
        categorical = np.array([t == "c" for t in types], dtype=bool) if len(types) == n_features else None
        encoding = InputEncoding(n_features, categorical=categorical,
                                 categories=_xgboost_categories(gbtree, n_features), unknown="error")
    except (KeyError, TypeError, IndexError, ValueError, AttributeError, UnicodeDecodeError) as exc:
        raise ValueError(f"malformed XGBoost model JSON: {type(exc).__name__}: {exc}") from exc
    if name not in ("gbtree", "dart"):
        raise TypeError(f"XGBoost booster {name!r} has no trees; gbtree or dart models are needed")
    return out.table(n_features, keep_duplicates, supports_missing=True, encoding=encoding)


def _is_lightgbm(obj):
    return (type(obj).__module__ or "").startswith("lightgbm")


def lightgbm_model_dump(model):
    """``dump_model()`` of a LightGBM Booster or LGBMModel (a dict is taken as is)."""
    if isinstance(model, dict):
        return model
    booster = getattr(model, "booster_", model)
    return booster.dump_model()


def _lightgbm_nodes(node, out):
    """Internal nodes of a dumped LightGBM tree, iteratively (trees can be deep)."""
    stack = [node]
    while stack:
        node = stack.pop()
        if "split_index" not in node:
            if "leaf_index" not in node and "leaf_value" not in node:
                raise KeyError("node has neither split_index nor leaf_value")
            continue
        out.append(node)
        stack.append(node["right_child"])
        stack.append(node["left_child"])


def _lightgbm_set(threshold):
    """Category codes of a '==' node's threshold "a||b||c"."""
    codes = [int(c) for c in str(threshold).split("||")]
    if min(codes) < 0:
        raise ValueError(f"negative category in threshold {threshold!r}")
    return codes


def split_table_from_lightgbm(model, keep_duplicates=False):
    """SplitTable of a LightGBM model (Booster, LGBMModel, or its ``dump_model()``).

    LightGBM goes left when x <= threshold (float64). Missing values: with
    missing_type "NaN" they follow default_left; with "None" a NaN is read as 0.0;
    with "Zero" zero (|x| <= 1e-35) and NaN are missing and follow default_left
    (the table's encoding turns such zeros into NaN). A categorical node
    (decision_type "==") sends the listed categories left and every other value
    right, NaN and negative ones included.
    """
    dump = lightgbm_model_dump(model)
    try:
        n_features = int(dump["max_feature_idx"]) + 1
        nodes = []
        for tree in dump["tree_info"]:
            _lightgbm_nodes(tree["tree_structure"], nodes)
        features = np.array([int(n["split_feature"]) for n in nodes], dtype=np.int64)
        decision = np.array([n["decision_type"] for n in nodes], dtype=object)
        if not np.all((decision == "<=") | (decision == "==")):
            raise ValueError("decision_type must be '<=' or '=='")
        cat = decision == "=="
        thresholds = np.array([0.0 if c else float(n["threshold"]) for n, c in zip(nodes, cat)],
                              dtype=np.float64)
        sets = [_lightgbm_set(n["threshold"]) for n, c in zip(nodes, cat) if c]
        kinds = np.array([n["missing_type"] for n in nodes], dtype=object)
        if not np.all(np.isin(kinds, ["None", "Zero", "NaN"])):
            raise ValueError("missing_type must be 'None', 'Zero' or 'NaN'")
        default_left = np.array([bool(n["default_left"]) for n in nodes], dtype=bool)
        pandas_categorical = dump.get("pandas_categorical")
        if pandas_categorical is not None and not all(isinstance(c, list) for c in pandas_categorical):
            raise ValueError("pandas_categorical must be a list of category lists")
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"malformed LightGBM model dump: {type(exc).__name__}: {exc}") from exc
    zero = ~cat & (kinds == "Zero")
    zero_missing = np.zeros(n_features, dtype=bool)
    zero_missing[features[zero]] = True
    if np.any(zero_missing[features[~cat & ~zero]]):
        raise ValueError("malformed LightGBM model dump: a feature mixes missing_type 'Zero' "
                         "with other missing types")
    missing_right = np.where(cat, True, np.where(kinds == "None", 0.0 > thresholds, ~default_left))
    sizes = np.zeros(len(nodes), dtype=np.int64)
    sizes[cat] = [len(c) for c in sets]
    out = _Splits()
    out.add(features, thresholds, missing_right, np.where(cat, NOT_IN_SET, NUMERIC), sizes,
            np.array([c for codes in sets for c in codes], dtype=np.int64))
    encoding = InputEncoding(n_features, zero_missing=zero_missing,
                             pandas_categorical=pandas_categorical, unknown="missing")
    return out.table(n_features, keep_duplicates, supports_missing=True, encoding=encoding)
