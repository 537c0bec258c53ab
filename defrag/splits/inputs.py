"""Inputs as the source model reads them: validated float64 arrays, category codes.

A categorical feature's values become category codes (integers >= 0 as floats,
NaN for missing) exactly as the source library codes them: scikit-learn's
HistGradientBoosting looks every value up in its encoder's categories (an unseen
one is missing), XGBoost and LightGBM take numeric inputs as codes and code a
pandas categorical column by its training categories (XGBoost >= 3.1 re-codes by
category; LightGBM keeps ``pandas_categorical``). LightGBM features with
``missing_type`` Zero also read zero as missing: such values become NaN here.
LightGBM also reads |x| <= 1e-35 as 0 on every feature, a NumPy array of integers
as float32, and a categorical value as its C int cast (truncated toward zero);
its encoding does the same (``lightgbm_reads``).
"""
import copy

import numpy as np

from ..utils.validation import as_2d_float, check_not_temporal, check_numeric_column

# LightGBM's kZeroThreshold (1e-35f): |x| <= this counts as zero.
ZERO_THRESHOLD = float(np.float32(1e-35))


def _is_frame(X):
    return hasattr(X, "columns") and hasattr(X, "iloc")


def _is_category(col):
    return getattr(col.dtype, "name", "") == "category"


def category_label(value):
    """How a category prints: integral floats without '.0'."""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


def _codes_of(values, categories):
    """Position of each value in categories (-1: not there), vectorised.

    values: a 1-D array or pandas Series; categories: a 1-D array of unique values."""
    cats = np.asarray(categories)
    if _is_category(values):  # look up each category once, then gather by code
        import pandas as pd

        per_category = pd.Index(cats).get_indexer(values.cat.categories)
        codes = values.cat.codes.to_numpy()
        return np.where(codes >= 0, per_category[np.maximum(codes, 0)], -1)
    vals = np.asarray(values)
    if np.issubdtype(vals.dtype, np.number) and np.issubdtype(cats.dtype, np.number) and cats.size:
        order = np.argsort(cats, kind="stable")
        ordered = cats[order].astype(np.float64)
        v = vals.astype(np.float64)
        pos = np.minimum(np.searchsorted(ordered, v), ordered.size - 1)
        return np.where(ordered[pos] == v, order[pos], -1)
    import pandas as pd

    return pd.Index(cats).get_indexer(pd.Index(np.asarray(values, dtype=object)))


def category_text(value, what="a categorical value"):
    """The text CatBoost hashes for a categorical value: a string as it is, an integer in
    decimal, a boolean as 1 / 0. defrag reads numeric columns as float64, so an integral
    float stands for the integer CatBoost was given; other numbers CatBoost refuses as
    categories, and so does this (ValueError)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        if np.isfinite(value) and float(value).is_integer():
            return str(int(value))
        raise ValueError(f"{what} is {value!r}: CatBoost reads a categorical feature's values "
                         "as integers or text")
    if isinstance(value, bytes):
        return value.decode("utf-8")
    return str(value)


class InputEncoding:
    """How one source model reads each input column.

    Attributes
    ----------
    n_features : int
    categorical : bool array (n_features,)
        The model splits the feature by category sets; inputs that are not looked
        up (below) must then be integer codes.
    categories : list of (None or 1-D array)
        Per feature, the categories in code order (a value's code is its position),
        when known: from the model, or from the DataFrame at fit time.
    lookup_numbers : bool
        Numeric inputs of a feature with categories are values to look up
        (HistGradientBoosting) rather than codes (XGBoost, LightGBM).
    unknown : {"missing", "error"}
        What a value not among the categories becomes: missing (HistGradientBoosting,
        LightGBM) or a ValueError (XGBoost refuses categories it was not trained with).
    zero_missing : bool array (n_features,)
        Zero (|x| <= 1e-35) counts as missing (LightGBM ``missing_type`` Zero).
    pandas_categorical : list of lists or None
        LightGBM's categories of the training DataFrame's categorical columns, in
        column order; ``bind`` places them on the columns of the X given at fit time.
    lightgbm_reads : bool
        Read numbers as LightGBM's predictor does: |x| <= 1e-35 is 0 (its row readers
        drop such values), an array of integers (not a DataFrame) is rounded to float32
        (LightGBM converts any array that is not float32 / float64 so), and a categorical
        value is truncated toward zero (its int cast: -0.5 and 2.7 are codes 0 and 2)
        instead of refused.
    text_labels : bool
        A value is the category whose label has its text: 20 and "20" are one category
        (CatBoost hashes a value's text; its rules written to JSON read labels so).
    boolean : bool array (n_features,)
        The column was boolean in the X given at fit time (``bind``), read as 0 and 1:
        the SQL export compares such a column with TRUE / FALSE, since a database's
        BOOLEAN column does not compare with a number.
    """

    def __init__(self, n_features, categorical=None, categories=None, lookup_numbers=False,
                 unknown="missing", zero_missing=None, pandas_categorical=None, lightgbm_reads=False,
                 text_labels=False, boolean=None):
        self.n_features = int(n_features)

        def mask(a):
            m = np.zeros(self.n_features, dtype=bool) if a is None else np.asarray(a, dtype=bool)
            if m.shape != (self.n_features,):
                raise ValueError(f"expected {self.n_features} per-feature flags; got shape {m.shape}")
            return m

        self.categorical = mask(categorical)
        self.zero_missing = mask(zero_missing)
        self.boolean = mask(boolean)
        self.categories = [None] * self.n_features if categories is None else list(categories)
        if len(self.categories) != self.n_features:
            raise ValueError(f"expected {self.n_features} category lists; got {len(self.categories)}")
        for d, cats in enumerate(self.categories):
            if cats is not None and len(set(np.asarray(cats, dtype=object).tolist())) != len(cats):
                raise ValueError(f"the categories of feature {d} are not unique")
        self.lookup_numbers = bool(lookup_numbers)
        if unknown not in ("missing", "error"):
            raise ValueError(f"unknown must be 'missing' or 'error'; got {unknown!r}")
        self.unknown = unknown
        self.pandas_categorical = pandas_categorical
        self.lightgbm_reads = bool(lightgbm_reads)
        self.text_labels = bool(text_labels)

    @property
    def trivial(self):
        """Every column is read as the number it holds."""
        return not (self.categorical.any() or self.zero_missing.any() or self.lightgbm_reads
                    or any(c is not None for c in self.categories))

    def with_categorical(self, categorical):
        new = copy.copy(self)
        new.categorical = np.asarray(categorical, dtype=bool).copy()
        if new.categorical.shape != (self.n_features,):
            raise ValueError("categorical must hold one flag per feature")
        return new

    def category_names(self, feature):
        """Printable names of feature's codes (list indexed by code), or None."""
        cats = self.categories[feature]
        return None if cats is None else [category_label(c) for c in cats]

    def bind(self, X):
        """The encoding for a model fitted on X's columns: LightGBM's pandas categories
        go to X's categorical columns, in order; a categorical column whose categories
        the model does not store keeps the ones it has at fit time (its codes)."""
        new = copy.copy(self)
        new.categories = list(self.categories)
        new.pandas_categorical = None
        new.boolean = _boolean_columns(X, self.n_features)
        if not _is_frame(X):
            return new
        if X.shape[1] != self.n_features:
            return new  # the caller reports the mismatch
        cat_cols = [j for j in range(X.shape[1]) if _is_category(X.iloc[:, j])]
        if self.pandas_categorical is not None:
            if len(cat_cols) != len(self.pandas_categorical):
                raise ValueError(
                    f"X has {len(cat_cols)} categorical columns but the LightGBM model was "
                    f"trained with {len(self.pandas_categorical)}"
                )
            for j, cats in zip(cat_cols, self.pandas_categorical):
                new.categories[j] = np.asarray(cats, dtype=object)
            return InputEncoding(new.n_features, new.categorical, new.categories, new.lookup_numbers,
                                 new.unknown, new.zero_missing,  # checks the categories
                                 lightgbm_reads=new.lightgbm_reads, text_labels=new.text_labels,
                                 boolean=new.boolean)
        for j in cat_cols:
            if new.categories[j] is None and self.categorical[j]:
                new.categories[j] = np.asarray(X.iloc[:, j].cat.categories)
        return new

    def category_codes(self, values, feature, name, what):
        """The codes (float64, NaN for missing) of a categorical column's values, as the
        source model codes them; a source with its own coding overrides this
        (sources/catboost.py hashes the values). name, what: for messages."""
        missing = _missing(values)
        if self.text_labels:  # a value's text as CatBoost writes it (missing stays missing)
            import pandas as pd

            said = f"{what} column {name!r} holds a value that"
            rows, distinct = pd.factorize(np.asarray(values, dtype=object)[~missing])
            texts = np.array([category_text(v, said) for v in distinct.tolist()] + [None], dtype=object)
            text = np.full(missing.shape, None, dtype=object)
            text[~missing] = texts[rows]  # (each distinct value's text once)
            labels = np.array([category_text(c) for c in np.asarray(self.categories[feature], dtype=object).tolist()],
                              dtype=object)
            codes = _codes_of(text, labels).astype(np.float64)
        else:
            codes = _codes_of(values, self.categories[feature]).astype(np.float64)
        unknown = (codes < 0) & ~missing
        if unknown.any() and self.unknown == "error":
            seen = list(dict.fromkeys(np.asarray(values, dtype=object)[unknown].tolist()))[:5]
            raise ValueError(
                f"{what} column {name!r} has categories the model was not trained with: "
                f"{', '.join(map(str, seen))}"
            )
        codes[missing | unknown] = np.nan
        return codes

    def transform(self, X, what="X", allow_nan=True, allow_inf=False):
        """X as the model reads it: C-contiguous float64, categorical columns as codes,
        zero as NaN where zero is missing. Never modifies X."""
        if self.trivial:
            return np.ascontiguousarray(as_2d_float(X, what, allow_nan, allow_inf))
        looked_up = np.zeros(self.n_features, dtype=bool)
        labels = list(range(self.n_features))  # how messages name a column
        if _is_frame(X):
            if X.shape[1] != self.n_features:
                raise ValueError(f"{what} has {X.shape[1]} features but the model has {self.n_features}")
            labels = [repr(c) for c in X.columns]
            arr = np.empty(X.shape, dtype=np.float64)
            for j in range(self.n_features):
                col = X.iloc[:, j]
                check_not_temporal(col, X.columns[j], what)  # not a category either
                if self.categories[j] is not None and (
                        _is_category(col) or col.dtype.kind == "O" or self.lookup_numbers):
                    # (kind O: object columns and pandas' string dtypes, pandas 3's default)
                    arr[:, j] = self.category_codes(col, j, X.columns[j], what)
                    looked_up[j] = True
                elif _is_category(col):
                    codes = col.cat.codes.to_numpy().astype(np.float64)
                    arr[:, j] = np.where(codes < 0, np.nan, codes)
                else:
                    check_numeric_column(col, X.columns[j], what)
                    try:
                        arr[:, j] = col.to_numpy(dtype=np.float64, na_value=np.nan)
                    except (TypeError, ValueError) as exc:
                        raise TypeError(
                            f"{what} column {X.columns[j]!r} is not numeric (nor a categorical "
                            "column of a model with categorical features)") from exc
            arr = as_2d_float(arr, what, allow_nan, allow_inf)
        else:
            if self.lightgbm_reads and np.asarray(X).dtype.kind in "iu":
                X = np.asarray(X).astype(np.float32)  # as LightGBM reads an integer array
            arr = np.array(as_2d_float(X, what, allow_nan, allow_inf), dtype=np.float64, order="C")
            if arr.shape[1] != self.n_features:
                raise ValueError(f"{what} has {arr.shape[1]} features but the model has {self.n_features}")
            if self.lookup_numbers:
                for j in range(self.n_features):
                    if self.categories[j] is not None:
                        arr[:, j] = self.category_codes(arr[:, j], j, f"x{j}", what)
                        looked_up[j] = True
        for j in np.flatnonzero(self.categorical & ~looked_up):
            v = arr[:, j]
            if self.lightgbm_reads:
                arr[:, j] = np.trunc(v)  # LightGBM's int cast (NaN stays NaN)
            elif np.any(v[~np.isnan(v)] != np.trunc(v[~np.isnan(v)])):
                raise ValueError(f"{what} column {labels[j]} is categorical: its values must be integer "
                                 "category codes (or NaN)")
        if self.zero_missing.any():
            sub = arr[:, self.zero_missing]
            sub[np.abs(sub) <= ZERO_THRESHOLD] = np.nan
            arr[:, self.zero_missing] = sub
        if self.lightgbm_reads:
            arr[np.abs(arr) <= ZERO_THRESHOLD] = 0.0  # LightGBM drops such values: they read as 0
        return np.ascontiguousarray(arr)


def _boolean_columns(X, n_features):
    """Which of X's columns are boolean (NumPy's bool, pandas' nullable boolean), as the
    flags of n_features features (none where X's width is not that)."""
    if _is_frame(X):
        kinds = [getattr(dtype, "kind", "") for dtype in X.dtypes]
    else:
        dtype = getattr(X, "dtype", None)  # an array (a list of rows has none: numbers)
        kinds = [getattr(dtype, "kind", "")] * (X.shape[1] if getattr(X, "ndim", 0) == 2 else 0)
    flags = np.array([kind == "b" for kind in kinds], dtype=bool)
    return flags if flags.shape == (n_features,) else np.zeros(n_features, dtype=bool)


def _missing(values):
    if hasattr(values, "isna"):
        return values.isna().to_numpy()
    vals = np.asarray(values)
    if np.issubdtype(vals.dtype, np.number):
        return np.isnan(vals.astype(np.float64))
    import pandas as pd

    return pd.isna(vals)
