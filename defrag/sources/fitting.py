"""The ensemble an explainer explains: a fitted one as it is, an unfitted one cloned and fitted.

Every defrag estimator takes its ensemble as the ``estimator`` parameter, as a
scikit-learn meta-estimator does (``SelectFromModel``, ``BaggingClassifier``): a fitted
model is explained as it is (``estimator_`` is that object); an unfitted one is cloned
and fitted on the ``(X, y)`` given to ``fit`` (``estimator_`` is the clone). So
``cross_val_score(DefragModel(RandomForestClassifier()), X, y)`` cross-validates the
forest and its explanation together, and ``FrozenEstimator(fitted_forest)`` explains one
fitted model on every fold.
"""
import importlib.util
import os
import warnings

import sklearn
from sklearn import get_config
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils import get_tags
from sklearn.utils.validation import check_is_fitted

from ..utils.validation import user_stacklevel
from . import adapt, split_array, unwrap
from .base import predicts


def is_fitted_model(estimator):
    """Whether the model is explained as it is: a fitted scikit-learn estimator (or a
    FrozenEstimator or passthrough Pipeline around one), a raw Booster, a split array or
    None (its reader or the explainer judges those)."""
    try:
        est = estimator.estimator if type(estimator).__name__ == "FrozenEstimator" else estimator
        if est is None or split_array.accepts(est) or not hasattr(est, "get_params"):
            return True
        check_is_fitted(estimator)
    except NotFittedError:
        return False
    except (TypeError, AttributeError, ValueError):  # not something check_is_fitted judges
        return True
    return True


def handles_missing(estimator):
    """Whether the reference model routes missing values (NaN) itself: a tree ensemble
    defrag reads says so (scikit-learn forests >= 1.4, HistGradientBoosting, XGBoost,
    LightGBM); any other estimator by its scikit-learn ``allow_nan`` tag."""
    est = unwrap(estimator)
    try:
        return bool(adapt(est).supports_missing)
    except (TypeError, ValueError):  # not a tree ensemble defrag reads
        pass
    try:
        return bool(get_tags(est).input_tags.allow_nan)
    except (AttributeError, TypeError, ValueError):
        return False


def fit_ensemble(estimator, X, y, who):
    """The model to explain: ``estimator`` when it is fitted, else a clone fitted on (X, y)."""
    if is_fitted_model(estimator):
        return estimator
    name = type(estimator).__name__
    if y is None:
        raise ValueError(f"{who} requires y to be passed, but the target y is None: y fits the unfitted "
                         f"{name} it explains (or pass a fitted {name})")
    if hasattr(X, "dask") or hasattr(y, "dask"):
        raise TypeError(f"{who} fits an unfitted {name} in memory; with a Dask X pass a fitted model")
    try:
        copy = clone(estimator)
    except (TypeError, RuntimeError) as exc:  # get_params that its constructor does not take
        raise NotFittedError(f"the {name} is not fitted, and scikit-learn's clone cannot copy it to fit "
                             f"({exc}): fit it before passing it") from None
    return copy.fit(X, y)


def refit_warning(owner):
    """The warning for a clone of an explainer of a fitted model (cross_val_score, GridSearchCV
    clone it): the clone's copy of the model is unfitted, so its fit fits it on its own rows.
    None when the model stays as it is (unfitted, frozen, or not a scikit-learn estimator)."""
    est = owner.estimator
    if not (predicts(est) and is_fitted_model(est)) or is_fitted_model(clone(est)):
        return None
    name = type(est).__name__
    return (f"Wrap the fitted {name} in sklearn.frozen.FrozenEstimator to explain it as it is, or pass "
            f"it unfitted: {type(owner).__name__} is cloned (cross_val_score, GridSearchCV clone it) "
            f"and the clone's copy of the {name} is unfitted, so each clone's fit fits it on the rows "
            "it is given.")


# cross_val_score and GridSearchCV clone in scikit-learn, their generators run by joblib: the
# warning of a clone is located at the user's line that called them
_SKLEARN_DIRS = tuple(os.path.dirname(path) + os.sep for path in (
    sklearn.__file__, getattr(importlib.util.find_spec("joblib"), "origin", None) or sklearn.__file__))


class EnsembleExplainerMixin:
    """scikit-learn's manners of an explainer of an ensemble (``estimator``): the model
    fitted or taken at fit (``estimator_``) and a warning when a clone refits a fitted one."""

    def _ensemble(self, X, y):
        """The model this fit explains (its ``estimator_``)."""
        return fit_ensemble(self.estimator, X, y, type(self).__name__)

    def __sklearn_clone__(self):
        message = refit_warning(self)
        if message is not None:
            warnings.warn(message, UserWarning, stacklevel=user_stacklevel(_SKLEARN_DIRS))
        return super().__sklearn_clone__()


class ExplanationDisplayMixin:
    """``print()`` and a notebook show a fitted explainer's explanation (the text of
    ``_display_text()``, the HTML of ``_display_html()``), then scikit-learn's parameter
    diagram where its display setting asks for one; unfitted, scikit-learn's display as it is.
    ``_display_attribute`` names the fitted attribute that says it is fitted."""

    _display_attribute = "n_features_in_"

    def _display_fitted(self):
        return hasattr(self, self._display_attribute)

    def __str__(self):
        if not self._display_fitted():
            return self.__repr__()
        return self._display_text()

    def _repr_mimebundle_(self, **kwargs):
        output = super()._repr_mimebundle_(**kwargs)
        if self._display_fitted():
            output["text/plain"] = str(self)
            output["text/html"] = self._display_html() + output.get("text/html", "")
        return output

    @property
    def _repr_html_(self):
        if not self._display_fitted():
            return super()._repr_html_  # (AttributeError where scikit-learn shows no diagram)
        return self._repr_html_fitted

    def _repr_html_fitted(self):
        diagram = self._html_repr() if get_config()["display"] == "diagram" else ""
        return self._display_html() + diagram
