"""What every rule model reports and how it presents itself to scikit-learn: the quality
measures of ``evaluate`` (test error, fidelity, and where the rows fall in the printed
regions), ``score``, and the estimator kind, computed the same way for DefragModel and the
baselines (defrag.baselines) so that their figures compare."""
import warnings

import numpy as np
from sklearn import get_config
from sklearn.base import is_classifier, is_regressor
from sklearn.metrics import accuracy_score, r2_score
from sklearn.utils.validation import check_is_fitted

from .rules.ruleset import FIRST_MATCH
from .sources import matched_source, predict_on_one_thread, predicts, unwrap
from .utils.config import VERSION
from .utils.dask_collections import is_dask_collection
from .utils.validation import check_missing, check_predict_X, tagged, user_stacklevel


def warn_unseen_labels(y, classes, task):
    """UserWarning naming the labels of y that are not among the model's classes (a
    test set coded otherwise than the training labels, "1" against 1 say): every such
    point counts as misclassified."""
    if task != "classification" or classes is None:
        return
    known = set(np.asarray(classes).tolist())
    unseen = [v for v in np.unique(y).tolist() if v not in known]
    if unseen:
        shown = ", ".join(repr(v) for v in unseen[:5]) + (", ..." if len(unseen) > 5 else "")
        warnings.warn(f"y has {len(unseen)} label(s) the model was not fitted with: {shown} "
                      f"(its classes: {', '.join(repr(c) for c in known)}); their points count "
                      "as misclassified", UserWarning, stacklevel=user_stacklevel())


def prediction_error(pred, y, task):
    """Misclassification rate (classification) or mean squared error (regression)."""
    if task == "classification":
        return float(np.mean(pred != y))
    return float(np.mean((np.asarray(pred, dtype=np.float64) - y.astype(np.float64)) ** 2))


def region_scores(rules, X_coded, region=None):
    """Where the rows of X (as the rules read it) fall in the regions of the explanation
    as printed (docs/user_guide/regions.rst: a tree's leaf, a list's rule or its default, a
    sum's combination of one leaf of each part; region: each row's, where predict does not
    read the rules in order, the paper's MAP component), the same for every form:
    ``largest_region``, the share of the rows in the region that holds most of them;
    ``regions_reached``, the regions at least one row falls in; ``overlap_share``, the share
    of the rows that the printed conditions of more than one region hold for, each read on
    its own: in a list, the rows more than one rule holds for, whose prediction the rules'
    order decides (the default holds only where no rule does); in a tree or a sum none, as
    a leaf's conditions are those of its whole path."""
    n = X_coded.shape[0]
    overlap = 0.0
    if rules.form == "list":  # the rows more than one rule's box holds for
        overlap = float(np.mean(rules.covering(X_coded).sum(axis=1) > 1)) if n else 0.0
    if region is None:
        region = rules.route(X_coded)  # (rows, parts): a sum's region is the row of its parts' leaves
    counts = np.unique(np.reshape(region, (n, -1)), axis=0, return_counts=True)[1] if n else np.zeros(0, np.int64)
    return {"largest_region": float(counts.max() / n) if n else 0.0, "regions_reached": int(counts.size),
            "overlap_share": overlap}


def rule_scores(pred, y, task, regions, estimator, X, n_regions, classes=None):
    """The dict of ``evaluate`` (docs/user_guide/reading.rst): ``error`` of pred on y and
    ``model_error``, the ensemble's on the same rows; in regression ``r2`` and ``model_r2``
    (R^2 on y of each); ``fidelity`` (agreement with the ensemble's predictions on X: the
    share of equal labels, or in regression the R^2 of pred against them), ``n_regions``
    and the dict regions (region_scores). The model's figures are None where it gives no
    predictions (``ensemble_predictions``). Warns about labels of y not among classes."""
    warn_unseen_labels(y, classes, task)
    ens = ensemble_predictions(estimator, X, task, classes)
    scores = {"error": prediction_error(pred, y, task),
              "model_error": None if ens is None else prediction_error(ens, y, task)}
    if task == "regression":
        scores["r2"] = r_squared(y, pred)
        scores["model_r2"] = None if ens is None else r_squared(y, ens)
    if ens is None:
        fidelity = None
    elif task == "classification":
        fidelity = float(np.mean(pred == ens))
    else:
        fidelity = r_squared(ens, pred)
    scores.update({"fidelity": fidelity, "n_regions": int(n_regions), **regions})
    return scores


def r_squared(reference, pred):
    """R^2 of pred against reference (scikit-learn's r2_score); None where it is not defined
    (fewer than two rows)."""
    reference = np.asarray(reference, dtype=np.float64)
    if reference.shape[0] < 2:
        return None
    return float(r2_score(reference, np.asarray(pred, dtype=np.float64)))


def ensemble_predictions(estimator, X, task, classes=None):
    """The ensemble's predictions of X: its scikit-learn predict (on one thread, as the
    fit reads it: a forest's joblib threads sum its trees in the order they finish), or a
    raw XGBoost or LightGBM Booster's as its wrapper's (sources/base.py, read off its
    objective); None where it gives none (an array of splits, an objective defrag does not
    read), or where a raw booster's task or class codes are not the explanation's (labels
    it cannot be compared with). The model's own warning that X has no feature names is
    not repeated: the explanation reads X's columns by position, as its fit said
    (utils/validation.py, columns_by_name)."""
    if predicts(estimator):
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="X does not have valid feature names", category=UserWarning)
            return np.asarray(predict_on_one_thread(unwrap(estimator), X))
    source, X = matched_source(estimator, X, "evaluate")
    if not source.has_predict or source.task != task:
        return None
    if task == "classification" and (classes is None or not np.array_equal(np.asarray(source.classes),
                                                                             np.asarray(classes))):
        return None
    return np.asarray(source.predict(X))


def predictive_score(pred, y, task):
    """scikit-learn's score of a prediction: accuracy (classification) or R^2."""
    y = np.asarray(y)
    if y.shape[0] != pred.shape[0]:
        raise ValueError(f"y has {y.shape[0]} entries but X has {pred.shape[0]} samples")
    return accuracy_score(y, pred) if task == "classification" else r2_score(y, pred)


def estimator_kind(estimator, task="auto"):
    """"classifier", "regressor" or None (scikit-learn's estimator type of a rule model): the
    task as set, else the wrapped model's (None for a split array or a raw Booster)."""
    if task in ("classification", "regression"):
        return "classifier" if task == "classification" else "regressor"
    try:
        est = unwrap(estimator)
        if est is None or not predicts(est):
            return None
        return "classifier" if is_classifier(est) else ("regressor" if is_regressor(est) else None)
    except (AttributeError, TypeError):  # a Pipeline that transforms its inputs (fit says so)
        return None


# how a rule model's predict reads its rules, said above their listing (print) and table
READING = {
    "first match": f"{FIRST_MATCH}.",
    "map": "the rules of the mixture's components by weight; predict takes the point's most probable "
           "component (MAP, eq. 10-11), which need not be the first rule that holds.",
    "experts": "predict weights the experts' outputs by the gate q(k | x, s); the rules as listed "
               "predict with rules_.predict, the first rule that holds winning.",
    "harvest": "predict is the weighted mean of the nodes that hold; rules_.predict reads them in "
               "order, the first rule that holds winning.",
}


class RuleEstimatorMixin:
    """What every rule model shares (DefragModel and the baselines): X read at predict as
    at fit (columns by name, the source model's coding, NaN only where it routes it),
    ``score``, the measures of ``evaluate``, scikit-learn's estimator kind and tags, and
    printing. A subclass provides ``_reading()`` -> (InputEncoding, supports_missing),
    ``_predict_coded(Xf)``, and may override ``_task_setting()`` and ``_description()``."""

    def _task_setting(self):
        """The task as the parameters set it ("auto": the wrapped model's)."""
        return "auto"

    def _classifies(self):
        """Whether the model classifies: its fitted task, else its kind (``available_if`` of
        predict_proba: a regressor has none)."""
        task = getattr(self, "task_", None)
        return task == "classification" if task is not None else is_classifier(self)

    def _description(self):
        return self.task_

    def _check_X(self, X, matched=False):
        """X as the rules read it (coded), checked against the fit; matched: (X with its
        columns matched by name to feature_names_in_, coded X)."""
        check_is_fitted(self, "rules_")
        if is_dask_collection(X):
            raise TypeError("a Dask collection is taken only by DefragModel's fit, predict and "
                            "predict_proba (lazily); compute X for this method")
        X = check_predict_X(X, self.n_features_in_, getattr(self, "feature_names_in_", None), type(self).__name__)
        encoding, supports_missing = self._reading()
        Xf = encoding.transform(X, allow_nan=True)
        check_missing(Xf, supports_missing)
        return (X, Xf) if matched else Xf

    def score(self, X, y):
        """Accuracy (classification) or R^2 (regression) of predict.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            The points.
        y : array-like of shape (n_samples,)
            Their targets.

        Returns
        -------
        float
            The score.
        """
        return predictive_score(self.predict(X), y, self.task_)

    def _scores(self, X, y):
        """(coded X, y, the rule_scores of predict on them) for evaluate."""
        X, Xf = self._check_X(X, matched=True)
        y = np.asarray(y)
        if y.shape[0] != Xf.shape[0]:
            raise ValueError(f"y has {y.shape[0]} entries but X has {Xf.shape[0]} samples")
        scores = rule_scores(self._predict_coded(Xf), y, self.task_,
                             region_scores(self.rules_, Xf, self._row_regions(Xf)), self.estimator_, X,
                             self.n_regions_, getattr(self, "classes_", None))
        scores["n_conditions"] = self.rules_.n_conditions
        scores["mean_checks"] = float(np.mean(self.rules_.checks(Xf))) if Xf.shape[0] else 0.0
        return Xf, y, scores

    def _row_regions(self, Xf):
        """Each row's region where predict does not read the rules as printed, else None."""
        return None

    @property
    def _estimator_type(self):  # scikit-learn < 1.6 reads this
        return estimator_kind(self.estimator, self._task_setting())

    def __sklearn_tags__(self):
        return tagged(super().__sklearn_tags__(), estimator_kind(self.estimator, self._task_setting()))

    def __getstate__(self):
        state = super().__getstate__()
        state["_defrag_version"] = VERSION
        return state

    def __setstate__(self, state):
        version = state.pop("_defrag_version", "an earlier development version")
        if version != VERSION:
            # as scikit-learn's InconsistentVersionWarning: a pickle is for the version
            # that wrote it; the rules' JSON document is what later versions read
            warnings.warn(f"this {type(self).__name__} was pickled by defrag {version} and is loaded by "
                          f"{VERSION}: it may not work; refit it, or save its rules as JSON "
                          "(rules_.to_json()), which later versions read", UserWarning, stacklevel=user_stacklevel())
        super().__setstate__(state)

    def set_params(self, **params):
        """Set parameters, as scikit-learn's ``set_params``.

        Parameters
        ----------
        **params : dict
            The parameters (``estimator__name`` for the ensemble's).

        Returns
        -------
        self
            The estimator.
        """
        try:
            return super().set_params(**params)
        except ValueError as exc:  # scikit-learn's message prints the estimator: its repr, not the rules
            raise ValueError(str(exc).replace(str(self), repr(self))) from None

    def _predicts_by(self):
        """How predict reads the rules: a key of READING."""
        return "first match"

    def _reading_guide(self):
        """One line on how predict reads the rules, above their listing and table."""
        if self._predicts_by() in ("tree", "sum"):  # a RuleTree says how it reads
            return "How to read: " + self.rules_.reading_guide() + "."
        return "How to read: " + READING[self._predicts_by()]

    def _title(self):
        n = int(self.n_regions_)
        c = self.rules_.n_conditions
        return (f"{type(self).__name__}: {n} region{'' if n == 1 else 's'}, {c} condition{'' if c == 1 else 's'} "
                f"({self._description()})")

    def __str__(self):
        """The fitted model as print shows it: how to read its rules, then their listing
        (unfitted: repr, which stays scikit-learn's)."""
        if not hasattr(self, "rules_"):
            return self.__repr__()
        return f"{self._reading_guide()}\n{self._title()}\n{self.rules_}"

    # A fitted model shows its rules in a notebook (their table, rules/display.py), then
    # scikit-learn's parameter diagram where its display setting asks for one; unfitted,
    # scikit-learn's display as it is.
    def _rules_html(self):
        return self.rules_.to_html([self._title(), self._reading_guide()])

    def _repr_mimebundle_(self, **kwargs):
        output = super()._repr_mimebundle_(**kwargs)
        if hasattr(self, "rules_"):
            output["text/plain"] = str(self)
            output["text/html"] = self._rules_html() + output.get("text/html", "")
        return output

    @property
    def _repr_html_(self):
        if not hasattr(self, "rules_"):
            return super()._repr_html_  # (AttributeError where scikit-learn has no diagram)
        return self._repr_html_fitted

    def _repr_html_fitted(self):
        diagram = self._html_repr() if get_config()["display"] == "diagram" else ""
        return self._rules_html() + diagram
