"""The mixture as the kernels see it: the s matrix of rows and their targets as a kernel
``Problem``, and the fitted mixture's predictions (the MAP component of eq. 10, EM-KL's
experts weighted by q(k | x, s)) on rows as the model reads them."""
import numpy as np

from . import _fit, _gate, emkl
from ..utils.threads import thread_budget


def kernel_problem(splits, s_matrix, target=None, n_classes=0):
    """The fit kernels' Problem over s_matrix (SplitTable.kernel_input: ``{"ranks": ...}``
    or ``{"bits": ...}``, or a subset of its rows) with the targets of target (a
    fit/targets.py Target), or none (prediction: n_classes only)."""
    feat_ptr = splits.rank_ptr if "ranks" in s_matrix else splits.feat_ptr
    if target is not None:
        n_classes = target.n_classes
        targets = dict(y_value=target.y if n_classes == 0 else None, y_class=target.y if n_classes else None)
    else:
        targets = {}
    return _fit.Problem(feat_ptr, **s_matrix, missing_right=splits.missing_right, n_classes=n_classes,
                        **targets)


def _prediction_problem(splits, X_coded, n_classes, emkl_fitted):
    """(Problem over coded X without targets, threads); EM-KL's on the rank path."""
    _, threads = thread_budget(None, 1, X_coded.shape[0])
    X = splits.prepare(X_coded)
    s_matrix = splits.kernel_input(X, threads, bits=False if emkl_fitted else None)
    return kernel_problem(splits, s_matrix, n_classes=n_classes), threads


def experts(splits, params, X_coded, n_classes):
    """EM-KL: each expert's weight q(k | x, s) at each row, and its expected output
    (regression: the mean; classification: class probabilities)."""
    problem, threads = _prediction_problem(splits, X_coded, n_classes, True)
    weights = _gate.posterior(problem, params["eta"], params["w"], threads)
    return weights, emkl.expected_output(weights, params)


def map_components(splits, params, X_coded, n_classes, eps):
    """Each row's MAP component (eq. 10); with EM-KL's gate, the expert of largest weight."""
    if "w" in params:
        return np.argmax(experts(splits, params, X_coded, n_classes)[0], axis=1).astype(np.int32)
    problem, threads = _prediction_problem(splits, X_coded, n_classes, False)
    return _fit.map_assign(problem, params, float(eps), threads)


class FittedMixture:
    """A fitted mixture's predictions on coded rows: the two-step MAP (eq. 10-11), or with
    EM-KL's gate (params["w"]) the mixture of experts'. classes: None for regression."""

    def __init__(self, splits, params, classes, eps):
        self.splits, self.params, self.classes, self.eps = splits, params, classes, eps
        self.n_classes = 0 if classes is None else len(classes)

    @property
    def has_gate(self):
        return "w" in self.params

    def components(self, X_coded):
        return map_components(self.splits, self.params, X_coded, self.n_classes, self.eps)

    def expected_output(self, X_coded):
        """EM-KL: the experts' outputs weighted by q(k | x, s) (regression: the mean;
        classification: class probabilities)."""
        return experts(self.splits, self.params, X_coded, self.n_classes)[1]

    def predict_map(self, X_coded):
        k = self.components(X_coded)
        if self.classes is None:
            return self.params["mean"][k]
        return self.classes[np.argmax(self.params["gamma"], axis=1)[k]]

    def predict(self, X_coded):
        """EM-KL: the mixture of experts' prediction; else the MAP prediction."""
        if not self.has_gate:
            return self.predict_map(X_coded)
        out = self.expected_output(X_coded)
        return out if self.classes is None else self.classes[np.argmax(out, axis=1)]

    def predict_proba(self, X_coded):
        """EM-KL: the experts' class probabilities; else the MAP component's gamma."""
        if self.has_gate:
            return self.expected_output(X_coded)
        return self.params["gamma"][self.components(X_coded)]
