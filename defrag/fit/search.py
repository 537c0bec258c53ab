"""Stage 2 of the fit, search: the restarts (fit/restarts.py, EM-KL's in fit/emkl.py) on
the prepared Problem, each scored by the training error of its rule list (or of its
mixture's prediction) on all rows, and the kept one.

With a subsample, the restarts are fitted on its rows and scored on all of them through
the rows interface (fit/rows.py): their rule lists refitted on every row, or the
mixture's error summed over every row.
"""
import dataclasses
import functools

import numpy as np

from ..rules import Rule, fit_rule_list
from ..rules.extract import extract_rules_conditions
from . import emkl
from .restarts import run_restarts, training_error
from .rows import RowCount


@dataclasses.dataclass
class Searched:
    """The restarts in index order (only the kept one keeps its params) and the kept one."""

    results: list
    best: object  # fit/restarts.py's Restart; its rule_list set when the config has rule lists
    component_etas: list = None  # a searched form: every restart's eta, in index order
    searched: object = None  # search/list_path.py's SearchedList or search/tree_path.py's SearchedTree


def component_rules(params, splits, X, kappa, names, n_threads=1):
    """The rules (conditions, no outputs) of a mixture's components in weight order, their
    conditions pruned on the rows X (rules/extract.py)."""
    order = np.argsort(-params["alpha"], kind="stable")
    extracted = extract_rules_conditions(params["eta"][order], splits, kappa, X, names, n_threads)
    return [Rule(conditions, None) for conditions, _ in extracted]


def _rule_list_scorer(config, prepared, refit):
    """rule_list(params) -> (the RuleList of the components' rules fitted on the restarts'
    rows, its training error on all rows) for run_restarts. refit(rules) -> RuleList on all
    rows; None: the restarts' rows are all rows."""
    p = prepared
    labels = p.classes if p.task == "classification" else None

    def rule_list(params):
        rules = component_rules(params, p.splits, p.X_fit, config.kappa, p.names)
        fitted = fit_rule_list(rules, p.X_fit, p.fit_target.y, p.fit_target.n_classes, labels,
                               float(config.prune_tol))
        if refit is None:
            return fitted, fitted.loss
        return fitted, refit(fitted.rules).loss

    return rule_list


def search(config, prepared, rows, progress=None):
    """Stage 2: all restarts and the kept one (Searched); progress: run_restarts'."""
    p = prepared
    options = config.restart_options(len(p.splits), p.n_components, p.n_all_splits)
    kernels = dict(restart=emkl.run_restart, score=emkl.training_error) if config.emkl else {}
    rule_list = None
    # form "list" without n_regions also keeps the restarts' own list (form "restarts"'s),
    # which the search's cross-validation weighs against the searched one (search/list_path.py)
    if config.restart_lists:
        refit = None
        if p.subsampled:  # the list's error on all rows (refitted on them)
            refit = functools.partial(rows.refit_rule_list, target=p.target, classes=p.classes)
        rule_list = _rule_list_scorer(config, p, refit)
    # EM-KL: its own restarts and scoring; the rule list of the kept restart only
    restart_list = None if config.emkl else rule_list
    on_all_rows = {}
    if p.subsampled and p.all_row_targets:
        if restart_list is None:  # the mixture's error on all rows
            score_problem, score = rows.scorer(kernels.get("score", training_error), p.splits, p.bits)
            kernels["score"] = score
        else:  # the rule lists score themselves on all rows
            score_problem = RowCount(rows.n_samples)
        on_all_rows = dict(score_problem=score_problem, score_target=p.target)
    if config.searched or config.tree_searched:  # every restart's components are the candidate boxes
        etas = {}
        kernels["collect"] = lambda i, params: etas.__setitem__(i, params["eta"])
    results, best = run_restarts(p.problem, p.fit_target, options, config.n_restarts, p.entropy,
                                 config.n_jobs, rule_list=restart_list, progress=progress, **on_all_rows,
                                 **kernels)
    if config.emkl and rule_list is not None:
        best = dataclasses.replace(best, rule_list=rule_list(best.params)[0])
    if config.searched or config.tree_searched:
        return Searched(results, best, [etas[i] for i in sorted(etas)])
    return Searched(results, best)
