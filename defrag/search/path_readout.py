"""A searched path read out: every candidate of the searched list, tree or sum (list_path.py,
tree_path.py) printed for the training rows, the schema of ``path_`` they share, and a fitted
model at another size read off its path (``with_size``)."""
import collections.abc
import copy
import dataclasses
import numbers
import warnings

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..rules import RuleSet
from ..utils.validation import checked_names, user_stacklevel
from .tree_path import REFERENCE_FORMS, Candidate, choose, weighs_sums


def tree_readout(searched, rows):
    """(the chosen candidate, path_) of the searched tree (tree_path.py's SearchedTree):
    the chosen tree printed for all rows, and the path: every candidate printable
    (TreePath), the conditions of every grown tree printed in one pass over the rows, each
    price's rows per node counted once (the smaller trees of a price are its largest's
    first steps)."""
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
        restarts_validation_error=np.nan, validation_se=[c.validation_se for c in cands])
    path["trees"] = trees
    return chosen, path


class TreePath(collections.abc.Sequence):
    """``path_rules_`` of a searched tree: the candidates of ``path_`` in its order, each a
    RuleTree printed for the training rows. A tree candidate is built when first read (a
    fit prints the one it chose; ``with_size`` and a reader of the path the others), from
    its price's grown tree (grown_trees.py's GrownTrees, over printed conditions) and
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


def problem_rule_set(p, rows, rules, default, default_proba):
    """The RuleSet of rules over the fit's problem p (its names, classes, split encoding)
    and the rows' input names, not yet printed for the rows."""
    return RuleSet(rules, default, default_proba, p.names, p.classes if p.task == "classification" else None,
                   supports_missing=p.splits.supports_missing, encoding=p.splits.encoding,
                   feature_names_in=rows.names_in)


def list_readout(p, searched, rows):
    """(the chosen list, path_) of the searched list (list_path.py's SearchedList) of the
    fit's problem p: the list at its chosen size, and the path: the list of each size (the
    sizes are not prefixes of one list, list_search.py's grow_list_sizes), its outputs,
    default and training error refitted on all rows (rows.refit_rule_lists: each rule's
    conditions read from the rows once), its rules printed for them (one
    rows.on_training_rows pass for the rules of every size: a rule prints the same in every
    list, the lists differ in their shares)."""
    n = max(rows.n_samples, 1)
    lists = rows.refit_rule_lists(searched.lists, p.target, p.classes)
    distinct = list({id(r): r for rules in searched.lists for r in rules}.values())
    every = rows.on_training_rows(problem_rule_set(p, rows, distinct, lists[0].default_prediction,
                                                   lists[0].default_proba))
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
    return printed[searched.size - 1], path


def _printed_list(p, rows, fitted, printed_rules):
    """The refitted list (rules/lists.py's RuleList) as printed: its rules' conditions and
    coverage as printed_rules' (RuleSet.on_training_rows of the same rules), its shares
    from its first-match supports on all rows."""
    rules = []
    for rule, printed in zip(fitted.rules, printed_rules):  # over the list's rules
        rule = copy.copy(rule)
        rule.conditions, rule.coverage = printed.conditions, printed.coverage
        rules.append(rule)
    out = problem_rule_set(p, rows, rules, fitted.default_prediction, fitted.default_proba)
    supports = [rule.support for rule in rules]
    out.set_first_match_counts([rows.n_samples - sum(supports)] + supports)
    return out


def path_arrays(form, literal_price, size, n_regions, n_conditions, validation_error, mean_checks, train_error,
                chosen, printed, restarts_validation_error, validation_se=None):
    """``path_``, one schema for every searched form: per candidate its form ("tree", "sum",
    "list", a warm start's "reference" ...), price of a box's extra conditions (NaN for a
    list), size (a tree's grown regions, a sum's splits, a list's regions), regions and
    comparisons printed, cross-validated error, comparisons read per validation row and
    training error (NaN where not measured), and the standard error of the cross-validated
    error (its per-row losses'; NaN where not measured, all NaN for a list: validation_se
    None); the index of the candidate printed
    (``chosen``); which list was printed (``printed``: "searched", or "restarts" where the
    kept restart's own list won, its cross-validated error ``restarts_validation_error``;
    a tree's: "searched", NaN)."""
    return dict(form=np.array(form), literal_price=np.asarray(literal_price, dtype=np.float64),
                size=np.asarray(size, dtype=np.int64), n_regions=np.asarray(n_regions, dtype=np.int64),
                n_conditions=np.asarray(n_conditions, dtype=np.int64),
                validation_error=np.asarray(validation_error, dtype=np.float64),
                mean_checks=np.asarray(mean_checks, dtype=np.float64),
                train_error=np.asarray(train_error, dtype=np.float64),
                validation_se=np.full(len(form), np.nan) if validation_se is None else
                np.asarray(validation_se, dtype=np.float64),
                chosen=int(chosen), printed=printed, restarts_validation_error=float(restarts_validation_error))


def _ranges(sizes):
    """"1-5, 7" of sorted distinct integers."""
    runs, start = [], None
    for k, s in enumerate(sizes):
        if start is None:
            start = s
        if k + 1 == len(sizes) or sizes[k + 1] != s + 1:
            runs.append(str(s) if s == start else f"{start}-{s}")
            start = None
    return ", ".join(runs)


def sized_model(model, n_regions=None, max_conditions=None):
    """A copy of the fitted DefragModel as a fit with n_regions (or max_conditions) prints it,
    read off its path_ (a searched form): the candidates this fit grew. A refit with that
    parameter prints the same where this fit grew what it would: a number of regions on the
    path (else a ValueError), a budget up to the fit's own max_conditions (else, and for a
    fit without a budget in regression or two classes, whose path holds no sums, a
    UserWarning)."""
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
        trees = path["form"] == "tree"
        if n_regions is not None and not np.any(trees):
            # a sum's size is its budget (a refit with form='sum' takes max_conditions only)
            raise ValueError("with_size(n_regions=) reads a tree of that many regions, and this fit's path "
                             "holds sums of trees only (form='sum'): use with_size(max_conditions=)")
        if n_regions is not None and not np.any(trees & (path["n_regions"] == n_regions)):
            # a refit with n_regions grows its trees that far; this path stops before
            sizes = sorted({int(k) for k in path["n_regions"][trees]})
            raise ValueError(f"n_regions={n_regions}: this fit's path holds trees of {_ranges(sizes)} regions "
                             f"(path_['n_regions']); refit with n_regions={n_regions}")
        fitted = model.max_conditions
        n_classes = len(model.classes_) if hasattr(model, "classes_") else 0
        if max_conditions is not None and (max_conditions > fitted if fitted is not None
                                           else weighs_sums(model.form, n_classes)):
            grown = f"for max_conditions={fitted}" if fitted is not None else "without a budget: no sums"
            warnings.warn(f"with_size(max_conditions={max_conditions}) reads the trees and sums this fit grew "
                          f"({grown}); a refit with that budget searches more and can print another explanation",
                          UserWarning, stacklevel=user_stacklevel())
        se = path.get("validation_se", np.full(len(path["form"]), np.nan))  # (a path_ saved without it)
        cands = [Candidate(str(f), float(p), int(k), float(e), float(c), n_conditions=int(nc), n_regions=int(nr),
                           validation_se=float(v))
                 for f, p, k, e, c, nc, nr, v in zip(path["form"], path["literal_price"], path["size"],
                                                     path["validation_error"], path["mean_checks"],
                                                     path["n_conditions"], path["n_regions"], se)]
        i = choose(cands, max_conditions, n_regions, regression=not n_classes)
        out.n_regions, out.max_conditions = n_regions, max_conditions
        out.rules_ = model.path_rules_[i]
        out.n_regions_ = int(out.rules_.n_regions)
        out.path_ = dict(path, chosen=i)
    out.n_conditions_ = out.rules_.n_conditions
    return out
