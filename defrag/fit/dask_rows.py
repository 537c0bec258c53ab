"""Dask inputs: DefragModel.fit on rows spread over a cluster, and lazy predictions.

``DefragModel.fit`` takes a Dask array or DataFrame X (y: None, a Dask array or Series
partitioned as X, or a NumPy array) and returns the same model as the in-memory fit of
the same rows and random_state, without collecting X into one process:

* on the client (the process that calls fit): the split table, the subsample (its
  rows of X and y, drawn with the same random draw as in memory, global row indices,
  and gathered from the partitions that hold them), the restarts, fitted there on the
  subsample exactly as in memory, and the rules;
* on the partitions, as pure functions of one partition and a small broadcast state:
  coding X as the source model reads it, the NaN check, the ensemble's predictions when
  y is None, the target's exact sums (defrag/_exact.py), each restart's error on all
  rows (its rule list refitted on every partition: per-rule counts and sums, reduced on
  the client), the kept list's outputs, and the statistics its printing reads (the
  training values next to each bound, the shares of rows per condition and rule).

The targets stay on the workers (persisted: 8 bytes a row for regression, 4 for class
codes). X is read once per pass: the first pass (coding, NaN, targets, subsample), one
per restart (its error on all rows: its rule list's, or EM-KL's mixture of experts'),
one for the printed rules, and for a DataFrame one before them all for its partitions'
lengths (the draw needs the global row indices); with a source that is slow to read
(files), persist X first if it fits the cluster's memory. The restarts run on the
client, on its threads as in memory (n_jobs): the subsample is there, each restart
needs a few MB of it, and the partitions' work is the passes, which the cluster
spreads over its workers.

With ``subsample`` at least the number of rows (``"auto"`` on up to 100,000 rows,
``None``, or a single restart) the restarts need every row in one process: X and y are
then computed on the client and fitted in memory. ``rule_list=False`` prunes the
paper's rules on all rows in one process (src_c/dfg_prune.c) and is refused with a
subsample.

Exactness. Classification (counts) and the restarts (the same subsample and the same
target mean and variance, correctly rounded from exact sums) give the same bits as in
memory. Regression outputs of the refitted rules (means over all rows) and the
restarts' errors (sums of squares over all rows) are sums of per-partition sums: they
may differ from the in-memory NumPy sums in the last bits: ``rules_`` outputs and
``restart_errors_`` may differ by about 1e-16 relative, and the printed rules (6
significant digits) only where an output lies that close to a rounding boundary. The kept restart could differ only if two restarts with different rule lists
had errors equal to within that rounding (restarts with the same list have bit-equal
errors either way: the same partitions, the same order).
"""
import copy
import dataclasses
import functools
import logging
import operator
import time
import uuid

import numpy as np

from ..rules import Rule, RuleList
from ..rules.conditions import combine_training_row_statistics, conditions_printed, training_row_statistics
from ..rules.lists import first_match_index, rule_columns
from ..utils.dask_collections import import_dask, is_dask_collection, is_dask_frame
from ..utils.exact import exact_mean, exact_partial, squared_deviations

logger = logging.getLogger("defrag")


def _broadcast(obj):
    """obj as one input that every partition's task reads, sent once: scattered to the
    workers when the scheduler is a distributed Client (a forest can be tens of MB), else
    one task of the graph."""
    dask = import_dask()
    client = getattr(dask.base.get_scheduler(), "__self__", None)
    if type(client).__name__ == "Client" and type(client).__module__.startswith("distributed"):
        return client.scatter(obj, broadcast=True, hash=False)
    return dask.delayed(obj, name=f"defrag-state-{uuid.uuid4().hex}")


class _Partitions:
    """X's partitions as delayed blocks (2-D arrays, or DataFrames), with their row counts."""

    def __init__(self, X):
        if is_dask_frame(X):
            for name in X.columns:
                col = X._meta[name]
                if col.dtype.name == "category" and "__UNKNOWN_CATEGORIES__" in list(col.cat.categories):
                    raise ValueError(f"X column {name!r} is categorical with unknown categories: "
                                     "make them known first (X.categorize())")
            self.meta = X._meta
            self.parts = list(X.to_delayed())
            self.lengths = np.asarray(X.map_partitions(len).compute(), dtype=np.int64).reshape(-1)
        elif hasattr(X, "chunks") and hasattr(X, "to_delayed"):
            if X.ndim != 2:
                raise ValueError(f"X must be 2-D (n_samples, n_features); got shape {X.shape}")
            if any(np.isnan(c) for dim in X.chunks for c in dim):
                raise ValueError("X has unknown chunk sizes (from a boolean filter, or a DataFrame's "
                                 "values): call X.compute_chunk_sizes() first, or pass the DataFrame")
            if X.numblocks[1] > 1:
                X = X.rechunk({1: -1})
            self.meta = None
            self.parts = list(X.to_delayed()[:, 0])
            self.lengths = np.asarray(X.chunks[0], dtype=np.int64)
        else:
            raise TypeError(f"X must be a 2-D Dask array or a Dask DataFrame; got a Dask {type(X).__name__}")
        self.n_features = int(X.shape[1])
        self.starts = np.concatenate([[0], np.cumsum(self.lengths)]).astype(np.int64)
        self.n_samples = int(self.starts[-1])

    def split_rows(self, rows):
        """Sorted global row indices as each partition's local indices."""
        cut = np.searchsorted(rows, self.starts)
        return [rows[cut[i]:cut[i + 1]] - self.starts[i] for i in range(len(self.parts))]

    def y_parts(self, y):
        """y as one block per partition of X (None for each when y is None)."""
        n = self.n_samples
        if y is None:
            return [None] * len(self.parts)
        if is_dask_frame(y) or (hasattr(y, "to_delayed") and not hasattr(y, "chunks")):  # DataFrame, Series
            parts = list(y.to_delayed())
            if len(parts) != len(self.parts):
                raise ValueError(f"y has {len(parts)} partitions but X has {len(self.parts)}: "
                                 "partition y as X")
            return parts
        if hasattr(y, "chunks") and hasattr(y, "rechunk"):  # a Dask array
            if any(np.isnan(c) for dim in y.chunks for c in dim):
                raise ValueError("y has unknown chunk sizes: call y.compute_chunk_sizes() first")
            if y.shape[0] != n:
                raise ValueError(f"y has {y.shape[0]} entries but X has {n} samples")
            y = y.rechunk({0: tuple(int(v) for v in self.lengths), **({1: -1} if y.ndim == 2 else {})})
            blocks = y.to_delayed()
            return list(blocks.reshape(len(self.parts), -1)[:, 0])
        n_y = len(y) if hasattr(y, "__len__") else None
        if n_y != n:
            raise ValueError(f"y has {n_y} entries but X has {n} samples")
        y = np.asarray(y)
        return [y[a:b] for a, b in zip(self.starts[:-1], self.starts[1:])]


@dataclasses.dataclass
class _State:
    """What a partition's task reads besides its rows: how X is coded, the split table,
    the task, and for the first pass the source model (its predictions when y is None)."""

    encoding: object
    splits: object = None
    task: str = None
    source: object = None

    def coded(self, part):
        return self.encoding.transform(part, allow_nan=True)


def _first_pass(part, y_part, state, rows, expected):
    """One partition: its NaN per column (X as the model reads it), its targets (checked),
    the subsample's rows of coded X and of y, and the targets' summary (regression: exact
    sum, min, max; classification: the distinct labels)."""
    from ..defrag_model import target_values

    X = state.coded(part)
    if X.shape[0] != expected:
        raise ValueError(f"a partition of X has {X.shape[0]} rows, {expected} expected")
    y = target_values(state.source.predict(part) if y_part is None else y_part, state.task)
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"a partition of y has {y.shape[0]} entries but X's has {X.shape[0]} rows: "
                         "partition y as X")
    if state.task == "regression":
        summary = (exact_partial(y), float(y.min(initial=np.inf)), float(y.max(initial=-np.inf)))
    else:
        summary = np.unique(y)
    return np.isnan(X).any(axis=0), y, X[rows], y[rows], summary


def _without_targets(result):
    return result[:1] + result[2:]


def _variance_partial(y, mean):
    return exact_partial(squared_deviations(y, mean))


def _class_codes(y, classes):
    return np.searchsorted(classes, y).astype(np.int32)


def _list_part(part, y, state, payload):
    """Per-group statistics of a rule list on one partition (groups: each rule's first-match
    rows, the default last), as refit_rule_list groups them: class counts, or (rows, sum,
    sum of squares about the partition's group mean)."""
    rules, n_classes = payload
    _, _, cover = rule_columns(rules, state.coded(part))
    first = first_match_index(cover)
    groups = len(rules) + 1
    if n_classes:
        return np.bincount(first * n_classes + y, minlength=groups * n_classes).reshape(groups, n_classes)
    size = np.bincount(first, minlength=groups)
    total = np.bincount(first, weights=y, minlength=groups)
    residual = y - (total / np.maximum(size, 1))[first]
    return np.stack([size, total, np.bincount(first, weights=residual * residual, minlength=groups)])


def _score_part(part, y, state, payload):
    """A mixture's training error (a sum over rows: score's) on one partition."""
    from ..defrag_model import _fit_problem

    params, target, score, eps, bits = payload
    if y.shape[0] == 0:
        return 0.0
    X = state.splits.prepare(state.coded(part))
    target = dataclasses.replace(target, y=y)
    problem = _fit_problem(state.splits, state.splits.kernel_input(X, 1, bits=bits), target)
    return float(score(problem, params, target, eps, 1))


def _printing_part(part, y, state, rule_set):
    """The statistics RuleSet.on_training_rows reads, on one partition: its conditions'
    training_row_statistics (defrag/_rules.py) and the rows each rule covers."""
    X = np.ascontiguousarray(state.coded(part), dtype=np.float64)
    stats = training_row_statistics([c for r in rule_set.rules for c in r.conditions], X)
    cover = rule_set.covering(X).sum(axis=0) if X.shape[0] else np.zeros(len(rule_set.rules))
    return stats, cover


def _combine_regression(stats):
    """(rows, sums, sums of squares about the group means) per group from the partitions'
    _list_part statistics (Chan's pairwise update, partitions in order)."""
    size = sum(s[0] for s in stats)
    total = sum(s[1] for s in stats)
    mean = total / np.maximum(size, 1)
    m2 = sum(s[2] + s[0] * (s[1] / np.maximum(s[0], 1) - mean) ** 2 for s in stats)
    return size, total, m2


class DaskRows:
    """The training rows on a cluster: what the fit's passes over all rows compute, one
    task per partition of X, the targets (y_parts, persisted) alongside."""

    def __init__(self, partitions, y_parts, state):
        self.partitions = partitions
        self.y_parts = y_parts
        self.state = _broadcast(state)
        self.shape = (partitions.n_samples, partitions.n_features)
        self._refitted = {}  # id(rules) -> (rules, RuleList): the kept list is not refitted twice

    def _map(self, fn, payload):
        """fn(partition, its targets, state, payload) on every partition, computed: the
        results in partition order."""
        dask = import_dask()
        start = time.perf_counter()
        payload = _broadcast(payload)
        task = dask.delayed(fn, pure=False)
        results = dask.compute(*[task(p, y, self.state, payload)
                                 for p, y in zip(self.partitions.parts, self.y_parts)])
        logger.info("pass %s over %d partitions: %.3f s", fn.__name__, len(self.partitions.parts),
                    time.perf_counter() - start)
        return results

    def refit_rule_list(self, rules, target, classes):
        """refit_rule_list of the rules on all rows (defrag/_rule_list.py), from per-partition
        counts and sums."""
        cached = self._refitted.get(id(rules))
        if cached is not None and cached[0] is rules:
            return cached[1]
        used = list(rules)
        if used and not used[-1].conditions:  # a last rule without conditions is the default
            used = used[:-1]
        stats = self._map(_list_part, (used, target.n_classes))
        n = self.shape[0]
        if target.n_classes:
            counts = sum(stats)
            size = counts.sum(axis=1)
            loss = float(n - counts.max(axis=1).sum())

            def output(g):
                c = (counts[g] if size[g] else counts.sum(axis=0)).astype(np.float64)
                return classes[int(np.argmax(c))], c / c.sum()
        else:
            size, total, m2 = _combine_regression(stats)
            loss = float(np.sum(m2))

            def output(g):
                return (float(total[g] / size[g]) if size[g] else float(target.mean)), None
        fitted = [Rule(list(rule.conditions), *output(g), support=int(size[g]), weight=int(size[g]) / max(n, 1))
                  for g, rule in enumerate(used)]
        result = RuleList(fitted, *output(len(used)), loss)
        self._refitted[id(rules)] = (rules, result)
        return result

    def scorer(self, score, bits):
        """score(problem, params, target, eps, n_threads) of run_restarts on all rows: the
        sum of score on every partition (in partition order)."""
        def on_all_rows(problem, params, target, eps, n_threads):
            return float(sum(self._map(_score_part, (params, target, score, eps, bits))))

        return on_all_rows

    def on_training_rows(self, rule_set):
        """RuleSet.on_training_rows on all rows (defrag/_rules.py), from per-partition
        statistics."""
        results = self._map(_printing_part, rule_set)
        stats = combine_training_row_statistics(r[0] for r in results)
        cover = sum(r[1] for r in results)
        printed = iter(conditions_printed([c for r in rule_set.rules for c in r.conditions], stats))
        new = copy.copy(rule_set)
        new.__dict__.pop("_arrays", None)
        new.rules = [copy.copy(r) for r in rule_set.rules]
        for rule, covered in zip(new.rules, cover):
            rule.conditions = [next(printed) for _ in rule.conditions]
            rule.coverage = float(int(covered) / self.shape[0])
        return new


class _AllRows:
    """run_restarts' score_problem: only its size is read (the scorer reads the partitions)."""

    def __init__(self, n_samples):
        self.n_samples = n_samples


def fit_dask(model, X, y):
    """DefragModel.fit(X, y) for a Dask X (see the module docstring)."""
    from . import emkl as _emkl
    from .restarts import run_restarts, training_error
    from ..defrag_model import (_PhaseClock, _check_missing, _fit_problem, _verbose_logging,
                               class_target, regression_target, target_classes)
    from ..utils.threads import thread_budget, useful_threads
    from ..utils.validation import feature_names_of
    from sklearn.utils import check_random_state

    dask = import_dask()
    if not is_dask_collection(X):
        raise TypeError("y is a Dask collection but X is not: pass X as a Dask array or DataFrame "
                        "partitioned as y, or compute y")
    phases = _PhaseClock()
    partitions = _Partitions(X)
    N, D = partitions.n_samples, partitions.n_features
    if N < 1:
        raise ValueError("X has no samples")
    n_sub = model._subsample_size(N)
    if n_sub >= N:  # restarts on every row: all of them in this process, as in memory
        logger.info("Dask input: subsample=%r keeps all %d rows; X and y are computed here", model.subsample, N)
        X_here, y_here = dask.compute(X, y)
        return model.fit(X_here, y_here)
    if not model.rule_list:
        raise ValueError("rule_list=False prunes the paper's rules on all rows in one process: not "
                         "supported with a Dask X and a subsample; use rule_list=True, or compute X")
    names_in = feature_names_of(X)
    source = model._source(D)
    if model.task == "auto" and source.task is None:
        raise ValueError("set task= ('regression' or 'classification'): with a Dask y it is not "
                         "read off y's values")
    task = model._task(source, y)
    splits = source.split_table(model.keep_duplicate_splits)
    splits.encoding = splits.encoding.bind(partitions.meta)
    y_parts = partitions.y_parts(y)
    if y is None and not source.has_predict:
        raise ValueError("y is required when the model has no scikit-learn predict")
    # the same draws as in memory: global row indices
    random_state = check_random_state(model.random_state)
    entropy = random_state.randint(np.iinfo(np.int32).max)
    rows = np.sort(random_state.choice(N, n_sub, replace=False))
    phases.lap("splits")

    # first pass: coding, NaN, targets (kept on the workers), the subsample's rows
    state = _State(splits.encoding, task=task, source=source if y is None else None)
    first_start = time.perf_counter()
    first = dask.delayed(_first_pass, pure=False)
    shared = _broadcast(state)
    results = dask.persist(*[first(p, yp, shared, r, int(n)) for p, yp, r, n in zip(
        partitions.parts, y_parts, partitions.split_rows(rows), partitions.lengths)])
    small = dask.compute(*[dask.delayed(_without_targets)(r) for r in results])
    targets = [dask.delayed(operator.getitem)(r, 1) for r in results]
    nan_columns = np.logical_or.reduce([s[0] for s in small])
    X_sub = np.ascontiguousarray(np.concatenate([s[1] for s in small]))
    y_sub = np.concatenate([s[2] for s in small])
    nan_row = np.where(nan_columns, np.nan, 0.0)[None, :]  # NaN where X has NaN: all these read
    _check_missing(nan_row, splits)
    if not model.keep_duplicate_splits:
        splits = splits.without_idle_directions(nan_row)
    n_all_splits = len(splits)
    max_splits = model._max_splits(N)
    if max_splits is not None:
        splits = splits.top(max_splits)
    if task == "regression":
        mean = exact_mean([s[3][0] for s in small], N)
        var = exact_mean(dask.compute(*[dask.delayed(_variance_partial)(t, mean) for t in targets]), N)
        target, classes = regression_target(np.empty(0), mean, var), None
        sub_target = dataclasses.replace(target, y=np.ascontiguousarray(y_sub))
        lo, hi = min(s[3][1] for s in small), max(s[3][2] for s in small)
        single_class = hi - lo <= 1e-12 * max(1.0, abs(lo), abs(hi))
    else:
        labels = np.unique(np.concatenate([s[3] for s in small]))
        classes = target_classes(source.classes, labels)
        target = class_target(np.empty(0, dtype=labels.dtype), classes)
        sub_target = class_target(y_sub, classes)
        targets = [dask.delayed(_class_codes)(t, classes) for t in targets]
        single_class = labels.size == 1
    targets = list(dask.persist(*targets))
    del results  # the workers keep the targets only
    with _verbose_logging(model.verbose):
        logger.info("first pass over %d partitions (coding, NaN, targets, subsample): %.3f s",
                    len(partitions.parts), time.perf_counter() - first_start)
    names = model._feature_names(D, names_in)
    phases.lap("targets")

    n_components = 1 if single_class else model.max_rules
    workers, threads = thread_budget(model.n_jobs, model.n_restarts, N)
    model._check_memory(splits, (n_sub, D), n_components, target.n_classes, workers, threads, n_fit=n_sub)
    emkl = model.method == "em-kl"
    bits = False if emkl else splits.uses_bits(N)  # the s matrix as in memory for N rows
    sub_problem = _fit_problem(splits, splits.kernel_input(
        X_sub, useful_threads(workers * threads, n_sub), bits=bits), sub_target)
    options = model._fit_options(splits, n_components, n_all_splits)
    training = DaskRows(partitions, targets, _State(splits.encoding, splits=splits))
    kernels = dict(restart=_emkl.run_restart) if emkl else {}
    kernels["score"] = training.scorer(_emkl.training_error if emkl else training_error, bits)
    refit = functools.partial(training.refit_rule_list, target=target, classes=classes)
    rule_list = model._rule_list_scorer(splits, X_sub, sub_target.y, target, classes, names, refit)
    phases.lap("inputs")
    with _verbose_logging(model.verbose):
        logger.info("restarts fitted on %d of %d rows (%d partitions)", n_sub, N, len(partitions.parts))
        results, best = run_restarts(sub_problem, sub_target, options, model.n_restarts, entropy,
                                     model.n_jobs, score_problem=_AllRows(N), score_target=target,
                                     rule_list=None if emkl else rule_list, **kernels)
        if emkl:
            best = dataclasses.replace(best, rule_list=rule_list(best.params)[0])
    phases.lap("restarts")
    return model._store_fit(training, task=task, classes=classes, names_in=names_in, names=names,
                            splits=splits, n_all_splits=n_all_splits, n_sub=n_sub, results=results,
                            best=best, target=target, subsampled=True, phases=phases)
