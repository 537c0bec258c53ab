"""What every rule model reports and how it presents itself to scikit-learn: the quality
measures of ``evaluate`` (test error, coverage, overlap and fidelity of its rules),
``score``, and the estimator kind, computed the same way for DefragModel and the
baselines (defrag.baselines) so that their figures compare."""
import warnings

import numpy as np
from sklearn.base import is_classifier, is_regressor
from sklearn.metrics import accuracy_score, r2_score

from .sources import predicts, unwrap


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
                      "as misclassified", UserWarning, stacklevel=4)


def prediction_error(pred, y, task):
    """Misclassification rate (classification) or mean squared error (regression)."""
    if task == "classification":
        return float(np.mean(pred != y))
    return float(np.mean((np.asarray(pred, dtype=np.float64) - y.astype(np.float64)) ** 2))


def rule_scores(pred, y, task, cover, estimator, X, n_rules, classes=None):
    """The dict of ``evaluate``: ``error`` of pred on y, ``coverage`` (share of points
    covered by at least one rule) and ``overlap`` (mean number of rules covering a point)
    from the boolean matrix cover (n_samples, n_rules), ``fidelity`` (agreement with the
    ensemble's predictions on X for classification, R^2 against them for regression;
    None when the model has no scikit-learn predict) and ``n_rules``. Warns about labels
    of y not among classes."""
    warn_unseen_labels(y, classes, task)
    fidelity = None
    if predicts(estimator):
        ens = np.asarray(unwrap(estimator).predict(X))
        if task == "classification":
            fidelity = float(np.mean(pred == ens))
        else:
            fidelity = float(r2_score(ens, pred))
    return {
        "error": prediction_error(pred, y, task),
        "coverage": float(np.mean(cover.any(axis=1))),
        "overlap": float(np.mean(cover.sum(axis=1))),
        "fidelity": fidelity,
        "n_rules": int(n_rules),
    }


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
