"""Stage 3 of the fit, rules: the kept restart's components -> its rule list (refitted on
all rows when the restarts saw a subsample), or with ``form="paper"`` the paper's
rules, one per component -> the RuleSet printed for the training rows."""
import collections.abc
import copy
import dataclasses
import numbers

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..rules import Rule, RuleSet
from ..rules.extract import extract_rules_conditions
from ..evaluation import prediction_error
from ..utils.dask_collections import map_rows
from ..utils.validation import check_predict_X, checked_names
from .mixture import FittedMixture
from .tree_path import REFERENCE_FORMS, Candidate, SearchedTree, choose


@dataclasses.dataclass
class Readout:
    """The kept mixture (its parameters in weight order) and its rules as printed."""

    params: dict  # eta, alpha, mean and precision or gamma, w (EM-KL), components by weight
    rules: RuleSet
    n_rules: int  # regions: a rule list's rules and its default; else the components
    path: dict = None  # form="list": per size, its conditions, errors, default


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
        return _tree_readout(params, searched.searched, rows)
    if searched.searched is not None:
        readout = _searched_readout(p, params, searched.searched, rows)
        if not searched.searched.restarts_list_chosen:
            return readout
        path = readout.path  # the restarts' list is printed; the path stays the search's
    if best.rule_list is None:
        rules, default, default_proba = _paper_rules(config, p, params, rows)
    else:
        fitted = best.rule_list
        if p.subsampled:  # fitted on the subsample: outputs refitted on all rows
            fitted = rows.refit_rule_list(fitted.rules, p.target, p.classes)
        rules, default, default_proba = fitted.rules, fitted.default_prediction, fitted.default_proba
    rule_set = _rule_set(p, rows, rules, default, default_proba)
    # printed for all training rows, once: thresholds, '(or missing)', shares
    rule_set = rows.on_training_rows(rule_set)
    # a rule list's default ("otherwise") is one of its rules: n_regions_ counts its
    # regions, comparable with a tree's leaves; the paper's rules are its components
    n_rules = rule_set.n_regions if config.rule_list else int(order.size)
    return Readout(params, rule_set, n_rules, path)


def _tree_readout(params, searched, rows):
    """The searched tree (fit/tree_path.py) printed for all rows, and the path: every
    candidate printable (TreePath), the conditions of every grown tree printed in one pass
    over the rows, each price's rows per node counted once (the smaller trees of a price
    are its largest's first steps)."""
    cands, grown = searched.candidates, searched.grown
    sums = {i: c.tree for i, c in enumerate(cands) if c.form == "sum"}
    # a warm start's candidates (REFERENCE_FORMS): built by the search, as the sums
    refs = {i: c.tree for i, c in enumerate(cands) if c.form in REFERENCE_FORMS}
    names_in = None if rows.names_in is None else checked_names(rows.names_in, "feature_names_in")
    for tree in [*sums.values(), *refs.values()]:
        tree.feature_names_in = names_in
    conds = [x for box_conditions in grown.read.values() for x in box_conditions]
    conds += [x for tree in [*sums.values(), *refs.values()] for nd in tree.nodes() for x in nd.conditions]
    conds = list({id(x): x for x in conds}.values())
    printed = dict(zip(map(id, conds), rows.printed_conditions(conds))) if conds else {}
    # the sums' rows per node from the largest (a smaller sum's nodes are among its own)
    kc = rows.key_counts(sums[max(sums, key=lambda i: cands[i].size)]) if sums else {}
    for i, tree in sums.items():
        leaf_counts = [[kc.get((t, lf.key), 0) for lf in tree.leaves(t)] for t in range(len(tree.terms))]
        sums[i] = tree.printed(printed, leaf_counts, rows.n_samples)
    for i, tree in refs.items():
        kc = rows.key_counts(tree)
        sums[i] = tree.printed(printed, [[kc.get((0, lf.key), 0) for lf in tree.leaves(0)]], rows.n_samples)
    # the grown trees over the printed conditions (a tree of them prints them as they are)
    read = {box: [printed.get(id(x), x) for x in box_conditions] for box, box_conditions in grown.read.items()}
    grown = dataclasses.replace(grown, read=read, names={**grown.names, "feature_names_in": rows.names_in})
    largest = {price: max(c.size for c in cands if c.form == "tree" and c.price == price)
               for price in {c.price for c in cands if c.form == "tree"}}
    counts = {price: rows.key_counts(grown.tree(price, size)) for price, size in largest.items()}
    trees = TreePath([(c.form, c.price, c.size) for c in cands], grown, counts, rows.n_samples, sums)
    chosen = trees[searched.chosen]
    path = path_arrays(
        form=[c.form for c in cands], literal_price=[c.price for c in cands], size=[c.size for c in cands],
        n_regions=[c.n_regions for c in cands], n_conditions=[c.n_conditions for c in cands],
        validation_error=[c.validation_error for c in cands], mean_checks=[c.checks for c in cands],
        train_error=[c.train_error for c in cands], chosen=searched.chosen, printed="searched",
        restarts_validation_error=np.nan)
    path["trees"] = trees
    return Readout(params, chosen, int(chosen.n_regions), path)


class TreePath(collections.abc.Sequence):
    """``path_rules_`` of a searched tree: the candidates of ``path_`` in its order, each a
    RuleTree printed for the training rows. A tree candidate is built when first read (a
    fit prints the one it chose; ``with_size`` and a reader of the path the others), from
    its price's grown tree (fit/tree_path.py's GrownTrees, over printed conditions) and
    that tree's rows per node; the sums are built by the search."""

    def __init__(self, specs, grown, counts, n_rows, built):
        self.specs = list(specs)  # (form, price, size) per candidate
        self.grown = grown
        self.counts = counts  # price -> {(term, node key): training rows through it}
        self.n_rows = int(n_rows)
        self.built = dict(built)  # index -> RuleTree

    def __len__(self):
        return len(self.specs)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        k = range(len(self))[i]  # (an IndexError past the end; negative from the end)
        if k not in self.built:
            _, price, size = self.specs[k]
            tree = self.grown.tree(price, size)
            kc = self.counts[price]
            self.built[k] = tree.printed({}, [[kc.get((0, lf.key), 0) for lf in tree.leaves(0)]], self.n_rows)
        return self.built[k]

    def __repr__(self):
        return f"TreePath({len(self)} candidates: {', '.join(f'{f} {p:g} {s}' for f, p, s in self.specs[:4])}...)"


def _rule_set(p, rows, rules, default, default_proba):
    return RuleSet(rules, default, default_proba, p.names, p.classes if p.task == "classification" else None,
                   supports_missing=p.splits.supports_missing, encoding=p.splits.encoding,
                   feature_names_in=rows.names_in)


def _searched_readout(p, params, searched, rows):
    """The searched list at its chosen size, and the path: the list of each size (the sizes
    are not prefixes of one list, rules/list_search.py's grow_list_sizes), its outputs,
    default and training error refitted on all rows (rows.refit_rule_lists: each rule's
    conditions read from the rows once), its rules printed for them (one rows.on_training_rows pass for the rules of
    every size: a rule prints the same in every list, the lists differ in their shares)."""
    n = max(rows.n_samples, 1)
    lists = rows.refit_rule_lists(searched.lists, p.target, p.classes)
    distinct = list({id(r): r for rules in searched.lists for r in rules}.values())
    every = rows.on_training_rows(_rule_set(p, rows, distinct, lists[0].default_prediction, lists[0].default_proba))
    printed_rule = {id(r): q for r, q in zip(distinct, every.rules)}
    printed = [_printed_list(p, rows, fitted, [printed_rule[id(r)] for r in rules])
               for fitted, rules in zip(lists, searched.lists)]
    sizes = np.arange(1, len(lists) + 1)
    path = path_arrays(
        form=["list"] * len(lists), literal_price=np.full(len(lists), np.nan), size=sizes, n_regions=sizes,
        n_conditions=[rule_set.n_conditions for rule_set in printed],
        validation_error=searched.validation_error, mean_checks=np.full(len(lists), np.nan),
        train_error=[fitted.loss / n for fitted in lists], chosen=searched.size - 1,
        printed="restarts" if searched.restarts_list_chosen else "searched",
        restarts_validation_error=searched.restarts_list_validation_error)
    path["rules"] = printed
    return Readout(params, printed[searched.size - 1], searched.size, path)


def _printed_list(p, rows, fitted, printed_rules):
    """The refitted list (rules/lists.py's RuleList) as printed: its rules' conditions and
    coverage as printed_rules' (RuleSet.on_training_rows of the same rules), its shares
    from its first-match supports on all rows."""
    rules = []
    for rule, printed in zip(fitted.rules, printed_rules):  # over the list's rules
        rule = copy.copy(rule)
        rule.conditions, rule.coverage = printed.conditions, printed.coverage
        rules.append(rule)
    out = _rule_set(p, rows, rules, fitted.default_prediction, fitted.default_proba)
    supports = [rule.support for rule in rules]
    out.set_first_match_counts([rows.n_samples - sum(supports)] + supports)
    return out


def path_arrays(form, literal_price, size, n_regions, n_conditions, validation_error, mean_checks, train_error,
                chosen, printed, restarts_validation_error):
    """``path_``, one schema for every searched form: per candidate its form ("tree", "sum",
    "list", a warm start's "reference" ...), price of a box's extra conditions (NaN for a
    list), size (a tree's grown regions, a sum's splits, a list's regions), regions and
    comparisons printed, cross-validated error, comparisons read per validation row and
    training error (NaN where not measured); the index of the candidate printed
    (``chosen``); which list was printed (``printed``: "searched", or "restarts" where the
    kept restart's own list won, its cross-validated error ``restarts_validation_error``;
    a tree's: "searched", NaN)."""
    return dict(form=np.array(form), literal_price=np.asarray(literal_price, dtype=np.float64),
                size=np.asarray(size, dtype=np.int64), n_regions=np.asarray(n_regions, dtype=np.int64),
                n_conditions=np.asarray(n_conditions, dtype=np.int64),
                validation_error=np.asarray(validation_error, dtype=np.float64),
                mean_checks=np.asarray(mean_checks, dtype=np.float64),
                train_error=np.asarray(train_error, dtype=np.float64), chosen=int(chosen), printed=printed,
                restarts_validation_error=float(restarts_validation_error))


def sized_model(model, n_regions=None, max_conditions=None):
    """A copy of the fitted DefragModel as a fit with n_regions (or max_conditions) prints it,
    read off its path_ (a searched form): a refit with that parameter gives the same."""
    check_is_fitted(model, "rules_")
    if getattr(model, "path_", None) is None:
        raise ValueError("with_size reads the path of a searched explanation (form 'auto', 'tree', 'sum' or 'list')")
    if (n_regions is None) == (max_conditions is None):
        raise ValueError("with_size takes n_regions or max_conditions (one of them)")
    for name, value, low in (("n_regions", n_regions, 1), ("max_conditions", max_conditions, 0)):
        if value is not None and not (isinstance(value, numbers.Integral) and not isinstance(value, bool)
                                      and value >= low):
            raise ValueError(f"{name} must be an integer >= {low}; got {value!r}")
    out = copy.copy(model)
    if model.path_["form"].size and model.path_["form"][0] == "list":  # form "list": the list of each size
        if max_conditions is not None:
            raise ValueError("with_size(max_conditions=) needs a searched tree (form 'auto', 'tree' or 'sum')")
        top = int(model.path_["size"][-1])
        if n_regions > top:
            raise ValueError(f"n_regions must be an integer in [1, {top}] (path_['size']); got {n_regions!r}")
        out.n_regions = out.n_regions_ = int(n_regions)
        out.rules_ = model.path_rules_[int(n_regions) - 1]
        out.path_ = dict(model.path_, chosen=int(n_regions) - 1)
    else:
        path = model.path_
        cands = [Candidate(str(f), float(p), int(k), float(e), float(c), n_conditions=int(nc), n_regions=int(nr))
                 for f, p, k, e, c, nc, nr in zip(path["form"], path["literal_price"], path["size"],
                                                  path["validation_error"], path["mean_checks"],
                                                  path["n_conditions"], path["n_regions"])]
        i = choose(cands, max_conditions, n_regions)
        out.n_regions, out.max_conditions = n_regions, max_conditions
        out.rules_ = model.path_rules_[i]
        out.n_regions_ = int(out.rules_.n_regions)
        out.path_ = dict(path, chosen=i)
    out.n_conditions_ = out.rules_.n_conditions
    return out


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
