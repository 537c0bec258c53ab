"""What the baselines share: input checks as DefragModel makes them (the same source
models, encodings and messages), the target, predict / predict_proba / score /
evaluate, scikit-learn's manners."""
import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted
from threadpoolctl import threadpool_limits

from ..evaluation import RuleEstimatorMixin
from ..sources import matched_source
from ..sources.fitting import EnsembleExplainerMixin
from ..sources.split_array import SplitArraySource
from ..utils.interrupt import interruptible_fit
from ..utils.memory import check_class_count
from ..utils.validation import (
    check_labels,
    check_missing,
    check_target_length,
    distinct_labels,
    feature_names_of,
    rule_feature_names,
)


class _Fitting:
    """The checked inputs of one fit: the source model, X as it reads it (Xf), the raw
    X (for the ensemble's own predict), the task, the target and the feature names."""

    def __init__(self, source, X, Xf, task, names, names_in):
        self.source, self.X, self.Xf, self.task = source, X, Xf, task
        self.names, self.names_in = names, names_in
        self.y = None  # float64 values (regression) or int class codes
        self.classes = None

    @property
    def n_classes(self):
        return 0 if self.classes is None else int(self.classes.size)

    def ensemble_predictions(self):
        """The ensemble's predictions on the training X, as a target (class codes or values)."""
        if not self.source.has_predict:
            raise TypeError(f"{self.source.describe()} has no scikit-learn predict(); pass the "
                            "scikit-learn wrapper of the model")
        return self.code(np.asarray(self.source.predict(self.X)))

    def code(self, labels):
        """Class labels as codes into classes (the ensemble's labels are among them)."""
        if self.task == "regression":
            return np.asarray(labels, dtype=np.float64).ravel()
        return np.searchsorted(self.classes, np.asarray(labels).ravel())


class BaselineModel(EnsembleExplainerMixin, RuleEstimatorMixin, BaseEstimator):
    """Common plumbing of the baselines; subclasses set ``rules_``, ``n_regions_`` and
    implement ``_fit(fitting)`` and ``_predict_coded(Xf)`` (and ``_proba_coded``)."""

    #: the method needs the ensemble's own predictions on X
    _needs_predict = False

    def _check_params(self):
        """ValueError on a bad parameter (subclasses)."""

    def _prepare(self, X, y, estimator=None):
        """Check X and y as DefragModel does and read the source model (estimator, fitted;
        None: the estimator parameter)."""
        # a DataFrame's columns by name, in the model's order (utils/validation.py)
        estimator = self.estimator if estimator is None else estimator
        source, X = matched_source(estimator, X, type(self).__name__)
        names_in = feature_names_of(X)
        if isinstance(source, SplitArraySource):
            raise TypeError(f"{type(self).__name__} reads the ensemble's trees; an array of "
                            "splits has none: pass the fitted ensemble")
        if self._needs_predict and not source.has_predict:
            raise TypeError(f"{type(self).__name__} labels points with the ensemble's predict(); "
                            f"{source.describe()} has none: pass the scikit-learn wrapper")
        encoding = source.encoding.bind(X)
        Xf = encoding.transform(X, allow_nan=True)
        if Xf.shape[0] < 1:
            raise ValueError("X has no samples")
        check_target_length(y, Xf.shape[0])
        check_missing(Xf, source.supports_missing)
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y.ravel()
        if y.ndim != 1:
            raise ValueError(f"y must be 1-D; got shape {y.shape}")
        task = source.task
        if task is None:  # a raw Booster
            task = "classification" if type_of_target(y) in ("binary", "multiclass") else "regression"
        fitting = _Fitting(source, X, Xf, task, self._names(Xf.shape[1], names_in, source), names_in)
        fitting.encoding = encoding
        if task == "regression":
            try:
                fitting.y = y.astype(np.float64)
            except (TypeError, ValueError) as exc:
                raise ValueError("y must be numeric for regression") from exc
            if not np.all(np.isfinite(fitting.y)):
                raise ValueError("y contains NaN or infinite values")
        else:
            check_labels(y)
            if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
                raise ValueError("y contains NaN or infinite values")
            known = source.classes
            fitting.classes = distinct_labels(y) if known is None else distinct_labels(known, y)
            # before any per-class table: a continuous y given with a classifier
            check_class_count(fitting.classes.size, known, y.size, f"{type(self).__name__}.fit")
            fitting.y = np.searchsorted(fitting.classes, y)
        return fitting

    def _names(self, n_features, names_in, source):
        return rule_feature_names(getattr(self, "feature_names", None), n_features, names_in,
                                  source.estimator)

    # one thread: the rule kernels of the baselines run on one (their solvers are Python)
    @interruptible_fit(threads=lambda est: 1)
    def fit(self, X, y):
        """Fit the explanation of ``estimator`` to (X, y).

        An unfitted ``estimator`` is cloned and fitted on (X, y) first.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            The rows (a DataFrame's columns matched by name to the model's feature names).
        y : array-like of shape (n_samples,)
            The targets.

        Returns
        -------
        self
            The fitted model.
        """
        self._validate_params()
        self._check_params()
        if y is None:
            raise ValueError(f"{type(self).__name__}.fit needs y")
        estimator = self._ensemble(X, y)
        fitting = self._prepare(X, y, estimator)
        for name in [a for a in vars(self) if a.endswith("_") and not a.startswith("_")]:
            delattr(self, name)
        self.estimator_ = estimator
        self.task_ = fitting.task
        if fitting.task == "classification":
            self.classes_ = fitting.classes
        self.n_features_in_ = fitting.Xf.shape[1]
        if fitting.names_in is not None:
            self.feature_names_in_ = fitting.names_in
        self.encoding_ = fitting.encoding
        self.supports_missing_ = bool(fitting.source.supports_missing)
        # the baselines' linear algebra is small (matrices of at most a few thousand
        # columns): one BLAS thread; on busy cores OpenBLAS's threads made a 700 x 400
        # SVD 60 times slower (6.8 s against 0.11 s)
        with threadpool_limits(1, user_api="blas"):
            self._fit(fitting)
        self.rules_ = self.rules_.on_training_rows(fitting.Xf)
        return self

    def _rule_set_options(self):
        """Keyword arguments of the RuleSet of this model."""
        return dict(classes=getattr(self, "classes_", None), supports_missing=self.supports_missing_,
                    encoding=self.encoding_, feature_names_in=getattr(self, "feature_names_in_", None))

    # ---------------------------------------------------------------- predict
    def _reading(self):
        return self.encoding_, self.supports_missing_

    def predict(self, X):
        """Predict by the explanation.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            The points (a DataFrame's columns matched by name to those seen at fit).

        Returns
        -------
        ndarray of shape (n_samples,)
            The predictions.
        """
        return self._predict_coded(self._check_X(X))

    @available_if(RuleEstimatorMixin._classifies)
    def predict_proba(self, X):
        """Class probabilities (classification only).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            The points (a DataFrame's columns matched by name to those seen at fit).

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            The probabilities, columns in ``classes_`` order.
        """
        check_is_fitted(self, "rules_")
        return self._proba_coded(self._check_X(X))

    def evaluate(self, X, y):
        """Test error, fidelity and where the rows fall in the regions, as ``DefragModel.evaluate``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            The points.
        y : array-like of shape (n_samples,)
            Their targets.

        Returns
        -------
        dict
            ``error`` (misclassification rate or mean squared error of predict),
            ``model_error`` (the model's, on the same rows), ``r2`` and ``model_r2``
            (regression), ``fidelity`` (agreement with ``estimator_``: the share of equal
            classes, R^2 in regression), ``n_regions``, ``largest_region``,
            ``regions_reached`` and ``overlap_share`` (where the rows fall in the regions
            of ``rules_``), ``n_conditions`` and ``mean_checks``
            (docs/user_guide/reading.rst).
        """
        return self._scores(X, y)[2]
