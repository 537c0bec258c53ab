"""The reference model's predictions: predictive mean and variance (regression), class
probabilities (classification), at the rows of X."""
import numpy as np
from sklearn.base import is_classifier

from ..sources import adapt, checked_model, unwrap
from ..sources.fitting import handles_missing
from ..sources.sklearn_trees import bagged_members
from ..utils.validation import as_2d_float


def as_1d_float(a, n, what):
    try:
        arr = np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{what} must be a numeric array") from exc
    if arr.ndim != 1:
        arr = arr.reshape(-1) if arr.ndim == 2 and 1 in arr.shape else arr
    if arr.ndim != 1:
        raise ValueError(f"{what} must be 1-D; got shape {arr.shape}")
    if arr.shape[0] != n:
        raise ValueError(f"{what} has {arr.shape[0]} entries but X has {n} rows")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what} contains NaN or infinite values")
    return np.ascontiguousarray(arr)


def check_variance(var, n):
    var = as_1d_float(var, n, "variance")
    if np.any(var < 0):
        raise ValueError(f"variance must be >= 0; got {int((var < 0).sum())} negative values "
                         f"(min {var.min():.6g})")
    return var


def check_reference_missing(estimator, X, what="X"):
    """ValueError when X (float64) holds NaN and the reference model has no rule for it."""
    if estimator is None:
        return
    n_nan = int(np.isnan(X).sum())
    if n_nan and not handles_missing(estimator):
        raise ValueError(
            f"{what} contains {n_nan} NaN, but the reference model ({type(unwrap(estimator)).__name__}) "
            "has no rule for missing values: impute X, or use a model that handles them "
            "(scikit-learn forests >= 1.4, HistGradientBoosting, XGBoost, LightGBM)")


def _reference_X(estimator, X):
    """X as float64 (NaN only where the reference model routes missing values)."""
    Xf = as_2d_float(X, allow_nan=True)
    check_reference_missing(estimator, Xf)
    return Xf


def _reference_input(estimator, X_in, X):
    """What to hand the reference: a DataFrame as it is (it keeps its feature names), as
    the array X where the estimator was fitted on an array;
    an array as a DataFrame with the estimator's own column names when it was fitted
    on one (the neighbourhood samples of a local explanation are arrays), so that
    scikit-learn does not warn that the array has none; else the array."""
    names = getattr(estimator, "feature_names_in_", None)
    if hasattr(X_in, "columns"):
        # a model fitted on an array reads a DataFrame by position (the caller warned once)
        return X if names is None and hasattr(estimator, "n_features_in_") else X_in
    if names is not None and len(names) == X.shape[1]:
        import pandas as pd  # the estimator was fitted on a DataFrame: pandas is there

        return pd.DataFrame(X, columns=names, copy=False)
    return X


def reference_predictions(estimator, X, variance=None):
    """Return the predictive mean and variance of a fitted regressor at the rows of X.

    For random forests, extra trees and bagging regressors the mean is the average of the
    member predictions and the variance their spread (population variance). For any other
    estimator the mean is ``estimator.predict(X)`` and the variance is ``variance``. A
    variance given for a bagged ensemble replaces the member spread.

    Parameters
    ----------
    estimator : object
        A fitted regressor (a classifier is refused: see ``reference_proba``).
    X : array-like of shape (n_samples, n_features)
        The rows.
    variance : array-like of shape (n_samples,), callable or None, default=None
        One value per row, a callable ``variance(X) -> array``, or None (zero for an
        estimator that is not bagged).

    Returns
    -------
    mean : ndarray of shape (n_samples,)
        The predictive mean (float64).
    var : ndarray of shape (n_samples,)
        The predictive variance (float64).

    See Also
    --------
    reference_proba : The class probabilities of a classifier.
    ProxyTree : Fits a tree to this mean and variance.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from defrag import reference_predictions
    >>> rng = np.random.RandomState(0)
    >>> X = rng.rand(60, 3)
    >>> forest = RandomForestRegressor(n_estimators=5, random_state=0).fit(X, X[:, 0])
    >>> mean, var = reference_predictions(forest, X[:4])
    >>> np.allclose(mean, forest.predict(X[:4])), bool((var >= 0).all())
    (True, True)
    """
    estimator = unwrap(estimator)
    if not hasattr(estimator, "predict") or not callable(estimator.predict):
        raise TypeError(f"the reference estimator must have a predict method; got {type(estimator).__name__}")
    if is_classifier(estimator):
        raise TypeError(f"{type(estimator).__name__} is a classifier: its reference predictions are "
                        "class probabilities (reference_proba, ProxyTreeClassifier)")
    checked_model(estimator)  # its trees, before scikit-learn's predict walks them
    X_in, X = X, _reference_X(estimator, X)
    X_in = _reference_input(estimator, X_in, X)
    n = X.shape[0]
    bagged = bagged_members(estimator) if variance is None else None
    if bagged is not None:
        members, feats = bagged
        preds = np.empty((len(members), n))
        for i, m in enumerate(members):
            Xi = X if feats is None else X[:, feats[i]]
            preds[i] = np.asarray(m.predict(Xi), dtype=np.float64).reshape(n)
        mean = preds.mean(axis=0)
        # by blocks of rows: var's (preds - mean)^2 temporary would double the peak
        var = np.empty(n)
        for s in range(0, n, 8192):
            var[s:s + 8192] = preds[:, s:s + 8192].var(axis=0)
        return mean, var
    mean = as_1d_float(estimator.predict(X_in), n, "the reference's predictions")
    if variance is None:
        var = np.zeros(n)
    elif callable(variance):
        var = check_variance(variance(X_in), n)
    else:
        var = check_variance(variance, n)
    return mean, var


def reference_proba(estimator, X):
    """Return the class probabilities of a fitted classifier at the rows of X.

    For random forests, the mean of the member trees' probabilities, which is
    ``predict_proba``.

    Parameters
    ----------
    estimator : object
        A fitted classifier with ``predict_proba``.
    X : array-like of shape (n_samples, n_features)
        The rows.

    Returns
    -------
    ndarray of shape (n_samples, n_classes)
        The probabilities (float64; ValueError where they are not finite and >= 0).

    See Also
    --------
    reference_predictions : The mean and variance of a regressor.
    ProxyTreeClassifier : Fits a tree to these probabilities.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from defrag import reference_proba
    >>> rng = np.random.RandomState(0)
    >>> X = rng.rand(60, 3)
    >>> forest = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, X[:, 0] > 0.5)
    >>> reference_proba(forest, X[:4]).shape
    (4, 2)
    """
    estimator = unwrap(estimator)
    if not callable(getattr(estimator, "predict_proba", None)):
        raise TypeError(f"a classification reference must have a predict_proba method; got "
                        f"{type(estimator).__name__}")
    checked_model(estimator)  # its trees, before scikit-learn's predict_proba walks them
    X_in, X = X, _reference_X(estimator, X)
    P = np.asarray(estimator.predict_proba(_reference_input(estimator, X_in, X)), dtype=np.float64)
    if P.ndim != 2 or P.shape[0] != X.shape[0]:
        raise ValueError(f"predict_proba returned shape {P.shape} for {X.shape[0]} rows")
    if not np.all(np.isfinite(P)) or np.any(P < 0):
        raise ValueError("the reference's class probabilities must be finite and >= 0")
    return P
