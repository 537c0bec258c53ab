"""Readers of fitted tree ensembles, one module per library, behind one interface.

``adapt(estimator)`` unwraps a ``FrozenEstimator`` or a ``Pipeline`` whose earlier
steps are passthrough and returns the ``SourceModel`` (see base.py) of the first
registered reader that accepts the model; a Pipeline that transforms its rows first is
read over its input columns (pipeline.py). Adding a library is one module with a
``SourceModel`` subclass and an ``accepts(estimator)`` test, one line in ``_REGISTRY``
and one test file.
"""
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from ..utils.validation import columns_by_name, n_columns
from . import catboost, lightgbm, pipeline, sklearn_hist, sklearn_trees, split_array, xgboost
from .base import SourceModel, Tree, feature_names_in, predict_on_one_thread, walk_tree
from .base import predicts as _predicts

__all__ = ["SUPPORTED", "SourceModel", "Tree", "adapt", "split_table_from_array",
           "split_table_from_estimator", "predicts", "unwrap", "walk_tree", "checked_source",
           "matched_source", "checked_model", "model_feature_names", "check_fitted", "FIT_FIRST",
           "predict_on_one_thread", "transformed_rows"]

# what a NotFittedError of the wrapped model adds: clone (GridSearchCV, cross_validate)
# clones the estimator parameter too, and a clone of a model is not fitted
FIT_FIRST = ("defrag explains a fitted model: fit it before passing it; where clone() copies the "
             "defrag estimator (GridSearchCV, cross_validate), pass the fitted model wrapped in "
             "sklearn.frozen.FrozenEstimator(model), which clone keeps fitted")

from .sklearn_trees import SUPPORTED

# (accepts(estimator), SourceModel subclass), first match wins. ApplySource, last, gives
# prototypes the leaves of any other model with scikit-learn's apply().
_REGISTRY = [
    (sklearn_trees.accepts, sklearn_trees.SklearnTreesSource),
    (sklearn_hist.accepts, sklearn_hist.HistGradientBoostingSource),
    (xgboost.accepts, xgboost.XGBoostSource),
    (lightgbm.accepts, lightgbm.LightGBMSource),
    (catboost.accepts, catboost.CatBoostSource),
    (sklearn_trees.accepts_apply, sklearn_trees.ApplySource),
]


def unwrap(estimator):
    """The fitted model inside a FrozenEstimator (keeps clone / cross-validation working)
    or at the end of a Pipeline whose earlier steps are passthrough; a Pipeline that
    transforms its rows first is the model itself (pipeline.py reads it)."""
    if type(estimator).__name__ == "FrozenEstimator" and hasattr(estimator, "estimator"):
        return unwrap(estimator.estimator)
    if type(estimator).__name__ == "Pipeline" and hasattr(estimator, "steps") and not pipeline.transforms(estimator):
        return unwrap(estimator.steps[-1][1])
    return estimator


def adapt(estimator, n_features=None):
    """The SourceModel of a fitted ensemble (or of a split array, given n_features)."""
    est = unwrap(estimator)
    if pipeline.accepts(est):  # its last step read as any model, then over the pipeline's inputs
        final = unwrap(est.steps[-1][1])
        if split_array.accepts(final):
            raise TypeError("a Pipeline must end in a fitted tree ensemble, not an array of splits")
        source = adapt(final)
        try:
            return pipeline.PipelineSource(est, source)
        except pipeline.NotInvertible as why:  # over the columns its steps name, else a TypeError
            return pipeline.OutputsSource(est, source, why)
    if split_array.accepts(est):
        if n_features is None:
            raise ValueError("a split array needs the number of features")
        return split_array.SplitArraySource(est, n_features)
    for accepts, source in _REGISTRY:
        if accepts(est):
            try:
                return source(est)
            except NotFittedError as exc:
                raise NotFittedError(f"{exc} {FIT_FIRST}") from None
    raise TypeError(sklearn_trees.unsupported_message(est))


def transformed_rows(estimator, X):
    """X as the model reads it: a Pipeline whose steps defrag cannot state over its input
    columns is read over its transformed columns (pipeline.py), so its explanation reads
    X transformed by those steps; X itself for any other model."""
    return pipeline.transformed_rows(unwrap(estimator), X)


def check_fitted(estimator):
    """NotFittedError, saying how to pass a model that clone() keeps (FIT_FIRST), when
    scikit-learn's check_is_fitted finds the (unwrapped) model unfitted; a model that is
    no scikit-learn estimator (a Booster) is left to its reader."""
    try:
        check_is_fitted(unwrap(estimator))
    except NotFittedError as exc:
        raise NotFittedError(f"{exc} {FIT_FIRST}") from None
    except TypeError:  # not an estimator: nothing check_is_fitted can judge
        pass


def model_feature_names(estimator):
    """The feature names a fitted model stores, in its order: ``SourceModel.feature_names``
    for a model defrag reads, scikit-learn's ``feature_names_in_`` for any other; None
    when it has none."""
    est = unwrap(estimator)
    try:
        return adapt(est).feature_names
    except (TypeError, ValueError):  # not a model defrag reads (or unfitted: reported later)
        return feature_names_in(est)


def matched_source(estimator, X, who="DefragModel"):
    """(the SourceModel of estimator, X with its columns in the model's order): a DataFrame's
    columns matched by name to the model's feature names, the others ignored (see
    ``utils.validation.columns_by_name``), then their number checked against the model's
    (``checked_source``). A Dask DataFrame is matched lazily."""
    if unwrap(estimator) is None:
        raise ValueError(f"{who} needs an estimator: a fitted forest or an array of splits")
    source = adapt(estimator, n_columns(X))
    if isinstance(source, pipeline.OutputsSource):  # it reads the pipeline's transformed rows
        if hasattr(X, "dask"):
            raise TypeError(f"{who} transforms a Dask X through the Pipeline's steps in memory: compute X")
        X = source.transformed(X)
    X = columns_by_name(X, source.feature_names, f"the {source.library} model", stacklevel=5,
                        spelled=source.column_name)
    return checked_source(estimator, n_columns(X), who, source), X


def checked_source(estimator, n_features, who="DefragModel", source=None):
    """The SourceModel of estimator, its feature count checked against X's n_features first
    (a malformed model's count must not size anything); ValueError naming who when there
    is no estimator."""
    if unwrap(estimator) is None:
        raise ValueError(f"{who} needs an estimator: a fitted forest or an array of splits")
    source = adapt(estimator, n_features) if source is None else source
    if isinstance(source, sklearn_trees.ApplySource):  # leaves for prototypes; nothing to read rules from
        raise TypeError(sklearn_trees.unsupported_message(source.estimator))
    if source.n_features != n_features:
        raise ValueError(
            f"X has {n_features} features but the {source.library} model has "
            f"{source.n_features} ({source.n_features_field})"
        )
    return source.checked()


def checked_model(estimator):
    """The SourceModel of a model defrag reads, its trees read and checked
    (``SourceModel.checked``) before the model's own predict, predict_proba or apply sees
    them; None for a model defrag does not read (a Gaussian process, say: its own predict
    is all there is)."""
    try:
        source = adapt(estimator)
    except TypeError:  # not a model defrag reads
        return None
    return source.checked()


def predicts(estimator):
    """The (unwrapped) model has scikit-learn's predict: a raw Booster or a split array has not."""
    est = unwrap(estimator)
    return not split_array.accepts(est) and _predicts(est)


def split_table_from_estimator(estimator, keep_duplicates=False):
    """Build the split table of a fitted tree ensemble of any supported library.

    The table holds every split of every tree, as the source model tests it (categories,
    missing directions, float32 inputs).

    Parameters
    ----------
    estimator : object
        A fitted tree ensemble: a scikit-learn random forest, extra-trees, gradient
        boosting or histogram gradient boosting model, or an XGBoost, LightGBM or
        CatBoost model.
    keep_duplicates : bool, default=False
        Keep splits repeated across trees.

    Returns
    -------
    SplitTable
        The table.

    See Also
    --------
    split_table_from_array : The split table of (feature, threshold) pairs.
    SplitTable : The table.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from defrag import split_table_from_estimator
    >>> rng = np.random.RandomState(0)
    >>> X = rng.rand(60, 3)
    >>> forest = RandomForestRegressor(n_estimators=5, max_depth=2, random_state=0)
    >>> forest = forest.fit(X, X[:, 0] + X[:, 1])
    >>> table = split_table_from_estimator(forest)
    >>> len(table) <= 15, table.n_features
    (True, 3)
    """
    return adapt(estimator).split_table(keep_duplicates)


split_table_from_array = split_array.split_table_from_array
