"""Rule lists: the printed rules are the predictor.

FAB's components are boxes that overlap (1.4-2.8 of them cover a training point on
real data), and the mixture's two-step MAP prediction (eq. 10-11) is not what a
reader applies. Here the boxes of one fitted mixture become an ordered list, read
first match first, whose outputs are refitted on the points each rule is the first
match for; the default rule takes the rest. The list is exact by construction: what
it prints is what it predicts. The steps, each measured on real data against a CART
of the same size fitted to the ensemble (docs/performance.rst, "Rules against a tree of the same size"):

1. order greedily: next comes the rule that minimises its own refitted loss plus the
   loss of one constant on the points still left;
2. local search: move a rule to another position while the training loss drops
   (steps 1 and 2 in C, src_c/dfg_list_order.h);
3. drop rules that are no point's first match;
4. prune conditions: drop a condition when the list's training loss stays within
   ``loss + prune_tol * (loss of one constant)``, the most often satisfied
   conditions first, never leaving a rule without first-match points (this extends
   the pruning of sec. 3.2 of the AISTATS 2018 paper, which drops a bound only when
   the covered count is unchanged);
5. drop rules that are no point's first match again;
6. drop whole rules, the last first, while the loss stays within the same budget (a
   rule the others predict as well says nothing), and refit every output.

The loss is the squared error (regression) or the number of misclassified points
(classification) of the targets the mixture was fitted to. Loops run over rules and
conditions; every step over the samples is a vectorised NumPy operation or a C pass (a
list's loss: each point's first match, then per-rule counts or sums, src_c/dfg_list_loss.h).
"""
from dataclasses import dataclass

import numpy as np

from . import _rules_eval
from .conditions import conditions_holds
from .ruleset import Rule

# Passes over the rules when pruning conditions (each pass tries every condition once).
PRUNE_PASSES = 3


@dataclass
class RuleList:
    """A fitted rule list: rules (with refitted outputs) in order, the default, and the
    training loss of the list on the rows it was fitted on."""

    rules: list
    default_prediction: object
    default_proba: np.ndarray
    loss: float


def _constant_loss(y, n_classes):
    """Loss of the best constant on y: squared error about the mean, or misclassified count."""
    if y.size == 0:
        return 0.0
    if n_classes == 0:
        return float(np.sum((y - y.mean()) ** 2))
    return float(y.size - np.bincount(y, minlength=n_classes).max())


def first_match_index(cover):
    """Each point's first covering rule (column of cover), cover.shape[1] where none covers."""
    cover = np.ascontiguousarray(cover, dtype=bool)
    return _rules_eval.first_cover(cover.view(np.uint8))  # a C scan, without the GIL


def list_loss(cover, y, n_classes, order=None):
    """Training loss of the list whose rules cover the points of the columns of cover (in
    order, or the columns order[0], order[1], ...), each output refitted on its
    first-match points and the default on the rest: one pass over the points in C
    (src_c/dfg_list_loss.h), with NumPy's arithmetic (tests/test_rule_list.py holds the
    NumPy version)."""
    return _loss_and_all_matched(cover, y, n_classes, order)[0]


def _loss_and_all_matched(cover, y, n_classes, order=None):
    """(list_loss, whether every rule is some point's first match), from one first-match
    pass."""
    cover = np.ascontiguousarray(cover, dtype=bool)
    order = np.arange(cover.shape[1], dtype=np.int64) if order is None else np.asarray(order, dtype=np.int64)
    return _rules_eval.list_loss(cover.view(np.uint8), order, **_kernel_targets(y, n_classes))


def _kernel_targets(y, n_classes):
    """The targets as src_c/dfg_list_loss.h takes them: class codes (int64) or values
    (float64); no copy where y has that type already (fit_rule_list converts it once)."""
    if n_classes:
        return dict(y_class=np.asarray(y, dtype=np.int64), n_classes=n_classes)
    return dict(y=np.asarray(y, dtype=np.float64))


def list_order(cover, y, n_classes, local_search=True):
    """Steps 1 and 2: the columns of cover in the greedy order (next, the rule with the
    least own loss plus loss of a constant on the rest; ties: the earlier rule), then,
    with local_search, each rule moved to another position while the loss strictly drops
    (src_c/dfg_list_order.h; tests/test_rule_list.py holds the NumPy version). y: the
    loss kernel's types (fit_rule_list converts it once)."""
    cover = np.ascontiguousarray(cover, dtype=bool)
    return _rules_eval.list_order(cover.view(np.uint8), local_search=local_search,
                                  **_kernel_targets(y, n_classes))


def first_match_counts(cover):
    """Points each rule (column) is the first match for."""
    return np.bincount(first_match_index(cover), minlength=cover.shape[1] + 1)[:-1]


def _drop_unmatched(conditions, holds, cover):
    """Step 3 / 5: keep the rules that are some point's first match (at least one rule)."""
    keep = np.flatnonzero(first_match_counts(cover) > 0)
    if keep.size == 0:
        keep = np.arange(min(1, cover.shape[1]))
    return [conditions[r] for r in keep], [holds[r] for r in keep], cover[:, keep]


def _prune(conditions, holds, cover, y, n_classes, budget, keep_one=False):
    """Step 4: drop conditions while the loss stays within budget and every rule keeps
    first-match points, in PRUNE_PASSES passes, rule by rule, each rule's most often
    satisfied (nearly vacuous) conditions first (ties: rule order): src_c/dfg_list_prune.h
    (tests/test_rule_list.py holds the NumPy version). conditions[r], holds[r]: rule r's
    conditions and their truth columns; cover[:, r] their conjunction. keep_one: no rule
    loses its last condition."""
    n = cover.shape[0]
    flat = [h for hs in holds for h in hs]
    H = np.ascontiguousarray(np.array(flat, dtype=bool).reshape(len(flat), n))
    rule_ptr = np.zeros(len(conditions) + 1, dtype=np.int64)
    np.cumsum([len(c) for c in conditions], out=rule_ptr[1:])
    keep = np.ones(len(flat), dtype=np.uint8)
    cover = _rules_eval.list_prune(H.view(np.uint8), rule_ptr, keep, float(budget), PRUNE_PASSES, keep_one=keep_one,
                                   **_kernel_targets(y, n_classes))
    kept = [np.flatnonzero(keep[rule_ptr[r]:rule_ptr[r + 1]]).tolist() for r in range(len(conditions))]
    return ([[conds[i] for i in k] for conds, k in zip(conditions, kept)],
            [[h[i] for i in k] for h, k in zip(holds, kept)], cover)


def _output(y, n_classes, classes):
    """(prediction, class probabilities or None) of the points y: mean, or majority class
    (lowest code on ties) with the class frequencies."""
    if n_classes == 0:
        return float(np.mean(y)), None
    counts = np.bincount(y, minlength=n_classes).astype(np.float64)
    return classes[int(np.argmax(counts))], counts / counts.sum()


def fit_rule_list(rules, X, y, n_classes, classes=None, prune_tol=0.0):
    """The rule list of one mixture's rules (their conditions) on the prepared training
    rows X with targets y (float values, or int class codes into classes).

    Returns a RuleList: rules with outputs refitted on their first-match points, support
    (those points) and weight (their share), the default, and the list's training loss."""
    y = np.asarray(y, dtype=np.int64 if n_classes else np.float64)  # once: the loss kernel's types
    conditions, holds, cover = rule_columns(rules, X)
    order = list_order(cover, y, n_classes).tolist()
    conditions, holds, cover = [conditions[r] for r in order], [holds[r] for r in order], cover[:, order]
    conditions, holds, cover = _drop_unmatched(conditions, holds, cover)
    budget = list_loss(cover, y, n_classes) + prune_tol * _constant_loss(y, n_classes)
    conditions, holds, cover = _prune(conditions, holds, cover, y, n_classes, budget)
    conditions, holds, cover = _drop_unmatched(conditions, holds, cover)
    conditions, holds, cover = _drop_idle_rules(conditions, holds, cover, y, n_classes, budget)
    return _refitted(conditions, cover, y, n_classes, classes)


def _drop_idle_rules(conditions, holds, cover, y, n_classes, budget):
    """Step 6: drop a whole rule, the last ones first, while the list's loss stays within
    the budget of step 4 (with prune_tol 0: a rule whose points the rules after it, or
    the default, predict as well). Every rule left keeps first-match points."""
    keep = list(range(len(conditions)))
    changed = True
    while changed and keep:
        changed = False
        for r in reversed(keep):
            trial = [k for k in keep if k != r]
            loss, all_matched = _loss_and_all_matched(cover, y, n_classes, trial)
            # (relative to the budget alone: targets of any scale drop rules alike)
            if loss <= budget + 1e-9 * budget and all_matched:
                keep, changed = trial, True
                break
    return [conditions[k] for k in keep], [holds[k] for k in keep], cover[:, keep]


def refit_rule_list(rules, X, y, n_classes, classes=None):
    """The same rules in the same order with outputs, supports and the default refitted on
    the rows X (a list fitted on a subsample, refitted on all rows)."""
    conditions, _, cover = rule_columns(rules, X)
    return _refitted(conditions, cover, np.asarray(y), n_classes, classes)


def refit_rule_lists(rule_lists, X, y, n_classes, classes=None):
    """refit_rule_list of each list of rules (lists that share Rule objects: the path's
    sizes), the truth of each distinct rule's conditions read from X once."""
    distinct = list({id(r): r for rules in rule_lists for r in rules}.values())
    column = {id(r): j for j, r in enumerate(distinct)}
    conditions, _, cover = rule_columns(distinct, X)
    y = np.asarray(y)
    return [_refitted([conditions[column[id(r)]] for r in rules], cover[:, [column[id(r)] for r in rules]],
                      y, n_classes, classes) for rules in rule_lists]


def prune_rule_lists(rule_lists, X, y, n_classes, prune_tol=0.0):
    """Each list of rules (in order; lists may share Rule objects: the path's sizes) with
    its conditions pruned against its training loss on the rows X, targets y, as step 4
    of fit_rule_list prunes a restart's list (budget: the list's loss plus prune_tol times
    the loss of one constant; every rule keeps first-match points and, unlike step 4, at
    least one condition: the lists keep their regions). A rule whose
    conditions all stay is the same object; a pruned one is a new Rule (conditions only).
    The truth of each distinct rule's conditions is read from X once."""
    distinct = list({id(r): r for rules in rule_lists for r in rules}.values())
    column = {id(r): j for j, r in enumerate(distinct)}
    conditions, holds, cover = rule_columns(distinct, X)
    y = np.asarray(y, dtype=np.int64 if n_classes else np.float64)  # once: the loss kernel's types
    slack = prune_tol * _constant_loss(y, n_classes)
    out = []
    for rules in rule_lists:  # over the lists, then (in C) their conditions, not rows
        js = [column[id(r)] for r in rules]
        list_cover = np.ascontiguousarray(cover[:, js])
        budget = list_loss(list_cover, y, n_classes) + slack
        # a rule keeps a condition: a last rule without any would merge with the default
        # and the list would lose a region (its size is the path's)
        kept, _, _ = _prune([list(conditions[j]) for j in js], [holds[j] for j in js], list_cover, y, n_classes,
                            budget, keep_one=True)
        out.append([r if len(k) == len(r.conditions) else Rule(k, None) for r, k in zip(rules, kept)])
    return out


def rule_columns(rules, X):
    """Each rule's conditions, their truth columns on X, and the rules' cover matrix."""
    n = X.shape[0]
    conditions = [list(rule.conditions) for rule in rules]
    truth = iter(conditions_holds([c for conds in conditions for c in conds], X))
    holds = [[next(truth) for _ in conds] for conds in conditions]
    cover = np.column_stack([np.logical_and.reduce(h) if h else np.ones(n, dtype=bool) for h in holds]) \
        if rules else np.zeros((n, 0), dtype=bool)
    return conditions, holds, cover


def _refitted(conditions, cover, y, n_classes, classes):
    # a last rule without conditions takes every point left: it is the default
    if conditions and not conditions[-1]:
        conditions, cover = conditions[:-1], cover[:, :-1]
    n = cover.shape[0]
    left = np.ones(n, dtype=bool)
    fitted = []
    for r, conds in enumerate(conditions):
        first = cover[:, r] & left
        left &= ~first
        # a rule without first-match points here (refitted on other rows) takes the constant
        prediction, proba = _output(y[first] if first.any() else y, n_classes, classes)
        fitted.append(Rule(conds, prediction, proba, support=int(np.count_nonzero(first)),
                           weight=np.count_nonzero(first) / max(n, 1)))
    rest = y[left] if left.any() else y  # nothing left: the constant of all rows
    default, default_proba = _output(rest, n_classes, classes)
    return RuleList(fitted, default, default_proba, list_loss(cover, y, n_classes))
