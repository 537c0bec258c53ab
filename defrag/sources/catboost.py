"""CatBoost models (CatBoostClassifier / CatBoostRegressor, or a plain CatBoost such as
``CatBoost().load_model("model.cbm")``), read from CatBoost's JSON export
(``save_model(path, format="json")``).

CatBoost grows symmetric (oblivious) trees: level d of a tree tests one split, the
same at every node of the level, and the leaf a row reaches is ``sum_d bit_d << d``
where bit_d is the outcome of ``splits[d]`` (its ``leaf_values`` hold one value per
leaf and model dimension, leaf-major). Each tree becomes a full binary Tree whose
root tests the last split and whose deepest level tests the first, so that leaf i of
CatBoost is node ``2**depth - 1 + i`` (heap order, children 2j+1 / 2j+2).

Numeric splits (split_type FloatFeature): CatBoost reads inputs as float32 and sets
the bit when ``float32(x) > border``; in float64 terms that is ``x > t`` with
``t = float32_threshold(border)``. A missing value (NaN) goes as the feature's
``nan_value_treatment`` says (catboost/libs/model/cpu/quantization.h): AsFalse (NaN
read as -inf: nan_mode "Min", the default) left, AsTrue (+inf: nan_mode "Max")
right, and AsIs, or a feature with ``has_nans`` false (nan_mode "Forbidden", or no
NaN in training), compares NaN as it is: ``NaN > border`` is false, left.

One-hot splits (split_type OneHotFeature): the bit is set when the value's hash
equals the split's ``value``. CatBoost hashes a categorical value's text (strings as
they are, integers in decimal, booleans as 1 / 0) with CityHash64 (version 1.0, low
32 bits). Codes here are positions in the list of the hash values the model's
one-hot splits use for the feature; a split is the category set {its code} (IN_SET,
right); a value whose hash no split uses, or a missing one, is an unknown category:
left at every one-hot split, as in CatBoost. The encoding hashes the inputs itself
(``CatBoostEncoding``), so a category is read right whatever the data at fit time;
binding it to X names the codes by X's values.

Splits on CTR features (target statistics, counters, feature combinations) are
refused: see ``ctr_message``.

The raw prediction is ``scale * sum of leaf values + bias`` (``scale_and_bias``):
leaf values are stored times scale, and the first tree's leaves carry the bias, so
the leaves a row reaches add up to CatBoost's RawFormulaVal.
"""
import os
import tempfile

import numpy as np
from sklearn.exceptions import NotFittedError

from ..splits import IN_SET, NUMERIC, InputEncoding, float32_threshold
from ..splits.inputs import category_text
from .base import MAX_FEATURES, SourceModel, SplitCollector, Tree, as_integer, check_count, parsed_json

_MALFORMED = (KeyError, TypeError, IndexError, ValueError, AttributeError, OverflowError)

# CatBoost's deepest symmetric tree (its depth option is at most 16); deeper trees in a
# model file are malformed (a tree of depth d has 2**(d + 1) - 1 nodes here).
MAX_DEPTH = 16
FLT_MAX = float(np.finfo(np.float32).max)
NAN_TREATMENTS = ("AsIs", "AsFalse", "AsTrue")
CLASSIFICATION_LOSSES = ("Logloss", "CrossEntropy", "MultiClass", "MultiClassOneVsAll")


def accepts(est):
    return (type(est).__module__ or "").startswith("catboost")


# ------------------------------------------------------------------ category hashes
# CityHash64 as of CityHash 1.0 (Pike & Alakuijala, Google, MIT licence), which CatBoost
# keeps in util/digest/city.cpp (later CityHash releases give other values); CatBoost's
# CalcCatFeatureHash is its low 32 bits. Written here from the algorithm, on Python ints
# (categories are hashed once per distinct value, so speed does not matter).
_M64 = (1 << 64) - 1
_K0, _K1, _K2, _K3 = 0xC3A5C85C97CB3127, 0xB492B66FBE98F273, 0x9AE16A3B2F90404F, 0xC949D7C7509E6557
_KMUL = 0x9DDFEA08EB382D69


def _word64(s, i):
    return int.from_bytes(s[i:i + 8], "little")


def _word32(s, i):
    return int.from_bytes(s[i:i + 4], "little")


def _rotate(v, shift):
    return v if shift == 0 else ((v >> shift) | (v << (64 - shift))) & _M64


def _shift_mix(v):
    return v ^ (v >> 47)


def _hash128_to_64(low, high):
    a = ((low ^ high) * _KMUL) & _M64
    a ^= a >> 47
    b = ((high ^ a) * _KMUL) & _M64
    b ^= b >> 47
    return (b * _KMUL) & _M64


def _weak_hash32(s, i, a, b):
    """(a, b) mixed with the 32 bytes of s at i."""
    w, x, y, z = _word64(s, i), _word64(s, i + 8), _word64(s, i + 16), _word64(s, i + 24)
    a = (a + w) & _M64
    b = _rotate((b + a + z) & _M64, 21)
    c = a
    a = (a + x + y) & _M64
    b = (b + _rotate(a, 44)) & _M64
    return (a + z) & _M64, (b + c) & _M64


def _city64_short(s, n):
    if n > 8:
        a, b = _word64(s, 0), _word64(s, n - 8)
        return _hash128_to_64(a, _rotate((b + n) & _M64, n)) ^ b
    if n >= 4:
        return _hash128_to_64((n + (_word32(s, 0) << 3)) & _M64, _word32(s, n - 4))
    if n > 0:
        y = s[0] + (s[n >> 1] << 8)
        z = n + (s[n - 1] << 2)
        return (_shift_mix(((y * _K2) ^ (z * _K3)) & _M64) * _K2) & _M64
    return _K2


def _city64_17_to_64(s, n):
    if n <= 32:
        a = (_word64(s, 0) * _K1) & _M64
        b = _word64(s, 8)
        c = (_word64(s, n - 8) * _K2) & _M64
        d = (_word64(s, n - 16) * _K0) & _M64
        return _hash128_to_64((_rotate((a - b) & _M64, 43) + _rotate(c, 30) + d) & _M64,
                              (a + _rotate(b ^ _K3, 20) - c + n) & _M64)
    z = _word64(s, 24)
    a = (_word64(s, 0) + (n + _word64(s, n - 16)) * _K0) & _M64
    b = _rotate((a + z) & _M64, 52)
    c = _rotate(a, 37)
    a = (a + _word64(s, 8)) & _M64
    c = (c + _rotate(a, 7)) & _M64
    a = (a + _word64(s, 16)) & _M64
    vf, vs = (a + z) & _M64, (b + _rotate(a, 31) + c) & _M64
    a = (_word64(s, 16) + _word64(s, n - 32)) & _M64
    z = _word64(s, n - 8)
    b = _rotate((a + z) & _M64, 52)
    c = _rotate(a, 37)
    a = (a + _word64(s, n - 24)) & _M64
    c = (c + _rotate(a, 7)) & _M64
    a = (a + _word64(s, n - 16)) & _M64
    wf, ws = (a + z) & _M64, (b + _rotate(a, 31) + c) & _M64
    r = _shift_mix(((vf + ws) * _K2 + (wf + vs) * _K0) & _M64)
    return (_shift_mix((r * _K0 + vs) & _M64) * _K2) & _M64


def city_hash64(data):
    """CityHash64 (version 1.0) of bytes."""
    s, n = bytes(data), len(data)
    if n <= 16:
        return _city64_short(s, n)
    if n <= 64:
        return _city64_17_to_64(s, n)
    # longer: the last 64 bytes seed 56 bytes of state, then 64-byte chunks from the start
    x = _word64(s, 0)
    y = _word64(s, n - 16) ^ _K1
    z = _word64(s, n - 56) ^ _K0
    v = _weak_hash32(s, n - 64, n, y)
    w = _weak_hash32(s, n - 32, (n * _K1) & _M64, _K0)
    z = (z + _shift_mix(v[1]) * _K1) & _M64
    x = (_rotate((z + x) & _M64, 39) * _K1) & _M64
    y = (_rotate(y, 33) * _K1) & _M64
    for i in range(0, (n - 1) & ~63, 64):
        x = (_rotate((x + y + v[0] + _word64(s, i + 16)) & _M64, 37) * _K1) & _M64
        y = (_rotate((y + v[1] + _word64(s, i + 48)) & _M64, 42) * _K1) & _M64
        x ^= w[1]
        y ^= v[0]
        z = _rotate(z ^ w[0], 33)
        v = _weak_hash32(s, i, (v[1] * _K1) & _M64, (x + w[0]) & _M64)
        w = _weak_hash32(s, i + 32, (z + w[1]) & _M64, y)
        x, z = z, x
    return _hash128_to_64((_hash128_to_64(v[0], w[0]) + _shift_mix(y) * _K1 + z) & _M64,
                          (_hash128_to_64(v[1], w[1]) + x) & _M64)


def category_hash(value, what="a categorical value"):
    """CatBoost's hash of a categorical value (uint32): CityHash64 of its text, low 32 bits."""
    return city_hash64(category_text(value, what).encode("utf-8")) & 0xFFFFFFFF


# ------------------------------------------------------------------ the input encoding
def _is_category(values):
    return getattr(values.dtype, "name", "") == "category"


def _distinct(values):
    """(distinct present values, the index of each row's value among them, -1 where missing)
    of one column: a pandas categorical or object Series, or a float64 array."""
    if _is_category(values):
        return np.asarray(values.cat.categories, dtype=object), values.cat.codes.to_numpy().astype(np.int64)
    arr = np.asarray(values)
    if arr.dtype.kind in "biuf":
        rows = np.full(arr.shape[0], -1, dtype=np.int64)
        present = ~np.isnan(arr) if arr.dtype.kind == "f" else np.ones(arr.shape[0], dtype=bool)
        uniques, rows[present] = np.unique(arr[present], return_inverse=True)
        return uniques.astype(object), rows
    import pandas as pd

    rows, uniques = pd.factorize(arr.astype(object), use_na_sentinel=True)
    return np.asarray(uniques, dtype=object), rows.astype(np.int64)


class CatBoostEncoding(InputEncoding):
    """The input encoding of a CatBoost model: a categorical feature's values are hashed as
    CatBoost hashes them, and a value's code is the position of its hash in
    ``hashes[feature]`` (the hash values the model's one-hot splits use; NaN, an unknown
    category, when none does).

    ``categories[feature]`` names the codes once the encoding is bound to X: the values of
    X with those hashes, or ``<CatBoost hash h>`` for a hash no value of X has (until then
    None, so that the model stores no categories to impose on a data file). A bound
    encoding written to JSON (rule exports) keeps the names and reads values by name, as
    other encodings do.
    """


    def __init__(self, n_features, categorical, hashes, feature_names=None):
        super().__init__(n_features, categorical=categorical, lookup_numbers=True, unknown="missing",
                         text_labels=True)  # (written to JSON: a label read by its text, as hashed)
        self.hashes = [None if h is None else np.asarray(h, dtype=np.uint32) for h in hashes]
        if len(self.hashes) != self.n_features:
            raise ValueError(f"expected {self.n_features} hash lists; got {len(self.hashes)}")
        self.feature_names = feature_names

    @property
    def _hashed(self):
        return [j for j, h in enumerate(self.hashes) if h is not None]

    def category_codes(self, values, feature, name, what):  # InputEncoding.transform's coding
        distinct, rows = _distinct(values)
        position = {int(h): i for i, h in enumerate(self.hashes[feature])}
        per_value = np.array([position.get(category_hash(v, f"{what} column {name!r} holds a value that"), -1)
                              for v in distinct.tolist()] + [-1], dtype=np.float64)
        codes = per_value[np.where(rows >= 0, rows, distinct.size)]
        codes[codes < 0] = np.nan
        return codes

    def bind(self, X):
        """This encoding with the codes named by the values of X that have their hashes.
        ValueError when X's columns are not the model's features in order: CatBoost takes a
        DataFrame's columns by name, defrag by position."""
        new = super().bind(X)
        if hasattr(X, "columns") and hasattr(X, "iloc"):
            names = [str(c) for c in X.columns]
            if self.feature_names is not None and len(names) == self.n_features and names != self.feature_names:
                raise ValueError(f"X's columns ({', '.join(names[:10])}) are not the CatBoost model's "
                                 f"features in its order ({', '.join(self.feature_names[:10])}); "
                                 "pass X[model.feature_names_]")
            fits = X.shape[1] == self.n_features
            column = (lambda j: X.iloc[:, j]) if fits else None
        else:
            arr = np.asarray(X)
            fits = arr.ndim == 2 and arr.shape[1] == self.n_features
            column = (lambda j: arr[:, j]) if fits else None
        for j in self._hashed:
            found = {}
            if fits and self.hashes[j].size:
                for v in _distinct(column(j))[0].tolist():
                    try:
                        found.setdefault(category_hash(v), v)
                    except ValueError:
                        continue  # not a category CatBoost reads: transform says so
            new.categories[j] = np.array([found.get(h, f"<CatBoost hash {h}>") for h in self.hashes[j].tolist()],
                                         dtype=object)
        return new

    def transform(self, X, what="X", allow_nan=True, allow_inf=False):
        if any(self.categories[j] is None for j in self._hashed):
            return self.bind(X).transform(X, what, allow_nan, allow_inf)
        return super().transform(X, what, allow_nan, allow_inf)


# ------------------------------------------------------------------ the model document
def model_json(model):
    """The parsed JSON export of a CatBoost model (a dict, or JSON text, is taken as is)."""
    document = parsed_json(model, "CatBoost")
    if document is not None:
        return document

    if hasattr(model, "is_fitted") and not model.is_fitted():
        raise NotFittedError(f"this {type(model).__name__} is not fitted yet; call fit first")
    with tempfile.TemporaryDirectory(prefix="defrag-catboost-") as tmp:
        path = os.path.join(tmp, "model.json")
        model.save_model(path, format="json")
        try:
            with open(path, "rb") as f:
                return model_json(f.read())
        except OSError as exc:
            raise ValueError(f"CatBoost wrote no model JSON: {exc}") from exc


def ctr_message(names):
    """Why a model with CTR splits cannot be read, and what to do instead."""
    which = f" ({', '.join(repr(n) for n in names)})" if names else ""
    return (
        "this CatBoost model splits on CTR features of categorical features" + which + ": target "
        "statistics, counters or feature combinations that CatBoost computes from the training "
        "labels it stores in the model, not a threshold or a category set on an input column, so "
        "defrag cannot write them as rules. Retrain with one_hot_max_size at least the number of "
        "categories of these features (their splits then become category sets), or code them as numbers"
    )


def _feature_columns(entries, kind):
    """{feature_index: flat_feature_index} of features_info's list of one kind."""
    if not isinstance(entries, list):
        raise TypeError(f"features_info.{kind} must be a list")
    out = {}
    for e in entries:
        index = check_count(e["feature_index"], f"{kind} feature_index", MAX_FEATURES)
        flat = check_count(e["flat_feature_index"], f"{kind} flat_feature_index", MAX_FEATURES - 1)
        if index in out:
            raise ValueError(f"{kind} lists feature_index {index} twice")
        out[index] = flat
    return out


def _check_readable(doc):
    """TypeError / ValueError for a well-formed model that defrag cannot write as rules:
    non-symmetric trees, text or embedding features, CTR splits. (Malformed parts are
    left to the reader, which names them.)"""
    if not isinstance(doc, dict):
        return
    info = doc.get("features_info")
    info = info if isinstance(info, dict) else {}
    for kind in ("text_features", "embedding_features"):
        if info.get(kind):
            raise ValueError(f"this CatBoost model has {kind.replace('_', ' ')}: defrag reads numeric "
                             "and one-hot categorical features only")
    trees = doc.get("oblivious_trees")
    if trees is None and "trees" in doc:
        raise TypeError("this CatBoost model has non-symmetric trees (grow_policy Depthwise or "
                        "Lossguide); defrag reads CatBoost's symmetric trees (grow_policy "
                        "SymmetricTree, the default)")
    splits = [s for t in (trees if isinstance(trees, list) else []) if isinstance(t, dict)
              for s in (t.get("splits") if isinstance(t.get("splits"), list) else [])]
    if any(isinstance(s, dict) and s.get("split_type") == "OnlineCtr" for s in splits):
        raise ValueError(ctr_message(_ctr_feature_names(info)))


def _ctr_feature_names(info):
    """Names of the categorical features the model's CTRs are built on (as far as the
    JSON says)."""
    cats = info.get("categorical_features")
    names = {}
    for e in cats if isinstance(cats, list) else []:
        if isinstance(e, dict):
            names[e.get("feature_index")] = e.get("feature_id") or f"x{e.get('flat_feature_index')}"
    out = []
    ctrs = info.get("ctrs")
    for ctr in ctrs if isinstance(ctrs, list) else []:
        elements = ctr.get("elements") if isinstance(ctr, dict) else None
        for element in elements if isinstance(elements, list) else []:
            index = element.get("cat_feature_index") if isinstance(element, dict) else None
            name = names.get(index) if isinstance(index, int) else None
            if name is not None and name not in out:
                out.append(name)
    return out


class CatBoostSource(SourceModel):
    library = "CatBoost"
    n_features_field = "features_info, the largest flat_feature_index + 1"
    supports_missing = True
    checks_trees = False  # (in the library: see SourceModel.checks_trees)
    is_boosting = True

    def __init__(self, estimator):
        super().__init__(estimator)
        doc = model_json(estimator)
        _check_readable(doc)
        try:
            self._read_header(doc)
        except _MALFORMED as exc:
            raise ValueError(f"malformed CatBoost model JSON: {type(exc).__name__}: {exc}") from exc

    def _read_header(self, doc):
        if not isinstance(doc, dict):
            raise TypeError("the model JSON must be an object")
        info = doc["features_info"]
        floats = info.get("float_features") or []
        cats = info.get("categorical_features") or []
        self._float_column = _feature_columns(floats, "float_features")
        self._cat_column = _feature_columns(cats, "categorical_features")
        flat = list(self._float_column.values()) + list(self._cat_column.values())
        if len(set(flat)) != len(flat):
            raise ValueError("two features share a flat_feature_index")
        self._n_features = check_count(max(flat, default=-1) + 1, "flat_feature_index + 1", MAX_FEATURES)
        # the training DataFrame's column names (feature_id; "" after training on an array)
        names = {column: e.get("feature_id") for entries, columns in
                 ((floats, self._float_column), (cats, self._cat_column))
                 for e, column in zip(entries, columns.values())}
        named = len(names) == self._n_features and all(isinstance(n, str) and n for n in names.values())
        self._names = [names[j] for j in range(self._n_features)] if named else None
        # a missing value goes right only where CatBoost reads it as +inf
        self._nan_right = {}
        for e in floats:
            treatment = e.get("nan_value_treatment", "AsIs")
            if treatment not in NAN_TREATMENTS:
                raise ValueError(f"nan_value_treatment must be one of {', '.join(NAN_TREATMENTS)}; "
                                 f"got {treatment!r}")
            has_nans = e.get("has_nans", False)
            if not isinstance(has_nans, bool):
                raise ValueError(f"has_nans must be true or false; got {has_nans!r}")
            self._nan_right[as_integer(e["feature_index"], "feature_index")] = has_nans and treatment == "AsTrue"
        self._doc_trees = doc["oblivious_trees"]
        if not isinstance(self._doc_trees, list):
            raise TypeError("oblivious_trees must be a list")
        try:
            scale, bias = doc.get("scale_and_bias", [1.0, [0.0]])
            self._scale = float(scale)
            self._bias = np.asarray(bias, dtype=np.float64).ravel()
        except (TypeError, ValueError) as exc:
            raise ValueError(f"scale_and_bias must be [scale, [bias, ...]] ({exc})") from None
        if not np.isfinite(self._scale) or self._bias.size == 0 or not np.all(np.isfinite(self._bias)):
            raise ValueError("scale_and_bias must hold a finite scale and one finite bias per dimension")
        if self._bias.size > MAX_FEATURES:
            raise ValueError(f"scale_and_bias has {self._bias.size} biases")
        model_info = doc.get("model_info") or {}
        self._loss = ((model_info.get("params") or {}).get("loss_function") or {}).get("type")

    @property
    def feature_names(self):
        """The training DataFrame's column names (None after training on an array)."""
        return self._names

    @property
    def n_features(self):
        return self._n_features

    # -------------------------------------------------------------------- trees
    def _read_trees(self):
        self._hashes = {d: [] for d in self._cat_column}  # one-hot hash values per cat feature
        try:
            if not all(isinstance(tree, dict) for tree in self._doc_trees):
                raise TypeError("oblivious_trees must be a list of objects")
            levels = [self._splits(tree["splits"]) for tree in self._doc_trees]
            for d in self._hashes:
                self._hashes[d] = sorted(set(self._hashes[d]))
            return [self._tree(tree, split_list, i) for i, (tree, split_list) in
                    enumerate(zip(self._doc_trees, levels))]
        except _MALFORMED as exc:
            raise ValueError(f"malformed CatBoost model JSON: {type(exc).__name__}: {exc}") from exc

    def _splits(self, splits):
        """(input column, border, missing goes right, categorical feature index, one-hot
        hash) of each split (the last two -1 for a numeric split)."""
        if not isinstance(splits, list):
            raise TypeError("splits must be a list")
        if len(splits) > MAX_DEPTH:
            raise ValueError(f"a tree has {len(splits)} splits; CatBoost trees have depth at most {MAX_DEPTH}")
        out = []
        for split in splits:
            if not isinstance(split, dict):
                raise TypeError("splits must be a list of objects")
            kind = split["split_type"]
            if kind == "FloatFeature":
                index = as_integer(split["float_feature_index"], "float_feature_index")
                if index not in self._float_column:
                    raise ValueError(f"float_feature_index {index} is not in features_info.float_features")
                border = _number(split["border"], "border")
                if not abs(border) <= FLT_MAX:
                    raise ValueError(f"border must be a finite float32 number; got {split['border']!r}")
                border = float(np.float32(border))  # CatBoost keeps borders as float32
                out.append((self._float_column[index], border, self._nan_right[index], -1, -1))
            elif kind == "OneHotFeature":
                index = as_integer(split["cat_feature_index"], "cat_feature_index")
                if index not in self._cat_column:
                    raise ValueError(f"cat_feature_index {index} is not in features_info.categorical_features")
                value = as_integer(split["value"], "value")
                if not -(2**31) <= value < 2**32:
                    raise ValueError(f"value (a one-hot category hash) must be a 32-bit integer; got {value}")
                value &= 0xFFFFFFFF  # CatBoost compares hashes as int32; JSON may write either sign
                self._hashes[index].append(value)
                out.append((self._cat_column[index], 0.0, False, index, value))
            else:
                raise ValueError(f"split_type {kind!r} is not one defrag reads (FloatFeature, OneHotFeature)")
        return out

    def _tree(self, tree, splits, position):
        """The full binary Tree of one symmetric tree (see the module docstring)."""
        depth = len(splits)
        n_leaves = 1 << depth
        n_internal = n_leaves - 1
        n_dim = self._bias.size
        leaf_values = _numbers(tree["leaf_values"], "leaf_values")
        if leaf_values.shape != (n_leaves * n_dim,):
            raise ValueError(f"leaf_values has {leaf_values.size} entries for {n_leaves} leaves x "
                             f"{n_dim} dimensions (scale_and_bias)")
        if not np.all(np.isfinite(leaf_values)):
            raise ValueError("leaf_values must be finite numbers")
        weights = tree.get("leaf_weights")
        if weights is not None:
            weights = _numbers(weights, "leaf_weights")
            if weights.shape != (n_leaves,) or not np.all(np.isfinite(weights) & (weights >= 0)):
                raise ValueError(f"leaf_weights must hold {n_leaves} non-negative numbers")
        leaves = self._scale * leaf_values.reshape(n_leaves, n_dim)
        if position == 0:
            leaves = leaves + self._bias
        n = n_internal + n_leaves
        node = np.arange(n)
        internal = node < n_internal
        split_of = np.where(internal, depth - 1 - _level(node), 0)  # the root tests the last split
        column = np.array([s[0] for s in splits] or [0], dtype=np.int64)[split_of]
        border = np.array([s[1] for s in splits] or [0.0], dtype=np.float64)[split_of]
        nan_right = np.array([s[2] for s in splits] or [False], dtype=bool)[split_of]
        # a one-hot split's code: the position of its hash among its feature's hashes
        code = np.array([self._hashes[s[3]].index(s[4]) if s[3] >= 0 else -1 for s in splits] or [-1],
                        dtype=np.int64)[split_of]
        one_hot = internal & (code >= 0)
        value = np.full((n, n_dim), np.nan)
        value[n_internal:] = leaves
        return Tree.build(np.where(internal, 2 * node + 1, -1), np.where(internal, 2 * node + 2, -1),
                          column, _border_threshold(border), nan_right & internal, value,
                          kind=np.where(one_hot, IN_SET, NUMERIC), set_sizes=one_hot.astype(np.int64),
                          set_codes=code[one_hot], n_node_samples=_node_counts(weights, depth),
                          n_features=self._n_features, gain=_node_gains(leaves, weights, depth))

    def split_table(self, keep_duplicates=False):
        """The splits of every tree, each level's split once (its nodes all test it), with
        the sum of the level's node gains."""
        out = SplitCollector()
        for tree in self.trees():
            n_internal = tree.n_nodes // 2  # 2**depth - 1, in heap order
            first = (1 << np.arange(_level(n_internal))) - 1  # the first node of each level
            gain = np.bincount(_level(np.arange(n_internal)), weights=tree.gain[:n_internal],
                               minlength=first.size)
            sizes = np.diff(tree.cat_ptr)[first]
            codes = np.concatenate([tree.cat_codes[tree.cat_ptr[j]:tree.cat_ptr[j + 1]] for j in first]) \
                if first.size else np.zeros(0, dtype=np.int64)
            out.add(tree.feature[first], tree.threshold[first], tree.missing_right[first],
                    tree.kind[first], sizes, codes, gain)
        return out.table(self.n_features, keep_duplicates, supports_missing=self.supports_missing,
                         encoding=self.encoding)

    # -------------------------------------------------------------------- inputs
    @property
    def encoding(self):
        self.trees()  # the one-hot hash values come from the trees
        categorical = np.zeros(self._n_features, dtype=bool)
        hashes = [None] * self._n_features
        for d, column in self._cat_column.items():
            categorical[column] = True
            hashes[column] = self._hashes[d]
        return CatBoostEncoding(self._n_features, categorical, hashes, self._names)

    @property
    def has_leaves(self):
        return hasattr(self.estimator, "calc_leaf_indexes")

    def leaves(self, X):
        """Node ids of the leaves CatBoost's calc_leaf_indexes gives."""
        if not self.has_leaves:
            return super().leaves(X)
        if self._cat_column and not hasattr(X, "columns") and np.asarray(X).dtype.kind == "f":
            # floats here are category codes (prototypes pass the coded X for arrays)
            raise TypeError("the leaves of a CatBoost model with categorical features need X as a "
                            "pandas DataFrame or an integer array (CatBoost reads categories as "
                            "integers or text)")
        index = np.asarray(self._catboost_call("calc_leaf_indexes", X), dtype=np.int64)
        trees = self.trees()
        index = index.reshape(index.shape[0], -1)
        if index.shape[1] != len(trees):
            raise ValueError("calc_leaf_indexes and the model JSON disagree on the number of trees")
        first_leaf = np.array([t.n_nodes // 2 for t in trees], dtype=np.int64)  # 2**depth - 1
        if index.size and (index.min() < 0 or np.any(index > first_leaf)):
            raise ValueError("calc_leaf_indexes gives a leaf outside a tree")
        return first_leaf + index

    # -------------------------------------------------------------------- predictions
    @property
    def _plain(self):
        """A plain CatBoost (not the classifier or regressor): its task comes from its loss."""
        return type(self.estimator).__name__ == "CatBoost"

    @property
    def task(self):
        if self._plain:
            return "classification" if self._loss in CLASSIFICATION_LOSSES else "regression"
        return super().task

    def predict(self, X):
        if not self._plain:
            return self._catboost_call("predict", X)
        if self._loss in CLASSIFICATION_LOSSES:
            return self._catboost_call("predict", X, prediction_type="Class")
        return self._catboost_call("predict", X)  # its default: exp(raw) for Poisson / Tweedie

    @property
    def has_proba(self):
        if self._plain:
            return self._loss in CLASSIFICATION_LOSSES and self.classes is not None
        return super().has_proba

    def predict_proba(self, X):
        if self._plain:
            return self._catboost_call("predict", X, prediction_type="Probability")
        return self._catboost_call("predict_proba", X)

    def _catboost_call(self, method, X, **kwargs):
        """A CatBoost method on X, CatBoost's own errors (data it cannot read) as ValueError."""
        try:
            return getattr(self.estimator, method)(X, **kwargs)
        except Exception as exc:  # noqa: BLE001 - catboost.CatBoostError, without importing catboost
            if type(exc).__name__ != "CatBoostError":
                raise
            raise ValueError(f"CatBoost cannot read X: {str(exc).splitlines()[0]}") from None


def _number(value, what):
    if isinstance(value, bool):
        raise ValueError(f"{what} must be a number; got {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{what} must be a number; got {value!r}") from None


def _numbers(values, what):
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{what} must be a list of numbers") from None
    if arr.ndim != 1:
        raise ValueError(f"{what} must be a list of numbers")
    return arr


def _border_threshold(border):
    """Float64 thresholds t with ``x > t  <=>  float32(x) > border``. float32_threshold,
    except at border FLT_MAX (nan_mode "Max" puts a border there): above it float32(x)
    is inf, from FLT_MAX + 2**103 on (half an ulp; the tie rounds to inf)."""
    t = float32_threshold(border)
    return np.where(border == FLT_MAX, np.nextafter(FLT_MAX + 2.0**103, -np.inf), t)


def _level(node):
    """Depth of heap-ordered nodes (node 0 the root, children 2j + 1 and 2j + 2): the
    binary exponent of node + 1, exactly (frexp gives m 2**e with m in [0.5, 1))."""
    return np.frexp(np.asarray(node, dtype=np.float64) + 1)[1].astype(np.int64) - 1


def _node_counts(weights, depth):
    """Training samples per node (leaf_weights summed up the tree), when they are counts."""
    if weights is None or not np.all(weights == np.round(weights)) or weights.sum() >= 2.0**62:
        return None
    counts = [weights]
    for _ in range(depth):  # each level up: siblings (2j + 1, 2j + 2) summed
        counts.append(counts[-1].reshape(-1, 2).sum(axis=1))
    return np.concatenate(counts[::-1]).astype(np.int64)


def _node_gains(leaves, weights, depth):
    """Per node, CatBoost's PredictionValuesChange of its split (catboost/libs/fstr,
    CalcEffect), the split importance CatBoost reports; the model file stores no split
    gain. For the split of level l, the leaves pair off into leaves that differ only in
    that split's outcome (weights w1, w2, values v1, v2, per dimension); a pair adds
    ``w1 w2 / (w1 + w2) (v1 - v2)**2``, the weighted squared deviation of v1 and v2 from
    their weighted mean, to the node above it at level l. Summed over a feature's splits
    this is CatBoost's get_feature_importance (before its scaling to percent). NaN without
    leaf_weights."""
    n_leaves = 1 << depth
    gain = np.zeros(2 * n_leaves - 1)
    if weights is None:
        gain[:n_leaves - 1] = np.nan
        return gain
    index = np.arange(n_leaves)
    for bit in range(depth):  # split `bit` sits at level depth - 1 - bit
        low = index[(index >> bit & 1) == 0]
        high = low | (1 << bit)
        w1, w2 = weights[low], weights[high]
        total = w1 + w2
        pair_weight = np.where(total > 0, w1 * (w2 / np.where(total > 0, total, 1.0)), 0.0)
        with np.errstate(over="ignore", invalid="ignore"):  # leaf values of a file: any finite number
            squares = np.sum((leaves[low] - leaves[high]) ** 2, axis=1)
            pair = np.where(pair_weight > 0, pair_weight * squares, 0.0)
        level = depth - 1 - bit
        np.add.at(gain, (1 << level) - 1 + (low >> (bit + 1)), pair)
    return gain
