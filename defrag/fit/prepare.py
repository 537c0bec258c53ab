"""Stage 1 of the fit, prepare: the source model -> its split table -> the targets and the
encoded inputs -> the restarts' kernel Problem.

The rows are read through the interface of fit/rows.py (in memory, or partitions on a
cluster); what this stage returns is plain data (``Prepared``), which the search stage
(fit/search.py) and the rules stage (fit/readout.py) take.
"""
import dataclasses
import logging

import numpy as np
from sklearn.utils import check_random_state

from ..search.list_path import N_FOLDS, SEARCH_ROWS
from ..sources.split_array import SplitArraySource
from ..utils.exact import exact_mean
from ..utils.memory import (
    DefragMemoryError,
    check_class_count,
    check_memory,
    describe_limit,
    fit_estimate,
    format_bytes,
)
from ..utils.threads import thread_budget, useful_threads
from ..utils.validation import rule_feature_names
from .mixture import kernel_problem
from .restarts import ANNEAL_ITER
from .rows import exact_variance, summary_of_fit_rows
from .targets import (PREDICTIONS, Target, check_regression_range, class_target, decide_task, is_constant,
                      regression_target, target_classes)

logger = logging.getLogger("defrag")

# FAB fitted on at most this many rows (DefragModel's default n_components) takes at most
# as many components as rows where n_components asks for more; EM, which fits exactly
# n_components, and FAB on more rows are refused (_check_fit_memory)
FEW_ROWS = 10


@dataclasses.dataclass
class Prepared:
    """What the restarts and the rules read: the task, the split table of the fit, the
    targets of all rows and of the restarts' rows, and the restarts' kernel Problem."""

    task: str
    splits: object  # SplitTable of the fit (deduplicated, max_splits selected)
    n_all_splits: int  # the ensemble's distinct splits (before max_splits)
    classes: np.ndarray  # classification (None for regression)
    names: list  # the feature names the rules print
    target: Target  # all rows (its y empty where the rows are on a cluster)
    fit_target: Target  # the rows the restarts are fitted on
    X_fit: np.ndarray  # those rows, coded (float64, C-contiguous)
    problem: object  # the restarts' kernel Problem over X_fit
    bits: bool  # the s matrix as packed bits (else ranks)
    n_components: int  # K of the restarts
    n_fit: int  # rows of the restarts (subsample_size_)
    subsampled: bool  # fewer than all rows: restarts are scored on all rows
    entropy: int  # the restarts' seed
    constant: bool = False  # the targets take one value (one class, or a constant to rounding)
    fit_rows: np.ndarray = None  # the restarts' rows among all (sorted), None for all of them
    y_given: bool = False  # the targets are the y given to fit (else the model's predictions)
    # target holds every row's targets; False: the restarts' rows' only (targets_of_fit_rows),
    # the restarts then scored on their own rows
    all_row_targets: bool = True


def targets_of_fit_rows(config, rows, sub_rows):
    """Whether the fit reads the ensemble's predictions of the restarts' rows only: a tree
    or a sum of trees (searched on those rows, its outputs their means) explaining the
    model's own predictions on a subsample. The other rows are read for what the
    explanation prints of them (the rows through each region, the printed thresholds),
    not predicted: on 300,000 rows and a 100-tree forest their predictions took two thirds
    of the fit. The restarts are then scored on their own rows (restart_errors_)."""
    return sub_rows is not None and rows.y_input is None and config.tree_searched


def prepare(config, source, rows, feature_names, clock):
    """Stage 1 on rows (fit/rows.py's interface) of the source model (its columns matched,
    sources.matched_source); clock.lap(phase) after each phase."""
    if rows.distributed and config.task == "auto" and source.task is None:
        raise ValueError("set task= ('regression' or 'classification'): with a Dask y it is not "
                         "read off y's values")
    task = decide_task(config.task, source, rows.y_input, isinstance(source, SplitArraySource))
    if rows.y_input is None and not source.has_predict:
        raise ValueError(source.no_predictions)
    splits = source.split_table(config.keep_duplicate_splits)
    # the inputs as the source model reads them (category codes, zero as missing)
    splits.encoding = splits.encoding.bind(rows.meta)
    rows.code(splits.encoding)
    n = rows.n_samples
    random_state = check_random_state(config.random_state)
    entropy = random_state.randint(np.iinfo(np.int32).max)
    n_fit = config.subsample_size(n)
    sub_rows = np.sort(random_state.choice(n, n_fit, replace=False)) if n_fit < n else None
    clock.lap("splits")

    fit_rows_only = targets_of_fit_rows(config, rows, sub_rows)
    first = rows.first_pass(splits.supports_missing, task, source, sub_rows, fit_rows_only)
    if fit_rows_only:  # the summary of the restarts' rows alone, in memory and on a cluster alike
        first = summary_of_fit_rows(first, task)
    if not config.keep_duplicate_splits:  # a row with NaN where X has them: all this reads
        splits = splits.without_idle_directions(np.where(first.nan_columns, np.nan, 0.0)[None, :])
    n_all_splits = len(splits)
    kept = config.splits_kept(n)
    if kept is not None:
        splits = splits.top(kept)
    if task == "regression":
        constant, classes = is_constant(task, first.y_range), None
        check_regression_range(first.y_range, constant, "y" if rows.y_input is not None else PREDICTIONS)
        if fit_rows_only:
            y_fit = np.ascontiguousarray(first.y_fit, dtype=np.float64)
            mean = exact_mean(first.partial_sums, n_fit)
            target = regression_target(y_fit, mean, exact_variance(y_fit, mean))
        else:
            mean = exact_mean(first.partial_sums, n)
            target = rows.all_targets(task, mean=mean, var=rows.variance(mean))
        fit_target = target if sub_rows is None or fit_rows_only else dataclasses.replace(
            target, y=np.ascontiguousarray(first.y_fit, dtype=np.float64))
    else:
        classes = target_classes(source.classes, first.labels)
        check_class_count(classes.size, source.classes, n, "DefragModel.fit")  # before per-class tables
        if fit_rows_only:
            target = fit_target = class_target(first.y_fit, classes)
        else:
            target = rows.all_targets(task, classes)
            fit_target = target if sub_rows is None else class_target(first.y_fit, classes)
        constant = is_constant(task, first.labels)
    names = rule_feature_names(feature_names, rows.n_features, rows.names_in, source.estimator)
    clock.lap("targets")

    # A single class (or a constant target) needs a single rule: more components could
    # only describe where the inputs lie, not the target.
    n_components = 1 if constant else config.n_components
    if config.method == "fab" and n_fit < n_components and n_fit <= FEW_ROWS:
        # FAB's n_components is a bound, and on so few rows the rows bound it more tightly:
        # the default n_components on 2-9 rows fits as many components as rows (more is refused)
        n_components = n_fit
    workers, threads = thread_budget(config.n_jobs, config.n_restarts, n_fit)  # the restarts' own rows
    _check_fit_memory(config, splits, rows.resident_rows(n_fit), n_fit, rows.n_features, n_components,
                      target.n_classes, workers, threads, source.tree_bytes(), n_rows=n)
    rows.threads = useful_threads(workers * threads, n)  # outside the restarts: all threads
    bits = False if config.emkl else splits.uses_bits(n)  # EM-KL's gate takes the rank path only
    X_fit = first.X_fit
    problem = kernel_problem(splits, splits.kernel_input(
        X_fit, useful_threads(workers * threads, X_fit.shape[0]), bits=bits), fit_target)
    clock.lap("inputs")
    return Prepared(task, splits, n_all_splits, classes, names, target, fit_target, X_fit, problem, bits,
                    n_components, n_fit, sub_rows is not None, entropy, bool(constant), sub_rows,
                    rows.y_input is not None, not fit_rows_only)


def _check_fit_memory(config, splits, n_resident, n_fit, n_features, n_components, n_classes, workers,
                      threads, tree_bytes=0, n_rows=None):
    """DefragMemoryError before allocating when the fit's working set (utils/memory.py)
    exceeds the memory limit (n_resident rows of X held here, n_fit of the restarts;
    tree_bytes: the source model's trees as read, held through the fit), or when K is
    more than the n_fit rows: the rows cannot tell more rules apart than there are rows,
    while every component costs n_fit x L work an iteration and a column of the
    n_fit x K tables (a million components on 400 rows ran for minutes, and clamped to
    400 components still did: issue 22)."""
    bits = splits.uses_bits(n_resident)
    ptr = splits.feat_ptr if bits else splits.rank_ptr
    parts = fit_estimate(
        n_resident, n_fit, n_features, len(splits), len(splits.rank_ptr) - 1,
        (len(splits) + 63) // 64 if bits else 0, int(np.max(np.diff(ptr), initial=1)),
        n_components, n_classes, workers, threads, config.rule_list,
        iterations=config.max_iter + len(config.eps_schedule) * ANNEAL_ITER + 1)
    if tree_bytes:
        parts["the model's trees as read"] = int(tree_bytes)
    if config.searched or config.tree_searched:  # every restart's eta (K x L), read by the search
        parts["the restarts' components"] = 8.0 * config.n_restarts * n_components * len(splits)
        parts["the list search"] = _list_search_bytes(config, len(splits), n_fit, n_classes, workers * threads)
    if n_components > n_fit:
        more = " or fit the restarts on more rows (subsample=)" if n_rows and n_fit < n_rows else ""
        raise DefragMemoryError(
            f"DefragModel.fit: n_components={n_components} is more than the {n_fit} rows the restarts "
            f"are fitted on (a rule covers at least one row); the fit would need about "
            f"{format_bytes(sum(parts.values()))} of memory (limit: {describe_limit()}) and "
            f"{n_components} x {n_fit} x {len(splits)} operations an iteration. Set "
            f"n_components <= {n_fit}{more}.")
    rows = f"{n_rows} rows ({n_fit} per restart)" if n_rows and n_rows != n_fit else f"{n_fit} rows"
    classes = f", {n_classes} classes" if n_classes else ""
    check_memory(sum(parts.values()),
                 f"DefragModel.fit on {rows}{classes}, {n_components} components (K) and {len(splits)} splits (L)",
                 "subsample= (rows per restart), n_jobs= (restarts in flight), "
                 "n_components= (K), max_splits= (L), max_iter=", parts)


def _list_search_bytes(config, n_splits, n_fit, n_classes, n_threads):
    """Bytes of the searched list's large arrays (search/list_path.py): its targets (a column
    per class, two targets in regression) on its rows, copied for each fold and all rows;
    and per list grown at once (one per thread, at most the 2 x (N_FOLDS + 1) lists), the
    kernels' copy of the targets and the per-literal sums (src_c/dfg_list_path.c,
    dfg_list_search.c) over the splits kept for those rows. 5,000 classes on 3,000 search
    rows: about 1.3 GB (930 MB measured at the peak, on 2 threads)."""
    rows = min(n_fit, SEARCH_ROWS)
    width = n_classes if n_classes else 2
    kept = config.splits_kept(rows)
    literals = 2 * (n_splits if kept is None else min(n_splits, kept))
    lists = min(max(n_threads, 1), 2 * (N_FOLDS + 1))
    targets = 8.0 * rows * width * (N_FOLDS + 2)
    per_list = 8.0 * (2.0 * rows * width + 1.5 * literals * (width + 1)) + float(rows) * literals / 2
    # the validation losses of every size on every row, per target (two in regression),
    # sizes bounded by the rows as list_path.search_list bounds them
    sizes = min(max(config.n_components, config.n_regions or 0, config.largest_regions), rows)
    losses = 8.0 * sizes * rows * (1 if n_classes else 2)
    if config.tree_searched:
        # each price's path (search/tree_path.py), grown side by side: its kept literal sums per
        # leaf (at most 256 MiB, src_c/dfg_tree_path.c) and the rows' bitsets; a loss and a
        # count of comparisons per candidate and row
        per_list += min(8.0 * sizes * (width + 1) * (literals / 2 + 1), 2.0**28) + float(rows) * literals / 16
        losses = 16.0 * (3 * sizes + min(config.max_conditions or 0, rows)) * rows
    return targets + lists * per_list + losses
