"""Stage 3 of the fit, rules: the kept restart's components -> its rule list (refitted on
all rows when the restarts saw a subsample), or with ``form="paper"`` the paper's
rules, one per component -> the RuleSet printed for the training rows; a searched list,
tree or sum is printed with its path by search/path_readout.py. Beside the rules, the
fitted model's readout of its mixture (MixtureReadoutMixin)."""
import copy
import dataclasses

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..evaluation import prediction_error
from ..rules import Rule, RuleSet
from ..rules.extract import extract_rules_conditions
from ..search.path_readout import list_readout, problem_rule_set, tree_readout
from ..search.tree_path import SearchedTree
from ..utils.dask_collections import map_rows
from ..utils.validation import check_predict_X
from .mixture import FittedMixture


@dataclasses.dataclass
class Readout:
    """The kept mixture (its parameters in weight order) and its rules as printed."""

    params: dict  # eta, alpha, mean and precision or gamma, w (EM-KL), components by weight
    rules: RuleSet
    n_rules: int  # regions: a rule list's rules and its default; else the components
    path: dict = None  # a searched form's path_ (search/path_readout.py's path_arrays)


def _paper_rules(config, prepared, params, rows):
    """One rule per component in weight order with the mixture's outputs (Algorithm 1 as
    published), its conditions pruned on all rows (in this process)."""
    p = prepared
    extracted = extract_rules_conditions(params["eta"], p.splits, config.kappa, rows.X, p.names, rows.threads)
    rules = []
    for k, (conditions, support) in enumerate(extracted):
        if p.task == "regression":
            rules.append(Rule(conditions, float(params["mean"][k]), None, support, params["alpha"][k]))
        else:
            c = int(np.argmax(params["gamma"][k]))
            rules.append(Rule(conditions, p.classes[c], params["gamma"][k], support, params["alpha"][k]))
    if p.task == "regression":
        return rules, p.target.mean, None
    counts = np.bincount(p.target.y, minlength=p.target.n_classes)
    return rules, p.classes[int(np.argmax(counts))], counts / counts.sum()


def read_out(config, prepared, searched, rows):
    """Stage 3: the Readout of the kept restart."""
    p, best = prepared, searched.best
    order = np.argsort(-best.params["alpha"], kind="stable")  # rules by weight, heaviest first
    params = {name: a[order] for name, a in best.params.items()}
    path = None
    if isinstance(searched.searched, SearchedTree):
        chosen, path = tree_readout(searched.searched, rows)
        return Readout(params, chosen, int(chosen.n_regions), path)
    if searched.searched is not None:
        chosen, path = list_readout(p, searched.searched, rows)
        if not searched.searched.restarts_list_chosen:
            return Readout(params, chosen, searched.searched.size, path)
        # the restarts' list is printed; the path stays the search's
    if best.rule_list is None:
        rules, default, default_proba = _paper_rules(config, p, params, rows)
    else:
        fitted = best.rule_list
        if p.subsampled:  # fitted on the subsample: outputs refitted on all rows
            fitted = rows.refit_rule_list(fitted.rules, p.target, p.classes)
        rules, default, default_proba = fitted.rules, fitted.default_prediction, fitted.default_proba
    rule_set = problem_rule_set(p, rows, rules, default, default_proba)
    # printed for all training rows, once: thresholds, '(or missing)', shares
    rule_set = rows.on_training_rows(rule_set)
    # a rule list's default ("otherwise") is one of its rules: n_regions_ counts its
    # regions, comparable with a tree's leaves; the paper's rules are its components
    n_rules = rule_set.n_regions if config.rule_list else int(order.size)
    return Readout(params, rule_set, n_rules, path)


def fitted_mixture(model):
    """The fitted DefragModel's mixture (fit/mixture.py): its MAP or mixture-of-experts
    predictions."""
    emkl = getattr(model, "gate_weights_", None) is not None
    params = {"eta": model.eta_, "alpha": model.alpha_, **({"w": model.gate_weights_} if emkl else {})}
    params.update(dict(mean=model.mean_, precision=model.precision_) if model.task_ == "regression"
                  else dict(gamma=model.gamma_))
    return FittedMixture(model.splits_, params, getattr(model, "classes_", None), model.eps)


def map_dask(model, method, X, by_rules):
    """method (predict or predict_proba) of the fitted DefragModel on every partition of a Dask
    X: a lazy Dask array. The partitions' tasks hold a copy of the model without its estimator."""
    check_is_fitted(model, "rules_")
    X = check_predict_X(X, model.n_features_in_, getattr(model, "feature_names_in_", None), "DefragModel")
    light = copy.copy(model)
    light.estimator = light.estimator_ = None  # not read by predict; a forest can be large
    if method == "predict_proba":
        return map_rows(light.predict_proba, X, np.float64, len(model.classes_))
    dtype = model.rules_.predictions().dtype if by_rules else \
        np.float64 if model.task_ == "regression" else model.classes_.dtype
    return map_rows(light.predict, X, dtype)


class MixtureReadoutMixin:
    """DefragModel's readout of its fitted mixture (fit/mixture.py) beside the printed
    rules: the MAP components and prediction (eq. 10-11), the mixture of experts of EM-KL,
    predictions of a Dask X, and ``evaluate``."""

    def _map_dask(self, method, X):
        return map_dask(self, method, X, self._by_rules())

    def _emkl_fitted(self):
        return getattr(self, "gate_weights_", None) is not None

    def _mixture(self):
        return fitted_mixture(self)

    def _by_rules(self):
        return self.form != "paper" and not self._emkl_fitted()

    def _row_regions(self, Xf):
        # form "paper" predicts by the MAP component: a row's region is its component's rule
        # (EM-KL weighs every expert: its regions are those of the rules as printed)
        return self._mixture().components(Xf) if self.form == "paper" and not self._emkl_fitted() else None

    def apply_map(self, X):
        """Index of each point's MAP component of the mixture (eq. 10).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            The points (a DataFrame's columns matched by name to those seen at fit).

        Returns
        -------
        ndarray of shape (n_samples,)
            The components, ordered by weight (``alpha_``).
        """
        return self._mixture().components(self._check_X(X))

    def predict_map(self, X):
        """The mixture's two-step MAP prediction (eq. 10-11), as the paper evaluates it.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            The points (a DataFrame's columns matched by name to those seen at fit).

        Returns
        -------
        ndarray of shape (n_samples,)
            The predictions.
        """
        return self._mixture().predict_map(self._check_X(X))

    def _predict_coded(self, Xf):
        if self._by_rules():
            return self.rules_.predict_coded(Xf)
        return self._mixture().predict(Xf)

    def evaluate(self, X, y):
        """Test error, fidelity and where the rows fall in the regions, on (X, y).

        EM-KL: ``error`` is that of the mixture of experts (predict),
        ``error_mixture_map`` that of the expert of largest weight, and ``error_rules`` that
        of the rules as printed (``rules_.predict``), whose regions the region keys describe.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            The points (a DataFrame's columns matched by name to those seen at fit).
        y : array-like of shape (n_samples,)
            Their targets.

        Returns
        -------
        dict
            ``error`` (misclassification rate or mean squared error of predict: the rules
            as printed), ``error_mixture_map`` (the same of the mixture the rules were
            searched from, by its MAP prediction, predict_map: not the printed
            explanation's), ``model_error`` (the model's, on the same rows), ``r2`` and
            ``model_r2`` (regression: R^2 of both on y), ``fidelity`` (agreement with
            ``estimator_``'s predictions: the share of equal classes, R^2 in regression;
            None for a split array), ``n_regions``, ``largest_region`` (share of the rows
            in the region holding most), ``regions_reached`` (regions holding a row),
            ``overlap_share`` (share of the rows the conditions of more than one region
            hold for: 0 for a tree or a sum), ``n_conditions`` and ``mean_checks``
            (comparisons read per row); docs/user_guide/reading.rst.
        """
        Xf, y, scores = self._scores(X, y)
        emkl = self._emkl_fitted()
        error_mixture_map = scores["error"] if not (self._by_rules() or emkl) else \
            prediction_error(self._mixture().predict_map(Xf), y, self.task_)
        # EM-KL: the rules as printed, which are not its prediction
        rules = ({"error_rules": prediction_error(self.rules_.predict_coded(Xf), y, self.task_)} if emkl else {})
        return {"error": scores.pop("error"), "error_mixture_map": error_mixture_map, **rules, **scores}
