"""Checks shared by every estimator: inputs, parameters, feature names."""
import collections
import collections.abc
import numbers
import os
import sys
import warnings

import numpy as np

# the package's folder: a warning is located at the first frame outside it
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def user_stacklevel(skip=()):
    """The ``stacklevel`` of ``warnings.warn`` called by the caller of this function that
    locates the warning at the user's line: the first frame outside defrag (a fit wrapped in
    decorators, or a check called at any depth, warns where the user called defrag) and
    outside the folders of ``skip`` (scikit-learn's, for what its clone calls)."""
    inside = (_PACKAGE_DIR, *skip)
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(inside):
        frame, level = frame.f_back, level + 1
    return level


def check_not_sparse(X, what="X"):
    """TypeError for a SciPy sparse matrix or array: defrag needs dense input."""
    if hasattr(X, "nnz") and hasattr(X, "toarray"):
        raise TypeError(f"{what} is a sparse matrix; sparse input is not supported: "
                        f"pass a dense array ({what}.toarray())")


# what pandas' infer_dtype calls an object column of numbers (or of nothing but missing)
_NUMERIC_OBJECTS = {"integer", "floating", "mixed-integer-float", "decimal", "boolean", "empty"}


def check_not_temporal(col, name, what="X"):
    """TypeError naming the column when a pandas column holds datetimes or time spans
    (datetime64, with or without a time zone, or timedelta64): read as numbers they
    would be nanoseconds, which no rule should print; the user converts them on purpose."""
    kind = getattr(col.dtype, "kind", None)
    if kind in ("M", "m"):
        held = "datetimes" if kind == "M" else "timedeltas"
        raise TypeError(f"{what} column {name!r} holds {held} (dtype {col.dtype}); defrag needs numeric "
                        "features: convert it on purpose (for example to days since a date, a year, "
                        "or seconds)")


def check_numeric_column(col, name, what="X"):
    """TypeError when a pandas column holds text: an object or string column of numeric
    strings would otherwise be parsed as numbers, while a NumPy array of strings is
    refused (as_2d_float); both are refused. Object columns of numbers pass. Datetime
    and timedelta columns are refused (``check_not_temporal``)."""
    check_not_temporal(col, name, what)
    if getattr(col.dtype, "kind", None) not in ("O", "S", "U") or col.dtype.name == "category":
        return  # (categorical columns: the caller codes them or says they are not numeric)
    from pandas.api.types import infer_dtype

    inferred = infer_dtype(col, skipna=True)
    if inferred not in _NUMERIC_OBJECTS:
        raise TypeError(f"{what} column {name!r} holds {inferred} values (dtype {col.dtype}); defrag "
                        "needs numeric features: convert it (pandas.to_numeric) or, for a model "
                        "with categorical features, make it a categorical column")


def as_2d_float(X, what="X", allow_nan=False, allow_inf=False):
    """X as a 2-D float64 array; TypeError for non-numeric input, ValueError for
    NaN (unless allow_nan) and infinite values (unless allow_inf)."""
    check_not_sparse(X, what)
    if hasattr(X, "columns") and hasattr(X, "to_numpy"):  # a DataFrame
        for name, col in X.items():
            check_numeric_column(col, name, what)
        try:
            X = X.to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError) as exc:
            raise TypeError(_non_numeric_column(X, what)) from exc
    try:
        arr = np.asarray(X)
    except Exception as exc:  # ragged lists and similar
        raise TypeError(f"{what} must be a 2-D numeric array") from exc
    arr = numeric_objects(arr, what)
    if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise TypeError(f"{what} must be numeric; got dtype {arr.dtype}")
    check_2d(arr.shape, what)
    if np.iscomplexobj(arr):
        raise ValueError(f"Complex data not supported: {what} must be real-valued")
    arr = arr.astype(np.float64, copy=False)
    # a pass over X (the scoring path allows both, and reads only what the rules name)
    if not (allow_nan and allow_inf) and not np.all(np.isfinite(arr)):
        n_nan = int(np.isnan(arr).sum())
        n_inf = int(np.isinf(arr).sum())
        if (n_inf and not allow_inf) or (n_nan and not allow_nan):
            raise ValueError(
                f"{what} contains {n_nan} NaN and {n_inf} infinite values; infinite values "
                "are not supported, and NaN only with a model that handles missing values"
            )
    return arr


def numeric_objects(arr, what="X"):
    """An object array of numbers as float64 (scikit-learn takes one); TypeError for one
    that holds text (numeric strings are refused, as in a string array) or other objects."""
    if arr.dtype != object:
        return arr
    # (object input only: its elements are Python objects already)
    if any(isinstance(v, (str, bytes)) for v in arr.ravel().tolist()):
        raise TypeError(f"{what} must be numeric; got dtype object holding text")
    try:
        return arr.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{what} must be numeric; got dtype object: {exc}") from exc


def check_2d(shape, what="X"):
    """ValueError unless shape is 2-D, saying how to reshape a single sample or feature."""
    if len(shape) != 2:
        raise ValueError(f"{what} must be 2-D (n_samples, n_features); got shape {tuple(shape)}. Reshape your "
                         "data with X.reshape(-1, 1) if it has a single feature or X.reshape(1, -1) if it "
                         "is a single sample")


def _non_numeric_column(X, what):
    """The message for a DataFrame that does not convert to numbers, naming its first
    column that does not (a categorical column of text, for a model without categorical
    features)."""
    for name, col in X.items():
        try:
            col.to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError):
            if getattr(col.dtype, "name", "") == "category":
                return (f"{what} column {name!r} is categorical with non-numeric categories "
                        f"({', '.join(map(str, list(col.cat.categories)[:3]))}, ...), but the model reads "
                        "it as a number: pass the values the model was trained on (a model with "
                        "categorical features codes such a column itself)")
            return f"{what} column {name!r} (dtype {col.dtype}) is not numeric; defrag needs numeric features"
    return f"{what} has non-numeric columns; defrag needs numeric features"


def feature_names_of(X):
    """The column names of a DataFrame as strings, or None for other inputs."""
    cols = getattr(X, "columns", None)
    if cols is None:
        return None
    cols = list(cols)
    unnamed = [j for j, c in enumerate(cols) if _no_name(c)]
    if unnamed:  # (str() would print a feature named "None" or "nan")
        raise ValueError(f"X has a column without a name at position {unnamed[0]} ({cols[unnamed[0]]!r}): "
                         "every feature needs a name that can be printed")
    return np.asarray([str(c) for c in cols], dtype=object)


def _no_name(label):
    """Whether a column label or feature name is None or a missing value (NaN, NA, NaT)."""
    if label is None:
        return True
    try:
        return bool(label != label)  # NaN of any float type, NaT
    except TypeError:  # pandas' NA: its comparison is NA, which has no truth value
        return True


def n_columns(X):
    """Number of columns of a 2-D input (checked before a source model's encoding reads it)."""
    check_not_sparse(X)
    shape = getattr(X, "shape", None)
    if shape is None:  # lists and the like
        try:
            arr = np.asarray(X)
        except Exception as exc:  # ragged lists and similar
            raise TypeError("X must be a 2-D numeric array") from exc
        arr = numeric_objects(arr)
        if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
            raise TypeError(f"X must be numeric; got dtype {arr.dtype}")
        shape = arr.shape
    check_2d(shape)
    return int(shape[1])


def check_positive_int(name, value, allow_none=False, low=1):
    """ValueError unless value is an integer >= low (or None when allow_none)."""
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}; got {value!r}")


def check_n_jobs(n_jobs):
    """ValueError unless n_jobs is None or a non-zero integer (scikit-learn's convention)."""
    if n_jobs is not None and (isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral)
                               or n_jobs == 0):
        raise ValueError(f"n_jobs must be None or a non-zero integer; got {n_jobs!r}")


def is_number(value):
    """value is a real number (an int, a float, a NumPy scalar), and not a bool: a flag
    given where a number is asked is a mistake to point out, not 1 or 0."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def check_n_threads(n_threads, what="n_threads"):
    """n_threads as an int; ValueError unless it is an integer >= 1 (a bool or a float
    is not one: 2.5 threads would be read as 2)."""
    if isinstance(n_threads, bool) or not isinstance(n_threads, numbers.Integral) or n_threads < 1:
        raise ValueError(f"{what} must be an integer >= 1 (the threads to run on); got {n_threads!r}")
    return int(n_threads)


def check_missing(X, supports_missing, what="X"):
    """ValueError when X (coded, float64) holds NaN and the source model routes none."""
    if not supports_missing and np.isnan(X).any():
        raise ValueError(
            f"{what} contains NaN, but the source model has no rule for missing values "
            "(supported: scikit-learn forests and HistGradientBoosting)"
        )


def checked_names(names, what="feature_names"):
    """names as strings; ValueError for an empty (or blank) name or a repeated one (as
    scikit-learn refuses repeated column names): rules name features by them, in print
    and in every export."""
    if isinstance(names, (str, bytes, set, frozenset, dict)) or not isinstance(names, collections.abc.Iterable):
        # a string would name one feature per character, a set in no order
        raise ValueError(f"{what} must be a sequence of names, one per feature in order (a list); "
                         f"got {type(names).__name__} {names!r:.60}")
    if np.ndim(names) > 1:
        raise ValueError(f"{what} must be a flat sequence of names; got shape {np.shape(names)}")
    names = list(names)
    unnamed = [i for i, n in enumerate(names) if _no_name(n)]
    if unnamed:  # (str() would print "None" or "nan" as the feature's name)
        raise ValueError(f"{what} has no name at position {unnamed[0]} ({names[unnamed[0]]!r}): every "
                         "feature needs a name that can be printed")
    names = [str(n) for n in names]
    blank = [i for i, n in enumerate(names) if not n.strip()]
    if blank:
        raise ValueError(f"{what} has an empty name (position {blank[0]}): every feature needs a "
                         "name that can be printed")
    seen = set()
    repeated = list(dict.fromkeys(n for n in names if n in seen or seen.add(n)))
    if repeated:
        raise ValueError(f"{what} must be unique; repeated: {', '.join(map(repr, repeated[:5]))}")
    return names


def rule_feature_names(feature_names, n_features, names_in, estimator):
    """The names rules print: feature_names as given (checked against n_features), else
    the DataFrame's columns (names_in), else the estimator's feature_names_in_, else x0,
    x1, ...; never empty or repeated (checked_names)."""
    if feature_names is not None:
        names = checked_names(feature_names)
        if len(names) != n_features:
            raise ValueError(f"feature_names has {len(names)} names but X has {n_features} features")
        return names
    if names_in is not None:
        return checked_names(names_in, "X's column names")
    est_names = getattr(estimator, "feature_names_in_", None)
    if est_names is not None and len(est_names) == n_features:
        return checked_names(est_names, "the model's feature_names_in_")
    return [f"x{d}" for d in range(n_features)]


def is_frame(X):
    """X is a DataFrame (pandas, or Dask): it has named columns and positional access."""
    return hasattr(X, "columns") and hasattr(X, "iloc")


def _numbers_only(columns):
    """Column labels that only number the features (x0, x1, ... as rules print features
    without names, or the integers 0, 1, ... of a DataFrame made from an array)."""
    return all(str(c) == f"x{d}" or (isinstance(c, numbers.Integral) and c == d)
               for d, c in enumerate(columns))


def columns_by_name(X, names, whose, stacklevel=3, spelled=None):
    """X's columns in the order of names, matched by name: the feature names of the model
    being read (at fit) or those seen at fit (``feature_names_in_``, at predict).

    * names and a DataFrame: its columns are taken by name, in the order of names (Dask
      DataFrames too, lazily); columns names do not list are ignored; a name X lacks is a
      ValueError naming it.
    * names and an array (no column names): its columns are read by position, with a
      UserWarning (as scikit-learn reads an array given to a model fitted on a DataFrame).
    * no names (None) and a DataFrame: by position, with a UserWarning unless its columns
      only number the features (x0, x1, ... or 0, 1, ...).

    A DataFrame with a repeated column name is a ValueError (which column is meant?), and
    so are repeated names. whose names the owner of names in messages ("the XGBoost
    model", "DefragModel"). spelled(column name): how the model writes a column's name,
    for a name no column has exactly (LightGBM stores "a b" as "a_b")."""
    frame = is_frame(X)
    if frame:
        columns = [str(c) for c in X.columns]
        if len(set(columns)) != len(columns):
            repeated = sorted(c for c, k in collections.Counter(columns).items() if k > 1)
            raise ValueError(f"X has repeated column names: {', '.join(map(repr, repeated[:10]))}; "
                             "columns are matched by name, so each name must be unique")
    if names is None:
        if frame and not _numbers_only(X.columns):
            warnings.warn(f"X has feature names, but {whose} has none: its columns are read by "
                          "position", UserWarning, stacklevel=user_stacklevel())
        return X
    names = [str(n) for n in names]
    if len(set(names)) != len(names):
        repeated = sorted(n for n, k in collections.Counter(names).items() if k > 1)
        raise ValueError(f"{whose} has repeated feature names ({', '.join(map(repr, repeated[:10]))}): "
                         "columns cannot be matched by name")
    if not frame:
        shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
        warnings.warn(f"X does not have valid feature names, but {whose} has feature names ({shown}): "
                      "its columns are read by position, in that order", UserWarning, stacklevel=user_stacklevel())
        return X
    if columns == names:
        return X
    position = {c: i for i, c in enumerate(columns)}
    if spelled is not None and any(n not in position for n in names):
        respelled = collections.Counter(spelled(c) for c in columns)
        for i, c in enumerate(columns):  # only where the spelling names one column
            if respelled[spelled(c)] == 1:
                position.setdefault(spelled(c), i)
    missing = [n for n in names if n not in position]
    if missing:
        raise ValueError(f"X lacks {len(missing)} of the {len(names)} columns {whose} reads by name: "
                         f"{', '.join(map(repr, missing[:10]))}{', ...' if len(missing) > 10 else ''}")
    return X.iloc[:, [position[n] for n in names]]


def check_predict_X(X, n_features_in, fitted_names, who):
    """X given to a fitted model, its columns matched by name to those seen at fit
    (fitted_names, ``columns_by_name``); ValueError when it then has another number of
    columns than at fit time."""
    X = columns_by_name(X, fitted_names, who, stacklevel=5)
    n_cols = n_columns(X)
    if n_cols != n_features_in:
        raise ValueError(f"X has {n_cols} features, but {who} is expecting {n_features_in} features as input")
    return X


def missing_labels(y):
    """Boolean mask of the missing entries of a 1-D array of labels: NaN, None, NaT,
    pandas' NA."""
    y = np.asarray(y)
    if y.dtype.kind in "fc":
        return np.isnan(y)
    if y.dtype.kind in "mM":
        return np.isnat(y)
    if y.dtype.kind != "O":
        return np.zeros(y.shape, dtype=bool)
    try:  # optional; it knows every missing marker (None, NaN, NaT, NA)
        import pandas as pd
    except ImportError:
        return np.array([v is None or v != v for v in y.ravel().tolist()], dtype=bool).reshape(y.shape)
    return np.asarray(pd.isna(y), dtype=bool)


def distinct_labels(*arrays):
    """The sorted distinct values of the arrays (np.unique of their concatenation) by a
    sort: NumPy 2.3's hash-based unique took 2 s for 1,000,000 distinct integers, the
    sort 0.15 s."""
    a = np.concatenate([np.asarray(x).ravel() for x in arrays]) if len(arrays) > 1 else np.asarray(arrays[0]).ravel()
    try:
        a = np.sort(a, kind="stable")
    except TypeError as exc:  # object labels of types that do not compare (1 and "a")
        kinds = sorted({type(v).__name__ for v in a.tolist()})  # (on the error's path only)
        raise TypeError(f"class labels mix types that cannot be ordered ({', '.join(kinds)}): give "
                        "labels of one type") from exc
    if a.size == 0:
        return a
    return a[np.concatenate([[True], a[1:] != a[:-1]])]


def check_target_length(y, n_samples):
    """TypeError unless y is array-like (a scalar, a string or a generator is not);
    ValueError unless it holds one target per row of X's n_samples."""
    if not (hasattr(y, "__len__") or hasattr(y, "__array__")) or isinstance(y, (str, bytes)):
        raise TypeError(f"y must be array-like, one target per row of X; got {type(y).__name__}")
    n = len(y) if hasattr(y, "__len__") else (np.asarray(y).shape or (0,))[0]
    if n != n_samples:
        raise ValueError(f"y has {n} entries but X has {n_samples} samples")


def check_labels(y, what="y"):
    """ValueError when class labels hold missing values (NaN, None, NaT, pandas' NA): a
    missing label is no class (np.unique would count each NaN as a class of its own)."""
    missing = missing_labels(y)
    if missing.any():
        raise ValueError(f"{what} has {int(missing.sum())} missing labels (NaN or None) among "
                         f"{missing.size}: drop those rows or give them a class")


def tagged(tags, kind):
    """scikit-learn tags of a rule estimator whose kind ("classifier", "regressor" or None)
    follows its task or wrapped model; NaN allowed where the source model routes it."""
    # scikit-learn is imported by the estimators only: a service that unpickles a RuleSet
    # (utils/ is imported by `import defrag`) never loads it
    from sklearn.utils import ClassifierTags, RegressorTags

    tags.estimator_type = kind
    if kind == "classifier":
        tags.classifier_tags = ClassifierTags()
    elif kind == "regressor":
        tags.regressor_tags = RegressorTags()
    tags.input_tags.allow_nan = True
    return tags
