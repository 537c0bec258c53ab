"""form="list": the rule list searched for over the ensemble's splits, from the boxes
of every restart's components (search/list_search.py), at every size, and its size.

The search runs on the restarts' rows (at most SEARCH_ROWS of them, drawn at random):

1. the candidate boxes: the literals each component of each restart fixes, without those
   that change no row's cover, deduplicated;
2. the size: the list is grown, one region at a time (a rule appended, the default's region
   split by one condition, or a rule's region split the way CART splits a leaf:
   search/list_search.py's grow_list_sizes), on 3 of 4
   folds of those rows and the list of each size (1, 2, ... regions) scored on the fourth;
   the default size is the smallest whose validation error is within one standard error
   of the smallest (Breiman et al.'s one-SE rule for pruning CART), unless ``n_regions``
   fixes it;
3. the list: grown again on all the search rows, to the largest size, its rules read out
   as conditions (rules/extract.py, the readout of a component's eta) on the restarts' rows;
   in classification each size's conditions then pruned against its training loss there
   (rules/lists.py's prune_rule_lists, step 4 of a restart's list).

A size's list is not a prefix of the next one where the step between them split a region
(a narrower copy of a rule inserted before it); the path keeps every size's list. A list
grown by appends alone underfits, mostly in regression: splitting a rule's region, and the
default's, lets it follow the ensemble as a tree does. The search fits the targets of the
mixture: y, or the ensemble's predictions when y is None (its values, or its class labels:
the same for every source and for rows on a cluster). In regression with y given (and a
model that predicts its coded rows), a second list is grown on the ensemble's predictions,
a smoother target than y, its outputs and its cross-validated losses on y (the same
folds), and the one-SE rule across the two lists picks one: the smoother target fits
better on y where y is noisy.
"""
import dataclasses
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..rules import Rule
from ..rules.extract import extract_rules_conditions
from ..rules.lists import first_match_index, prune_rule_lists, rule_columns
from ..utils.interrupt import copy_context_run
from ..utils.threads import threads_now
from ..utils.validation import user_stacklevel
from .list_search import (box_cover, candidate_boxes, component_boxes, eta_of_box, grow_list_sizes,
                          literal_groups, simplified_boxes)

# Rows the search runs on at most: the split matrix is n x L booleans and each move one
# product with it. 3,000 rows place a threshold to within 0.03% of the rows' quantiles.
SEARCH_ROWS = 3000
# The size by N_FOLDS-fold cross-validation of the whole search (each fold's list grown on
# the other folds), where each fold has at least MIN_VALIDATION rows; else the largest.
N_FOLDS = 4
MIN_VALIDATION = 10
# Entries of the split matrix (rows x splits) below which the lists of a cross-validation
# are grown one by one: each takes a few tenths of a millisecond there, about what
# handing them to threads costs (servo, 116 x 19: 3.8-5.2 ms side by side against
# 3.6-5.1 ms one by one; glass, 149 x 123: 4.7 against 7.6 ms).
SIDE_BY_SIDE_WORK = 5_000
# Cells (sizes x regions x rows) of the boolean array that gives the rows' regions in the
# lists of several sizes at once (_size_losses): 4 MB, one block on the search's rows
# with n_components up to 10 and 3,000 rows (10 x 11 x 3,000).
SIZES_AT_ONCE = 1 << 22


@dataclasses.dataclass
class SearchedList:
    """The searched list at every size (rules: conditions only, in order) and the size
    chosen."""

    lists: list  # per size k = 1, 2, ...: the Rule objects (no outputs) of the list of k regions
    size: int  # regions of the chosen list (its rules + the default)
    validation_error: np.ndarray  # per size 1..len(lists) (NaN where not measured)
    # the restarts' own list (form="restarts"'s) is the better one by cross-validation: the
    # readout prints it, and the path stays the searched list's
    restarts_list_chosen: bool = False
    restarts_list_validation_error: float = float("nan")


def _targets(y, n_classes):
    """The search's targets: the values about their mean, or the class indicators."""
    if n_classes == 0:
        y = np.asarray(y, dtype=np.float64)
        return (y - y.mean())[:, None]
    T = np.zeros((y.size, n_classes))
    T[np.arange(y.size), y] = 1.0
    return T


def _size_losses(lists, S_tr, y_tr, n_classes, S_val, y_val):
    """Per-row validation losses (sizes x validation rows) of the list at each size (lists:
    its boxes per size) grown on the training part: outputs fitted on the training part,
    applied to the validation rows (0/1 errors, or squared errors)."""
    # each distinct box's cover once (a box is in the lists of many sizes), on both parts;
    # then every size at once, SIZES_AT_ONCE cells at a time: its boxes' columns, padded
    # with an all-true column (the default), whose first true one is each row's region
    distinct = sorted({tuple(b) for boxes in lists for b in boxes})
    column = {b: j for j, b in enumerate(distinct)}
    width = max(len(boxes) for boxes in lists) + 1  # regions of the largest list
    ids = np.full((len(lists), width), len(distinct))
    for k, boxes in enumerate(lists):  # over sizes, not rows
        ids[k, :len(boxes)] = [column[tuple(b)] for b in boxes]
    covers = []
    for S in (S_tr, S_val):
        cover = np.ones((S.shape[0], len(distinct) + 1), dtype=bool)
        for j, b in enumerate(distinct):  # over boxes, not rows
            cover[:, j] = box_cover(S, b)
        covers.append(cover)
    losses = np.empty((len(lists), S_val.shape[0]))
    step = max(1, SIZES_AT_ONCE // max(width * max(S_tr.shape[0], S_val.shape[0]), 1))
    for k in range(0, len(lists), step):  # over blocks of sizes, not rows
        block = ids[k:k + step]
        g_tr, g_va = (np.argmax(c[:, block], axis=2).T for c in covers)  # (sizes, rows)
        losses[k:k + step] = _region_losses(g_tr, y_tr, g_va, y_val, width, n_classes)
    return losses


def _region_losses(g_tr, y_tr, g_va, y_va, n_regions, n_classes):
    """Per-row losses on the validation rows (region g_va, target y_va) of each region's
    output fitted on the training rows (g_tr, y_tr): 0/1 errors of its majority class
    (lowest code on ties), or squared errors of its mean (0 for a region without
    training rows). g_tr and g_va may hold one row per list (lists x rows): each list's
    regions are its own, its losses a row of the result."""
    one = np.ndim(g_tr) == 1
    g_tr, g_va = np.atleast_2d(g_tr), np.atleast_2d(g_va)
    # the regions of list i are i * n_regions + g: one bincount over all lists, each
    # region's rows summed in row order (the sums of one list's bincount)
    n_lists = g_tr.shape[0]
    offset = (np.arange(n_lists) * n_regions)[:, None]
    g_tr, g_va = (g_tr + offset).ravel(), g_va + offset
    n_groups = n_lists * n_regions
    y_all = np.tile(y_tr, n_lists)
    if n_classes:
        counts = np.bincount(g_tr * n_classes + y_all, minlength=n_groups * n_classes)
        pred = np.argmax(counts.reshape(n_groups, n_classes), axis=1)
        losses = (pred[g_va] != y_va).astype(np.float64)
    else:
        size = np.bincount(g_tr, minlength=n_groups)
        mean = np.bincount(g_tr, weights=y_all, minlength=n_groups) / np.maximum(size, 1)
        losses = (mean[g_va] - y_va) ** 2
    return losses[0] if one else losses


def one_se_size(losses):
    """The smallest size (1-based) whose mean validation loss is within one standard error
    (of the best size's per-row losses) of the smallest."""
    errors = losses.mean(axis=1)
    best = int(np.argmin(errors))
    se = float(np.std(losses[best])) / np.sqrt(max(losses.shape[1], 1))
    return int(np.flatnonzero(errors <= errors[best] + se)[0]) + 1


def _fixed_list_losses(cover, y, n_classes, fold):
    """Per-row validation losses of a list whose rules are fixed (cover: rows x rules),
    its outputs fitted on N_FOLDS - 1 folds and applied to the other, as for the searched
    list's sizes."""
    first = first_match_index(cover)
    losses = np.zeros(y.size)
    for f in range(N_FOLDS):  # over folds, not rows
        tr, va = fold != f, fold == f
        losses[va] = _region_losses(first[tr], y[tr], first[va], y[va], cover.shape[1] + 1, n_classes)
    return losses


def _cross_validated(S, targets, y, n_classes, candidates, feature, group, max_regions, fold):
    """Per target T of targets: (per-row losses on y (sizes x rows) of lists grown on T on
    N_FOLDS - 1 folds and applied to the other, every row validated once; the list grown
    on all the rows). A fold whose list stops early keeps its longest list for the larger
    sizes. The N_FOLDS + 1 lists of every target are grown side by side."""
    n = S.shape[0]
    parts = [np.flatnonzero(fold != f) for f in range(N_FOLDS)]
    jobs = [(S[tr], T[tr]) for T in targets for tr in parts + [slice(None)]]
    grown = _grown_side_by_side(jobs, feature, group, candidates, max_regions)
    out = []
    for t in range(len(targets)):  # over targets, then folds, not rows
        lists_of = grown[t * (N_FOLDS + 1):(t + 1) * (N_FOLDS + 1)]
        losses = np.zeros((max_regions, n))
        for f, (tr, lists) in enumerate(zip(parts, lists_of)):
            va = np.flatnonzero(fold == f)
            part = _size_losses(lists, S[tr], y[tr], n_classes, S[va], y[va])
            losses[:part.shape[0], va] = part
            losses[part.shape[0]:, va] = part[-1]
        out.append((losses, lists_of[-1]))
    return out


def _grown(S, T, feature, group, candidates, max_regions, n_threads=None):
    """The list's boxes at every size (search/list_search.py's grow_list_sizes), grown on
    the rows of S and T, to the largest size."""
    return grow_list_sizes(S, T, feature, group, candidates, max_regions - 1, n_threads=n_threads)


def _grown_side_by_side(jobs, feature, group, candidates, max_regions):
    """_grown of each (S, T) of jobs, side by side on the fit's threads (the kernel runs
    without the GIL), each on its share of them: the same lists as one by one (a list does
    not depend on the thread count). On the 2-core machine, the 10 lists of a regression
    fit on houseprices: 12.6 against 20.2 ms one by one; satellite's 5: 92 against 132 ms."""
    available = threads_now()
    workers = min(len(jobs), available)
    if workers <= 1 or jobs[-1][0].size < SIDE_BY_SIDE_WORK:
        return [_grown(S, T, feature, group, candidates, max_regions) for S, T in jobs]
    threads = max(1, available // workers)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        # a context copy per task: one copy cannot run in two threads at once
        futures = [pool.submit(copy_context_run(_grown), S, T, feature, group, candidates, max_regions, threads)
                   for S, T in jobs]
        return [f.result() for f in futures]


def read_out(lists, splits, kappa, X, names):
    """The rules (conditions only) of the lists' boxes as printed (rules/extract.py's
    readout of a component's eta, on the restarts' rows X), per size; each distinct box is
    read out once, on its own."""
    L = len(splits)
    boxes = sorted({tuple(b) for bs in lists for b in bs})
    if not boxes:
        return [[] for _ in lists]
    etas = np.array([eta_of_box(b, L) for b in boxes]).reshape(len(boxes), L)
    read = {b: Rule(c, None) for b, (c, _) in zip(boxes, extract_rules_conditions(etas, splits, kappa, X, names))}
    return [[read[tuple(b)] for b in bs] for bs in lists]


def _search_splits(config, splits, n_rows):
    """(the split table of the search, the indices of its splits in splits): the
    ceil(10 sqrt(n_rows)) of largest gain where max_splits is "auto" and the table has
    gains, else all of them."""
    kept = config.splits_kept(n_rows) if isinstance(config.max_splits, str) else None
    if kept is None or splits.gain is None or len(splits) <= kept:
        return splits, np.arange(len(splits))
    # top() keeps these rows, in table order (ties: table order)
    return splits.top(kept), splits.top_rows(kept)


@dataclasses.dataclass
class SearchInputs:
    """What a search of printed forms (a list here, a tree or a sum in search/tree_path.py)
    reads: rows, at most SEARCH_ROWS of the restarts' rows drawn by rng (which draws the
    folds next); the split table of the search and the rows' sides of its splits, S; the
    literals' feature and group (literal_groups); the components' distinct boxes over
    those splits, simplified on S, as CandidateBoxes (checked and packed once for every
    growth of the cross-validation)."""

    rng: np.random.Generator
    rows: np.ndarray
    splits: object
    S: np.ndarray
    feature: np.ndarray
    group: np.ndarray
    candidates: object


def search_inputs(config, prepared, component_etas, stream):
    """The SearchInputs of the restarts' components (component_etas: eta arrays, one row per
    component, of every restart in index order); stream: the search's own random stream of
    the fit's entropy."""
    p = prepared
    rng = np.random.default_rng(np.random.SeedSequence([p.entropy, stream]))
    rows = np.arange(p.X_fit.shape[0])
    if rows.size > SEARCH_ROWS:
        rows = np.sort(rng.choice(rows, SEARCH_ROWS, replace=False))
    # the splits the fit keeps for this many rows (max_splits="auto"'s rule, by gain): the
    # literals of the search; the components' boxes keep the literals among them
    splits, keep = _search_splits(config, p.splits, rows.size)
    S = splits.binary_features(p.X_fit[rows])
    feature, group = literal_groups(splits)
    # restarts often fix the same literals: each distinct box simplified once
    raw = component_boxes(component_etas, config.kappa, keep)
    boxes = {tuple(box) for box in simplified_boxes(S, sorted(raw), group)}
    candidates = candidate_boxes(sorted(b for b in boxes if b), 2 * len(splits))
    return SearchInputs(rng, rows, splits, S, feature, group, candidates)


def search_list(config, prepared, component_etas, restarts_list=None, predict=None):
    """The SearchedList of the restarts' components (component_etas: eta arrays, one row
    per component, of every restart in index order). restarts_list: the kept restart's
    own rule list (rules/lists.py's RuleList, form="restarts"'s), weighed against the
    searched list by the same cross-validation where the size is not fixed. predict:
    None, or the ensemble's predictions of coded rows (regression with y given): a
    second list is grown on them, and the one-SE rule on y picks one of the two."""
    p = prepared
    X, y, n_classes = p.X_fit, np.asarray(p.fit_target.y), p.fit_target.n_classes
    inputs = search_inputs(config, p, component_etas, 25)
    rng, rows, splits, S = inputs.rng, inputs.rows, inputs.splits, inputs.S
    feature, group, candidates = inputs.feature, inputs.group, inputs.candidates
    T = _targets(y[rows], n_classes)
    # a region keeps at least one of the search's rows (grow_list_sizes stops there): the
    # rows bound the sizes before any array is sized by them (a validation array of
    # n_regions sizes; a constant target, fitted with one component, passes any size here)
    max_regions = max(1, min(max(config.n_components, config.n_regions or 0), rows.size))

    validation = np.full(max_regions, np.nan)
    size = config.n_regions
    chosen, restarts_error, restarts_losses, full, rules = False, float("nan"), None, None, None
    if p.constant:
        # one target value: no list predicts it better than the default alone, and a
        # search would read structure into the rounding of the values about their mean
        # (a constant y of 1e50 gave 9 rules)
        full = [[]]
    # regression with y given: a second list grown on the ensemble's predictions, and the
    # one-SE rule on y picks one of the two (also where n_regions fixes the size, so that
    # n_regions=k prints the default fit's list at size k, as with_size(n_regions=k) does)
    smoothed = predict is not None and n_classes == 0
    if full is None and (size is None or smoothed) and rows.size >= MIN_VALIDATION * N_FOLDS:
        fold = rng.permutation(rows.size) % N_FOLDS
        # regression with y: the structure also grown on the ensemble's predictions, the
        # outputs fitted on y; the lists of both targets grown side by side
        targets = [T, _targets(predict(X[rows]), 0)] if smoothed else [T]
        validated = _cross_validated(S, targets, y[rows], n_classes, candidates, feature, group, max_regions, fold)
        losses, full = validated[0]
        best = one_se_size(losses)
        if smoothed:
            losses_p, boxes_p = validated[1]
            size_p = one_se_size(losses_p)
            # each box is read out on its own (a rule prints the same in every list it is
            # in): the distinct boxes of both lists in one readout
            both = read_out(list(full) + list(boxes_p), splits, config.kappa, X, p.names)
            rules, rules_p = both[:len(full)], both[len(full):]
            if _simpler_within_one_se((losses[best - 1], _n_conditions(rules, best)),
                                      (losses_p[size_p - 1], _n_conditions(rules_p, size_p))):
                full, rules, losses, best = boxes_p, rules_p, losses_p, size_p
    if size is None and not p.constant and rows.size >= MIN_VALIDATION * N_FOLDS:
        validation = losses.mean(axis=1)
        size = best
        if restarts_list is not None:
            # the restarts' list on the same folds (its rules as they are, outputs refitted).
            # Its boxes were chosen on all these rows: a small advantage for a list of a
            # few broad rules.
            cover = rule_columns(restarts_list.rules, X[rows])[2]
            restarts_losses = _fixed_list_losses(cover, y[rows], n_classes, fold)
            restarts_error = float(restarts_losses.mean())

    if full is None:
        full = _grown(S, T, feature, group, candidates, max_regions)
    if size is None:
        size = len(full)
    if size > len(full):
        if config.n_regions is not None:
            warnings.warn(f"n_regions={config.n_regions}: no more than {len(full)} regions lower the training "
                          f"loss; the list has {len(full)}", UserWarning, stacklevel=user_stacklevel())
        size = len(full)
    if rules is None:
        rules = read_out(full, splits, config.kappa, X, p.names)
    # classification: each size's conditions pruned against its training loss, as the
    # restarts' lists are (rules/lists.py's prune_rule_lists). A region's majority class is
    # flat in most of its conditions: on the 6 multiclass cases of benchmarks/quality.py
    # the default lists print 16 instead of 23 conditions (vehicle), 34 instead of 53
    # (satellite), 20 instead of 51 (letterrecognition), 15 instead of 27 (soybean), at
    # the same or lower test error but glass's. A squared error is not flat that way: the
    # regression lists barely shortened (ozone 6.7 -> 6, houseprices 14.7 -> 12.7
    # conditions), and the size path against CART-fp won 105 of 153 cells pruned in both
    # tasks, 110 pruned in classification only (102 unpruned): a choice made on those
    # public test errors, which the loss's flatness agrees with.
    if n_classes:
        rules = prune_rule_lists(rules, X, y, n_classes, float(config.prune_tol))
    if restarts_losses is not None:
        restarts_conditions = sum(len(r.conditions) for r in restarts_list.rules)
        chosen = _simpler_within_one_se((losses[size - 1], _n_conditions(rules, size)),
                                        (restarts_losses, restarts_conditions))
    return SearchedList(rules, int(size), validation[:len(full)], chosen, restarts_error)


def _n_conditions(lists, size):
    """The conditions the list of size regions prints (lists: its rules per size)."""
    return sum(len(r.conditions) for r in lists[min(size, len(lists)) - 1])


def _simpler_within_one_se(searched, restarts):
    """Whether the restarts' list is printed rather than the searched one (or the list
    grown on the predictions rather than the one grown on y): the one-SE rule across the
    two lists, each a (per-row validation losses, printed conditions) pair: of the lists
    whose validation error is within one standard error of the smaller, the one that
    prints fewer conditions (ties: the smaller error; then the first)."""
    errors = [float(losses.mean()) for losses, _ in (searched, restarts)]
    best = int(np.argmin(errors))
    losses = (searched, restarts)[best][0]
    se = float(np.std(losses)) / np.sqrt(max(losses.size, 1))
    within = [i for i in (0, 1) if errors[i] <= errors[best] + se]
    return min(within, key=lambda i: ((searched, restarts)[i][1], errors[i], i)) == 1
