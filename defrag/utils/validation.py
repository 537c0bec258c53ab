"""Checks shared by every estimator: inputs, parameters, feature names."""
import numbers

import numpy as np


def check_not_sparse(X, what="X"):
    """TypeError for a SciPy sparse matrix or array: defrag needs dense input."""
    if hasattr(X, "nnz") and hasattr(X, "toarray"):
        raise TypeError(f"{what} is a sparse matrix; sparse input is not supported: "
                        f"pass a dense array ({what}.toarray())")


# what pandas' infer_dtype calls an object column of numbers (or of nothing but missing)
_NUMERIC_OBJECTS = {"integer", "floating", "mixed-integer-float", "decimal", "boolean", "empty"}


def check_numeric_column(col, name, what="X"):
    """TypeError when a pandas column holds text: an object or string column of numeric
    strings would otherwise be parsed as numbers, while a NumPy array of strings is
    refused (as_2d_float); both are refused. Object columns of numbers pass."""
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
            raise TypeError(f"{what} has non-numeric columns; defrag needs numeric features") from exc
    try:
        arr = np.asarray(X)
    except Exception as exc:  # ragged lists and similar
        raise TypeError(f"{what} must be a 2-D numeric array") from exc
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise TypeError(f"{what} must be numeric; got dtype {arr.dtype}")
    if arr.ndim != 2:
        raise ValueError(f"{what} must be 2-D (n_samples, n_features); got shape {arr.shape}")
    if np.iscomplexobj(arr):
        raise TypeError(f"{what} must be real-valued")
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


def feature_names_of(X):
    """The column names of a DataFrame as strings, or None for other inputs."""
    cols = getattr(X, "columns", None)
    if cols is None:
        return None
    return np.asarray([str(c) for c in cols], dtype=object)


def n_columns(X):
    """Number of columns of a 2-D input (checked before a source model's encoding reads it)."""
    check_not_sparse(X)
    shape = getattr(X, "shape", None)
    if shape is None:  # lists and the like
        try:
            arr = np.asarray(X)
        except Exception as exc:  # ragged lists and similar
            raise TypeError("X must be a 2-D numeric array") from exc
        if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
            raise TypeError(f"X must be numeric; got dtype {arr.dtype}")
        shape = arr.shape
    if len(shape) != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features); got shape {tuple(shape)}")
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


def check_predict_X(X, n_features_in, fitted_names, who):
    """ValueError when X, given to a fitted model, has another number of columns or other
    column names (in order) than at fit time."""
    n_cols = n_columns(X)
    if n_cols != n_features_in:
        raise ValueError(f"X has {n_cols} features but {who} was fitted with {n_features_in}")
    names = feature_names_of(X)
    if names is not None and fitted_names is not None and list(names) != list(fitted_names):
        raise ValueError("X has different feature names (or order) than at fit time")


def tagged(tags, kind):
    """scikit-learn tags of a rule estimator whose kind ("classifier", "regressor" or None)
    follows its task or wrapped model; NaN allowed where the source model routes it."""
    from sklearn.utils import ClassifierTags, RegressorTags

    tags.estimator_type = kind
    if kind == "classifier":
        tags.classifier_tags = ClassifierTags()
    elif kind == "regressor":
        tags.regressor_tags = RegressorTags()
    tags.input_tags.allow_nan = True
    return tags
