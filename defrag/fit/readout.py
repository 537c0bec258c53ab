"""Stage 3 of the fit, rules: the kept restart's components -> its rule list (refitted on
all rows when the restarts saw a subsample), or with ``rule_list=False`` the paper's
rules, one per component -> the RuleSet printed for the training rows."""
import dataclasses

import numpy as np

from ..rules import Rule, RuleSet
from ..rules.extract import extract_rules_conditions


@dataclasses.dataclass
class Readout:
    """The kept mixture (its parameters in weight order) and its rules as printed."""

    params: dict  # eta, alpha, mean and precision or gamma, w (EM-KL), components by weight
    rules: RuleSet
    n_rules: int  # regions: a rule list's rules and its default; else the components


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
    if best.rule_list is None:
        rules, default, default_proba = _paper_rules(config, p, params, rows)
    else:
        fitted = best.rule_list
        if p.subsampled:  # fitted on the subsample: outputs refitted on all rows
            fitted = rows.refit_rule_list(fitted.rules, p.target, p.classes)
        rules, default, default_proba = fitted.rules, fitted.default_prediction, fitted.default_proba
    rule_set = RuleSet(rules, default, default_proba, p.names, p.classes if p.task == "classification" else None,
                       supports_missing=p.splits.supports_missing, encoding=p.splits.encoding,
                       feature_names_in=rows.names_in)
    # printed for all training rows, once: thresholds, '(or missing)', shares
    rule_set = rows.on_training_rows(rule_set)
    # a rule list's default ("otherwise") is one of its rules: n_rules_ counts its
    # regions, comparable with a tree's leaves; the paper's rules are its components
    n_rules = len(rule_set) + 1 if config.rule_list else int(order.size)
    return Readout(params, rule_set, n_rules)
