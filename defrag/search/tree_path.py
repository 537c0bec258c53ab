"""The explanation searched for (form "tree" or "sum"): a tree of rules over the ensemble's
splits grown from the boxes of every restart's components (search/tree_search.py), or under
a budget of conditions a sum of small trees (search/additive_search.py); its form, the
price of a box's extra conditions and its size chosen by cross-validation.

The search runs on the restarts' rows (at most SEARCH_ROWS of them, drawn at random, as
the rule list's search: search/list_path.py):

1. the targets the trees are grown on: the ensemble's own predictions of those rows, class
   probabilities where it gives them (a tree is an explanation of the ensemble), else
   the fit's targets (y, or the ensemble's labels); the validation errors are those of the
   fit's targets (y where it is given);
2. candidate boxes: the literals each component of each restart fixes (search/list_path.py's);
3. a tree grown best-first, region by region, at every size up to the largest, for each
   price of a box's extra conditions in LITERAL_PRICES (a box of k conditions must drop the
   squared error by price x the region's squared error for each condition beyond the
   first; infinity: one condition a node, a plain tree), on 3 of 4 folds of the rows and
   scored on the fourth, with the comparisons a reader makes per row there;
4. the choice (``choose``): with ``max_conditions`` B, the candidate of smallest
   validation error among those printing at most B comparisons, sums of trees
   included (regression and two classes); in regression, where that is a tree, the sum
   of smallest validation error instead where it comes within one standard error of the
   tree's (a sum's values rest on more rows than a tree's leaves of as many splits);
   with ``n_regions`` K, the tree of K regions
   of smallest validation error; else (the default), among the trees a reader checks in
   at most READING_SLACK times the comparisons per row of the plain tree of as many
   regions (a box must not cost a reader much more than the splits it stands for), or
   that beat the plain tree a reader would need to say as much: where no plain tree comes
   within one standard error of a box tree, as on an XOR whose first split pays nothing
   alone, the plain tree that comes closest is the measure (with the same slack); where
   some do, the one of fewest regions among them, which the box tree must beat on regions
   and not lose to on comparisons per row; and,
   in classification, printing every class where any does, the fewest regions whose
   validation error exceeds the smallest by at most one standard error of the paired
   difference of their per-row losses (the one-standard-error rule);
   a size asked for reads only the trees a fit of that size grows. Where the rows are too
   few to validate (fewer than MIN_VALIDATION a fold), the largest tree the path holds
   within the budget, as the list. In every tree two
   sibling leaves that print one class are one leaf, and no region holds fewer than
   MIN_REGION_SHARE of the rows unless the size asked for needs smaller ones;
5. every candidate grown again on all the search rows: the path (``path_``) and
   ``with_size`` read them without a refit.

A warm start (``reference_rules``): two more candidates (REFERENCE_FORMS), the earlier
explanation's regions as they are and the earlier tree edited on today's rows, both
cross-validated as the searched trees (search/warm_start.py). The first of the two whose
validation error exceeds that of the candidate ``choose`` picks otherwise by at most
REFERENCE_TOLERANCE of it, and that fits the same budget or size (at most max_conditions
comparisons; n_regions regions), is printed, else today's search.
"""
import dataclasses
import math
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..rules.tree import RuleTree
from ..utils.interrupt import copy_context_run
from ..utils.threads import threads_now
from ..utils.validation import user_stacklevel
from .additive_search import additive_value_path, grow_additive_path
from .grown_trees import GrownTrees, leaf_values, sum_of
from .list_path import MIN_VALIDATION, N_FOLDS, read_out, search_inputs
from .tree_search import grow_tree_path, grow_tree_path_scored
from .warm_start import reference_regions, warm_start, weakest_split

# The prices of a box's conditions beyond the first (multiples of the region's squared
# error a condition must drop); inf: a condition a node (a plain tree).
LITERAL_PRICES = (0.02, 0.1, math.inf)
# The default explanation reads in at most this many times the comparisons per row of
# the plain tree of as many regions.
READING_SLACK = 1.3
# No region of a tree holds fewer than this share of the rows it is grown on.
MIN_REGION_SHARE = 0.01
# The default's largest size in classification: at least this many regions more than the
# classes (every class can have a region, with room to spare).
DEFAULT_CLASS_ROOM = 5
# The price standing for an infinite one in the kernel: a box of k conditions drops the
# loss by at most the region's squared error, so any price above 1 leaves one condition a node.
ONE_CONDITION_PRICE = 2.0
# Backfitting rounds of a sum of trees after each split (search/additive_search.py).
BACKFIT_ROUNDS = 3
# Splits of the largest sum of trees searched under a budget, at most.
MAX_SUM_SPLITS = 64
# A warm start keeps the reference where its validation error is at most this much
# (relative) above the candidate chosen otherwise: not one standard error, which on a few
# hundred rows let a reference that explains today's model clearly worse through (Boston,
# a LightGBM retrain: R^2 0.79 on the test rows against 0.88 fresh).
REFERENCE_TOLERANCE = 0.01
# The warm start's candidates (search/warm_start.py), in order of preference: the reference's
# regions as they are, and the reference edited.
REFERENCE_FORMS = ("reference", "reference edited")


@dataclasses.dataclass
class Candidate:
    """One explanation of the path: a tree grown at ``price`` to ``size`` regions, or a sum
    of trees of ``size`` splits; its cross-validated error and comparisons per row (NaN
    where not measured), and once grown on all search rows its printed comparisons and
    regions (``n_conditions``, ``n_regions``) and its RuleTree (``tree``)."""

    form: str  # "tree" or "sum"
    price: float
    size: int
    validation_error: float = math.nan
    checks: float = math.nan
    losses: np.ndarray = None  # per validation row
    validation_se: float = math.nan  # the standard error of validation_error (its losses')
    n_conditions: int = -1
    n_regions: int = -1
    train_error: float = math.nan
    tree: RuleTree = None
    reaches_all: bool = True  # classification: its leaves print every class


@dataclasses.dataclass
class SearchedTree:
    candidates: list  # the trees' Candidates hold no tree: grown builds it
    chosen: int  # index into candidates
    grown: GrownTrees = None


# --------------------------------------------------------------------- targets
def growth_targets(soft, y_codes, n_classes, classes, soft_classes):
    """(T, what): the targets the trees are grown on, (n, d): the ensemble's class
    probabilities (columns in classes' order) or predictions where given and they match
    the fit's classes, else the class indicators of y_codes (or its values)."""
    if soft is not None:
        soft = np.asarray(soft, dtype=np.float64)
        if n_classes == 0:
            return soft.reshape(-1, 1), "ensemble"
        # (a column per class: HistGradientBoosting and LightGBM fitted on one class give
        # two columns for their one class)
        if soft.ndim == 2 and soft.shape[1] == n_classes and soft_classes is not None and \
                len(soft_classes) == n_classes and np.array_equal(np.asarray(soft_classes), np.asarray(classes)):
            return soft, "ensemble"
    if n_classes == 0:
        return np.asarray(y_codes, dtype=np.float64).reshape(-1, 1), "targets"
    T = np.zeros((len(y_codes), n_classes))
    T[np.arange(len(y_codes)), y_codes] = 1.0
    return T, "targets"


def sum_path_scores(steps, S_tr, T_tr, S_va, y_va, n_classes, max_size):
    """Per number of splits b = 1 .. max_size of the sum of trees of steps: the validation
    losses (squared errors; two classes: 0/1 errors of the sum against 1/2), sizes beyond
    the path repeating its largest sum. (max_size, n_va)."""
    losses = np.empty((max_size, S_va.shape[0]))
    path = additive_value_path(S_tr, T_tr, steps[:max_size], BACKFIT_ROUNDS)
    for b in range(1, max_size + 1):  # over sizes, not rows
        k = min(b, len(path))
        p = sum_predict(S_va, steps, *path[k - 1], n_splits=k)
        losses[b - 1] = ((p > 0.5).astype(np.int64) != y_va) if n_classes else (p - y_va) ** 2
    return losses


def sum_predict(S, steps, base, values, n_splits):
    """The sum of trees of the first n_splits steps on the rows of S (its first target)."""
    total = np.full(S.shape[0], float(np.asarray(base).ravel()[0]))
    for t, term_values in enumerate(values):  # over terms; each leaf's value looked up by node id
        splits = [(nd, l) for (i, nd, l) in steps[:n_splits] if i == t]
        value = np.zeros(2 * len(splits) + 1)
        value[list(term_values)] = [float(np.asarray(out).ravel()[0]) for out in term_values.values()]
        total += value[_route_term(S, splits)]
    return total


def _route_term(S, splits):
    """The leaf node of each row of S in a term whose k-th split (node, l) makes nodes
    2k+1 (s_l = 1) and 2k+2."""
    node = np.zeros(S.shape[0], dtype=np.int64)
    for k, (nd, l) in enumerate(splits):  # over the term's splits, in order
        at = node == nd
        node[at] = np.where(S[at, l], 2 * k + 1, 2 * k + 2)
    return node


# --------------------------------------------------------------------- choice
def choose(candidates, max_conditions=None, n_regions=None, regression=False):
    """The index of the candidate printed: see the module's docstring (4), and for a warm
    start its last paragraph."""
    best = _choose_searched(candidates, max_conditions, n_regions, regression)
    b = candidates[best]
    refs = [i for i, c in enumerate(candidates) if c.form in REFERENCE_FORMS]
    for i in refs:  # the warm start's, in order of preference
        r = candidates[i]
        fits = (max_conditions is None or 0 <= r.n_conditions <= max_conditions) and \
            (n_regions is None or r.n_regions == n_regions)
        margin = REFERENCE_TOLERANCE * b.validation_error
        within = np.isfinite(r.validation_error) and \
            r.validation_error <= b.validation_error + margin + 1e-12 * abs(b.validation_error)
        # where nothing is validated (few rows), the reference is kept: nothing says it costs more
        unmeasured = not np.isfinite(r.validation_error) and not np.isfinite(b.validation_error)
        if fits and (within or unmeasured):
            return i
    return best


def weighs_sums(form, n_classes):
    """Whether a fit of this form with a budget weighs sums of trees beside its trees
    (regression, n_classes 0, or two classes); a fit without a budget grows none."""
    return form in ("auto", "sum") and n_classes in (0, 2)


def _choose_searched(candidates, max_conditions=None, n_regions=None, regression=False):
    """choose among the searched candidates (not a warm start's reference)."""
    searched = [i for i, c in enumerate(candidates) if c.form not in REFERENCE_FORMS]

    def key(i):
        c = candidates[i]
        return (c.validation_error, c.n_conditions, -c.price, i)

    # a size asked for reads the trees a fit of that size grows (at most n_regions, or
    # max_conditions + 1, regions before same-class leaves merge): with_size prints its refit
    cap = n_regions if n_regions is not None else (None if max_conditions is None else max_conditions + 1)
    if cap is not None:
        searched = [i for i in searched if candidates[i].form != "tree" or candidates[i].size <= cap]
    measured = [i for i in searched if np.isfinite(candidates[i].validation_error)]
    if not measured and n_regions is None:
        # nothing validated (too few rows for MIN_VALIDATION a fold): the largest tree the
        # path holds within the budget, as the list takes its largest (search/list_path.py);
        # the path stops growing where no split fits the targets better
        fits = [i for i in searched if max_conditions is None or 0 <= candidates[i].n_conditions <= max_conditions]
        pool = [i for i in fits if candidates[i].form == "tree"] or fits
        if pool:
            return max(pool, key=lambda i: (candidates[i].n_regions, -candidates[i].n_conditions,
                                            candidates[i].price, -i))
    if max_conditions is not None:
        within = [i for i in measured if 0 <= candidates[i].n_conditions <= max_conditions]
        if not within:  # nothing measured fits: the smallest printed
            within = [min(searched, key=lambda i: (candidates[i].n_conditions, i))]
        best = min(within, key=key)
        sums = [i for i in within if candidates[i].form == "sum"]
        if regression and sums and candidates[best].form == "tree":
            # a sum of as many splits rests each of its values on more rows than a tree's
            # leaves (each part's split halves all the rows, a tree's split one leaf's):
            # where the best tree does not beat the best sum by one standard error, the sum
            # (benchmarks/sum_vs_tree.py: the lower test error on generated data)
            best_sum = min(sums, key=key)
            t = candidates[best]
            if candidates[best_sum].validation_error <= t.validation_error + t.validation_se:
                return best_sum
        return best
    trees = [i for i in measured if candidates[i].form == "tree"]
    if n_regions is not None:
        exact = [i for i in trees if candidates[i].n_regions == n_regions]
        if not exact:
            exact = [i for i in searched if candidates[i].form == "tree" and candidates[i].n_regions == n_regions] \
                or [max((i for i in searched if candidates[i].form == "tree"),
                        key=lambda i: (candidates[i].n_regions, -i))]
        return min(exact, key=key)
    if not trees:
        return 0
    plain = {c.size: c.checks for c in candidates if c.form == "tree" and c.price == math.inf}
    largest = max(plain) if plain else None

    plain_trees = [i for i in trees if candidates[i].price == math.inf]
    best_row = min(range(len(plain_trees)), key=lambda k: key(plain_trees[k])) if plain_trees else None
    best_plain = candidates[plain_trees[best_row]] if plain_trees else None
    plain_losses = _loss_rows([candidates[j] for j in plain_trees])

    def readable(i):
        c = candidates[i]
        if c.price == math.inf or largest is None:
            return True
        limit = plain[min(c.size, largest)]
        if c.checks <= READING_SLACK * limit + 1e-12 or best_plain is None:
            return True
        # else it is read against the plain tree a reader would need to say as much: where
        # no plain tree comes within one standard error of it (an XOR's first split pays
        # nothing alone), the plain tree that comes closest; else the fewest regions among
        # those that do, which it must beat on regions and not lose to on reads per row
        # (an XOR with noise under a boosted model: 3 box regions against 10 plain ones)
        beaten = _better_each(c, plain_losses)  # c against every plain tree at once
        if beaten[best_row]:
            return c.checks <= READING_SLACK * max(limit, best_plain.checks) + 1e-12
        as_good = [candidates[j] for j, b in zip(plain_trees, beaten) if not b]
        simplest = min(as_good, key=lambda p: (p.n_regions, p.validation_error))
        return c.n_regions < simplest.n_regions and c.checks <= simplest.checks + 1e-12

    pool = [i for i in trees if readable(i)] or trees
    pool = [i for i in pool if candidates[i].reaches_all] or pool  # every class printed, where any does
    best = candidates[min(pool, key=key)]

    # the one-standard-error rule, paired: the simplest tree whose validation error exceeds
    # the best's by at most one standard error of their difference (per-row losses on the
    # same validation rows): a smaller difference is noise
    beats = _better_each(best, _loss_rows([candidates[i] for i in pool]))

    def near(k, c):
        if c.losses is None or best.losses is None or c.losses.size < 2:
            return c is best
        return not beats[k]

    within = [i for k, i in enumerate(pool) if near(k, candidates[i])]
    return min(within, key=lambda i: (candidates[i].n_regions, candidates[i].validation_error,
                                      candidates[i].n_conditions, i))


def _loss_rows(cands):
    """The candidates' per-row validation losses as the rows of one array (a row of NaN
    where a candidate has none), for _better_each."""
    n = next((c.losses.size for c in cands if c.losses is not None), 0)
    out = np.full((len(cands), n), np.nan)
    for k, c in enumerate(cands):  # over candidates, not rows
        if c.losses is not None and c.losses.size == n:
            out[k] = c.losses
    return out


def standard_error(losses):
    """The standard error of the mean of per-row losses (NaN below two rows)."""
    if losses is None or losses.size < 2:
        return math.nan
    return float(np.std(losses, ddof=1) / math.sqrt(losses.size))


def _better_each(a, losses):
    """For each row of losses (_loss_rows: another candidate b's per-row losses on the same
    validation rows), whether candidate a's validation error is below b's by more than one
    standard error of their paired difference; False where either has no such losses."""
    if a.losses is None or a.losses.size < 2 or losses.shape[1] != a.losses.size:
        return np.zeros(losses.shape[0], dtype=bool)
    diff = losses - a.losses
    se = np.std(diff, axis=1, ddof=1) / math.sqrt(diff.shape[1])
    with np.errstate(invalid="ignore"):  # (NaN rows: no losses, compare False)
        return diff.mean(axis=1) > se + 1e-12 * abs(a.validation_error)


# --------------------------------------------------------------------- search
def search_tree(config, prepared, component_etas, soft=None, soft_classes=None):
    """The SearchedTree of the restarts' components (component_etas: eta arrays, one row per
    component, of every restart in index order); soft: the ensemble's predictions of the
    restarts' rows (class probabilities, columns soft_classes) or None."""
    p = prepared
    X, y, n_classes = p.X_fit, np.asarray(p.fit_target.y), p.fit_target.n_classes
    inputs = search_inputs(config, p, component_etas, 36)
    rng, rows, splits, S = inputs.rng, inputs.rows, inputs.splits, inputs.S
    feature, group, candidates_boxes = inputs.feature, inputs.group, inputs.candidates
    T, _ = growth_targets(None if soft is None else np.asarray(soft)[rows], y[rows], n_classes, p.classes,
                          soft_classes)
    y_s = y[rows] if n_classes else y[rows].astype(np.float64)

    budget, n_regions = config.max_conditions, config.n_regions
    default = budget is None and n_regions is None
    largest = config.largest_regions
    if default and config.max_regions is None and n_classes:
        largest = max(largest, n_classes + DEFAULT_CLASS_ROOM)  # room for a region per class
    max_regions = max(1, min(largest, rows.size))
    # no tree region holds fewer rows than MIN_REGION_SHARE of them, unless the size asked
    # for needs smaller ones (at most half the rows per region of the largest size): a
    # tree of the default's path (with_size) is the one a fit of its size prints
    def leaf_rows(part):
        return max(1, min(math.ceil(MIN_REGION_SHARE * len(part)), len(part) // (2 * max_regions)))
    with_sums = budget is not None and weighs_sums(config.form, n_classes)
    sum_size = min(budget if budget is not None else 0, MAX_SUM_SPLITS, max(rows.size - 1, 0)) if with_sums else 0
    prices = LITERAL_PRICES if config.form in ("auto", "tree") or sum_size == 0 else ()
    T_sum = T[:, 1:2] if n_classes == 2 else T[:, :1]
    # the outputs (leaves' predictions, a sum's values): where y was given, y's mean (class
    # shares) in each region, as every form prints y's values when fitted to y; else the
    # ensemble's mean prediction in each region, the targets the regions are grown on (an
    # average of its predictions varies less from sample to sample than its labels' mean
    # over a region's few rows); constant targets: their constant
    y_outputs = p.constant or (p.y_given and soft is not None)  # (without soft, T is y's already)
    U = growth_targets(None, y[rows], n_classes, p.classes, None)[0] if y_outputs else T
    U_sum = U[:, 1:2] if n_classes == 2 else U[:, :1]
    candidates = [Candidate("tree", price, k) for price in prices for k in range(1, max_regions + 1)]
    candidates += [Candidate("sum", math.inf, b) for b in range(1, sum_size + 1)]
    if p.constant:
        candidates, prices, sum_size = [Candidate("tree", math.inf, 1)], (math.inf,), 0

    def grow_tree(part, price, scored=None, n_threads=1):
        # an infinite price: boxes of one condition (inf x 0 would be NaN in the kernel);
        # scored: the validation rows, whose (steps, losses, checks) at every size it returns
        price = min(price, ONE_CONDITION_PRICE)
        if scored is None:
            # all the rows: the tree printed, its every node's output from the kernel
            return grow_tree_path(S[part], T[part], feature, group, candidates_boxes, max_regions,
                                  literal_price=price, min_leaf=leaf_rows(part), n_threads=n_threads,
                                  outputs=None if U is T else U[part], node_outputs=True)
        return grow_tree_path_scored(S[part], T[part], feature, group, candidates_boxes, max_regions, S[scored],
                                     y_s[scored], n_classes, literal_price=price, min_leaf=leaf_rows(part),
                                     n_threads=n_threads, outputs=None if U is T else U[part])

    def grow_sum(part, n_threads=1):
        return grow_additive_path(S[part], T_sum[part], sum_size, backfit_rounds=BACKFIT_ROUNDS,
                                  n_threads=n_threads)

    n = rows.size
    validated = not p.constant and n >= MIN_VALIDATION * N_FOLDS
    fold = rng.permutation(n) % N_FOLDS
    parts = [np.flatnonzero(fold != f) for f in range(N_FOLDS)] if validated else []
    held_out = [np.flatnonzero(fold == f) for f in range(N_FOLDS)] if validated else []
    every = parts + [np.arange(n)]  # the folds' training parts, then all the rows
    # every path (each price's trees and the sums, on each fold's training part and on all
    # the rows) grown side by side on the fit's threads, each on one: the same paths as
    # one by one (a path does not depend on its thread count); a fold's trees scored on its
    # validation rows as they grow
    jobs = [(grow_tree, (part, price, va)) for price in prices for part, va in zip(every, held_out + [None])]
    jobs += [(grow_sum, (part,)) for part in every] if sum_size else []
    results = iter(side_by_side(jobs))
    tree_paths = {price: [next(results) for _ in every] for price in prices}
    sum_paths = [next(results) for _ in every] if sum_size else None
    if validated:
        # per price (and for the sums) every size's losses and checks on all rows, a row per
        # size: each fold's validation rows filled at once
        tree_losses = {price: (np.zeros((max_regions, n)), np.zeros((max_regions, n))) for price in prices}
        sum_losses = np.zeros((sum_size, n))
        for f, (tr, va) in enumerate(zip(parts, held_out)):  # over folds, then prices: not rows
            for price in prices:
                tree_paths[price][f], losses, checks = tree_paths[price][f]
                tree_losses[price][0][:, va], tree_losses[price][1][:, va] = losses, checks
            if sum_size:
                steps = sum_paths[f]
                sum_losses[:, va] = sum_path_scores(steps, S[tr], U_sum[tr], S[va], y_s[va], n_classes, sum_size) \
                    if steps else _constant_losses(U_sum[tr], y_s[va], n_classes)
        for c in candidates:
            if c.form == "tree":
                c.losses, checks = tree_losses[c.price][0][c.size - 1], tree_losses[c.price][1][c.size - 1]
                c.checks = float(checks.mean())
            else:
                c.losses, c.checks = sum_losses[c.size - 1], math.nan
            c.validation_error, c.validation_se = float(c.losses.mean()), standard_error(c.losses)

    # every candidate as grown on all the search rows: its boxes read out as conditions
    grown = {price: paths[-1][0] for price, paths in tree_paths.items()}
    sum_steps = sum_paths[-1] if sum_size else []
    distinct = sorted({tuple(b) for steps in grown.values() for _, b in steps} | {(l,) for _, _, l in sum_steps})
    read = dict(zip(distinct, read_out([distinct], splits, config.kappa, X, p.names)[0])) if distinct else {}
    names = dict(feature_names=p.names, classes=p.classes, supports_missing=p.splits.supports_missing,
                 encoding=p.splits.encoding)
    values = {price: leaf_values(paths[-1][1], p.classes, n_classes) for price, paths in tree_paths.items()}
    sum_values = additive_value_path(S, U_sum, sum_steps, BACKFIT_ROUNDS) if sum_size else []
    boxes_grown = {tuple(b) for steps in grown.values() for _, b in steps}
    trees = GrownTrees(grown, {box: read[box].conditions for box in boxes_grown}, values, names)
    for c in candidates:
        if c.form == "tree":
            c.n_conditions, c.n_regions = trees.n_conditions(c.price, c.size), trees.n_regions(c.price, c.size)
            if n_classes:
                c.reaches_all = len(set(map(str, trees.labels(c.price, c.size)))) >= n_classes
        else:
            k = min(c.size, len(sum_values))  # (a path that stopped early: its largest sum)
            model = sum_values[k - 1] if k else (U_sum.mean(axis=0), [])
            c.tree = sum_of(sum_steps[:k], model, read, p.classes, n_classes, names)
            c.n_conditions, c.n_regions = c.tree.n_conditions, c.tree.n_regions
    if config.form == "auto":  # a sum that prints its numbers coarsely is not an explanation to choose
        candidates = [c for c in candidates if c.form != "sum" or not c.tree.coarse] or candidates
    if config.max_regions is not None:  # a sum's regions (its parts' leaves multiplied) count too
        within = [c for c in candidates if c.form != "sum" or c.n_regions <= config.max_regions]
        if not within:  # form="sum": its smallest sum
            within = [min(candidates, key=lambda c: c.n_regions)]
            warnings.warn(f"max_regions={config.max_regions}: the smallest sum of trees has "
                          f"{within[0].n_regions} regions", UserWarning, stacklevel=user_stacklevel())
        candidates = within
    if config.reference_rules is not None:
        refs = reference_candidates(config, p, rows, S, T, U, y_s, n_classes, (parts, held_out), inputs, trees,
                                    candidates, leaf_rows, read)
        candidates += refs
    chosen = choose(candidates, budget, n_regions, regression=not n_classes)
    if candidates[chosen].form == "sum" and candidates[chosen].tree.coarse:
        warnings.warn("the sum of trees prints its numbers to fewer digits than their spread needs (its values "
                      "are too large against their differences for exact sums); form='tree' keeps them",
                      UserWarning, stacklevel=user_stacklevel())
    if n_regions is not None and candidates[chosen].n_regions != n_regions:
        warnings.warn(f"n_regions={n_regions}: no more than {candidates[chosen].n_regions} regions lower the "
                      f"training loss; the tree has {candidates[chosen].n_regions}", UserWarning,
                      stacklevel=user_stacklevel())
    return SearchedTree(candidates, chosen, trees)


# --------------------------------------------------------------------- warm start
def reference_candidates(config, p, rows, S, T, U, y_s, n_classes, folds, inputs, trees, candidates, leaf_rows,
                         read):
    """The warm start's Candidates (search/warm_start.py, REFERENCE_FORMS): the reference's
    regions as they are, and the reference edited on today's rows, each edit priced against
    the weakest split of the tree the search picks otherwise."""
    searched = [c for c in candidates if c.form == "tree"]
    best = searched[_choose_searched(searched, config.max_conditions, config.n_regions)] if searched else None
    floor = weakest_split(S, T, trees.kept(best.price, best.size) if best is not None else [])
    price = min(best.price if best is not None else math.inf, ONE_CONDITION_PRICE)

    def grow(at):
        grown = grow_tree_path(S[at], T[at], inputs.feature, inputs.group, inputs.candidates, 2,
                               literal_price=price, min_leaf=leaf_rows(at))
        return grown[0][1] if grown else None

    def read_boxes(boxes):
        missing = [b for b in boxes if b not in read]
        if missing:
            read.update(zip(missing, read_out([missing], inputs.splits, config.kappa, p.X_fit, p.names)[0]))
        return {b: read[b].conditions for b in boxes}

    X = p.X_fit[rows]
    as_is = reference_regions(config.reference_rules, p, X, y_s, U, n_classes, folds)
    edited = warm_start(config.reference_rules, p, inputs.splits, X, S, T, U, y_s, n_classes, folds, inputs.group,
                        grow, lambda m: leaf_rows(range(m)), floor, config.reference_edit_price, read_boxes)
    out = []
    for form, (tree, losses, _) in zip(REFERENCE_FORMS, [as_is, edited or as_is]):
        c = Candidate(form, math.inf, tree.n_regions, tree=tree, losses=losses)
        c.n_conditions, c.n_regions = tree.n_conditions, tree.n_regions
        if losses is not None:
            c.validation_error, c.checks = float(losses.mean()), float(tree.checks(X).mean())
            c.validation_se = standard_error(losses)
        out.append(c)
    return out


def side_by_side(jobs):
    """fn(*args, n_threads=1) of each (fn, args) of jobs, side by side on the threads this
    context may use (each kernel call runs without the GIL), results in order."""
    workers = min(len(jobs), threads_now())
    if workers <= 1:
        return [fn(*args) for fn, args in jobs]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        # a context copy per task: one copy cannot run in two threads at once
        futures = [pool.submit(copy_context_run(fn), *args) for fn, args in jobs]
        return [f.result() for f in futures]


def _constant_losses(T_tr, y_va, n_classes):
    m = float(T_tr.mean()) if T_tr.size else 0.0
    return ((m > 0.5) != y_va).astype(np.float64) if n_classes else (m - y_va) ** 2
