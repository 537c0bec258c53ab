"""Dask inputs: the training rows of DefragModel.fit spread over a cluster (``DaskRows``,
the rows interface of fit/rows.py), for the same stages as rows in memory.

``DefragModel.fit`` takes a Dask array or DataFrame X (y: None, a Dask array or Series
partitioned as X, or a NumPy array) and returns the same model as the in-memory fit of
the same rows and random_state, without collecting X into one process:

* on the client (the process that calls fit): the split table, the subsample (its
  rows of X and y, drawn with the same random draw as in memory, global row indices,
  and gathered from the partitions that hold them), the restarts, fitted there on the
  subsample exactly as in memory, and the rules;
* on the partitions, as pure functions of one partition and a small state shared by the tasks:
  coding X as the source model reads it, the NaN check, the ensemble's predictions when
  y is None, the target's exact sums (utils/exact.py), each restart's error on all
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
then computed on the client and fitted in memory. ``form="paper"`` prunes the
paper's rules on all rows in one process (src_c/dfg_prune.c) and is refused with a
subsample.

A lost worker. Everything the workers hold is a task of the graph: the shared states (the
coding, the split table, the source model) are tasks of their own, not scattered data, so
when a worker dies the scheduler recomputes what it held (the targets, from the partitions
and the first pass) on the others, and reruns its tasks; the fit goes on and its result is
the same. A pass that fails all the same with Dask's own error (data lost beyond recovery, a
closed connection) is run again from the start, twice at most, and the fit then stops with a
RuntimeError saying that a worker was lost (benchmarks/dask_kill.py kills workers mid-fit).

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
import dataclasses
import logging
import operator
import time
import uuid
from concurrent.futures import CancelledError

import numpy as np

from ..rules import Rule, RuleList
from ..rules.conditions import combine_training_row_statistics, conditions_printed, training_row_statistics
from ..rules.lists import first_match_index, rule_columns
from ..utils.dask_collections import import_dask, is_dask_collection, is_dask_frame
from ..utils.exact import exact_mean, exact_partial, squared_deviations
from ..utils.validation import check_missing, check_target_length, feature_names_of
from .mixture import kernel_problem
from .rows import FirstPass, InMemoryRows, RowCount, first_pass_of
from .targets import PREDICTIONS, class_codes, class_target, regression_target, target_values

logger = logging.getLogger("defrag")


# A task that runs on a worker which dies is run again on another by the scheduler; one
# that raises (a transient error: memory, a file system) is retried this many times. A
# task's own ValueError (bad input) is retried too before it reaches the caller: one
# partition's work a retry.
TASK_RETRIES = 3
# A pass that fails all the same (its inputs lost beyond what the scheduler can
# recompute, a worker killed during the task every time) is run again from the start
# this many times, then the fit stops with a RuntimeError saying so.
PASS_RETRIES = 2


def _distributed_client():
    """The distributed Client that dask computes on, or None (a local scheduler)."""
    client = getattr(import_dask().base.get_scheduler(), "__self__", None)
    if type(client).__name__ == "Client" and type(client).__module__.startswith("distributed"):
        return client
    return None


def _scheduler_options():
    return {"retries": TASK_RETRIES} if _distributed_client() is not None else {}


def _lost_worker(exc):
    """Whether exc is Dask's, about the cluster (a worker killed, its data or connection
    lost), rather than an error raised by a task (ValueError, ...): those pass unchanged."""
    module = type(exc).__module__
    return isinstance(exc, CancelledError) or module == "distributed" or module.startswith("distributed.")


def _on_cluster(run, what):
    """run() (one pass over the partitions: builds its graph and computes it), run again
    from the start when a worker loss made it fail, at most PASS_RETRIES times; then
    a RuntimeError saying so instead of Dask's own exception."""
    for attempt in range(PASS_RETRIES + 1):
        try:
            return run()
        except Exception as exc:
            if not _lost_worker(exc):
                raise
            if attempt == PASS_RETRIES:
                raise RuntimeError(
                    f"a Dask worker was lost during the fit ({what}) and the pass failed "
                    f"{PASS_RETRIES + 1} times: {type(exc).__name__}: {exc}") from exc
            logger.warning("a Dask worker was lost during %s (%s: %s): the pass runs again",
                           what, type(exc).__name__, exc)


def _state_in_graph():
    """Dask's configuration while a state goes to the scheduler: a forest (the first pass's,
    for y=None) can be tens of MB, sent once on purpose; Dask's warning about large graphs
    is meant for data repeated in graphs."""
    return import_dask().config.set({"distributed.admin.large-graph-warning-threshold": "1TiB"})


def _shared(obj, persist=False):
    """obj as one input of the graph that every partition's task reads: a task of its own,
    sent to the scheduler with the graph once. Not scattered: scattered data that a dead
    worker held is lost for good (and the active memory manager leaves one copy of a
    broadcast), while a task of the graph is recomputed by the scheduler, which keeps it,
    wherever its result is lost, and its dependents with it (the targets kept on the
    workers). persist: computed now, before the pass that reads it, kept on the cluster
    and copied to every worker (a forest's tens of MB sent to the scheduler once, however
    many passes read it)."""
    dask = import_dask()
    node = dask.delayed(obj, name=f"defrag-state-{uuid.uuid4().hex}", traverse=False)
    if not persist:
        return node
    with _state_in_graph():
        shared = _on_cluster(lambda: dask.persist(node, **_scheduler_options())[0], "sending the fit's state")
    client = _distributed_client()
    if client is not None:
        # a copy on every worker before the pass, as a broadcast scatter made: no task waits
        # for it while its partition is held (dask_fit.py, 4,000,000 rows: workers peaked at
        # 502-523 MB without, 429-430 MB scattered); the copies are a task's result, which
        # the scheduler recomputes where they are all lost
        try:
            client.replicate(shared)
        except Exception as exc:  # noqa: BLE001 - an optimisation only: the passes fetch the
            # state where it is. Dask's replicate fails with its own assertions when a worker
            # leaves during it (AssertionError, ValueError from random.sample: dask_kill.py
            # --anywhere), whatever the cause the state stays on the cluster or recomputable
            logger.info("the fit's state was not copied to every worker (%s: %s)", type(exc).__name__, exc)
    return shared


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
            lengths = _on_cluster(lambda: X.map_partitions(len).compute(**_scheduler_options()),
                                  "the partitions' lengths")
            self.lengths = np.asarray(lengths, dtype=np.int64).reshape(-1)
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
        check_target_length(y, n)
        y = np.asarray(y)
        return [y[a:b] for a, b in zip(self.starts[:-1], self.starts[1:])]


@dataclasses.dataclass
class _State:
    """What a partition's task reads besides its rows: how X is coded, and for the first
    pass the task, whether the source model routes NaN and the source model itself (its
    predictions when y is None), for the mixture's errors the split table."""

    encoding: object
    splits: object = None
    task: str = None
    source: object = None
    supports_missing: bool = True

    def coded(self, part):
        return self.encoding.transform(part, allow_nan=True)


def _first_pass(part, y_part, state, rows, expected):
    """One partition: the NaN check (before the ensemble sees a NaN), its targets
    (checked; kept on the worker) and its FirstPass statistics (fit/rows.py)."""
    X = state.coded(part)
    if X.shape[0] != expected:
        raise ValueError(f"a partition of X has {X.shape[0]} rows, {expected} expected")
    check_missing(X, state.supports_missing)
    if y_part is None:
        y = target_values(state.source.predict(part), state.task, PREDICTIONS, state.source.classes)
    else:
        y = target_values(y_part, state.task, classes=getattr(state.source, "classes", None))
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"a partition of y has {y.shape[0]} entries but X's has {X.shape[0]} rows: "
                         "partition y as X")
    return y, first_pass_of(np.asarray(X, dtype=np.float64), y, state.task, rows)


def _variance_partial(y, mean):
    return exact_partial(squared_deviations(y, mean))


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
    params, target, score, eps, bits = payload
    if y.shape[0] == 0:
        return 0.0
    X = state.splits.prepare(state.coded(part))
    target = dataclasses.replace(target, y=y)
    problem = kernel_problem(state.splits, state.splits.kernel_input(X, 1, bits=bits), target)
    return float(score(problem, params, target, eps, 1))


def _printing_part(part, y, state, rule_set):
    """The statistics a list's on_training_rows reads, on one partition: its conditions'
    training_row_statistics (rules/conditions.py), the rows each rule covers and those it
    is the first match for."""
    X = np.ascontiguousarray(state.coded(part), dtype=np.float64)
    stats = training_row_statistics([c for r in rule_set.rules for c in r.conditions], X)
    cover, first = rule_set.cover_counts(X)  # the first matches: the default's first
    return stats, cover, first


def _tree_statistics_part(part, y, state, payload):
    """What printing trees reads on one partition: the conditions'
    training_row_statistics, and each tree's RuleTree.key_counts."""
    conditions, trees = payload
    X = np.ascontiguousarray(state.coded(part), dtype=np.float64)
    stats = training_row_statistics(conditions, X) if conditions else None
    return stats, [tree.key_counts(X) for tree in trees]


def _combine_regression(stats):
    """(rows, sums, sums of squares about the group means) per group from the partitions'
    _list_part statistics (Chan's pairwise update, partitions in order)."""
    size = sum(s[0] for s in stats)
    total = sum(s[1] for s in stats)
    mean = total / np.maximum(size, 1)
    m2 = sum(s[2] + s[0] * (s[1] / np.maximum(s[0], 1) - mean) ** 2 for s in stats)
    return size, total, m2


class DaskRows:
    """The training rows of a Dask X (y: None, a Dask array or Series partitioned as X, or
    a NumPy array) on a cluster: the rows interface of fit/rows.py, one task per
    partition of X for each pass over all rows, the targets persisted on the workers."""

    distributed = True

    def __init__(self, X, y=None):
        if not is_dask_collection(X):
            raise TypeError("y is a Dask collection but X is not: pass X as a Dask array or DataFrame "
                            "partitioned as y, or compute y")
        self.X_input, self.y_input = X, y
        self.partitions = _Partitions(X)
        self.n_samples, self.n_features = self.partitions.n_samples, self.partitions.n_features
        if self.n_samples < 1:
            raise ValueError("X has no samples")
        self.names_in = feature_names_of(X)
        self.meta = self.partitions.meta
        self.threads = 1
        self._refitted = {}  # id(rules) -> (rules, RuleList): the kept list is not refitted twice

    def in_memory(self):
        """InMemoryRows of X and y computed here (restarts that need every row in one process)."""
        X, y = _on_cluster(lambda: import_dask().compute(self.X_input, self.y_input, **_scheduler_options()),
                           "computing X and y")
        return InMemoryRows(X, y)

    def code(self, encoding):
        self.encoding = encoding
        self.y_parts = self.partitions.y_parts(self.y_input)
        self.state = _shared(_State(encoding), persist=True)

    def resident_rows(self, n_fit):
        """Rows of X held in this process through the fit (the restarts' subsample)."""
        return n_fit

    def first_pass(self, supports_missing, task, source, rows, fit_rows_only=False):
        """The first pass (coding, NaN, targets, the subsample's rows) over every partition;
        the targets stay on the workers. fit_rows_only: the targets' summary is then the
        caller's, of the subsample's rows (fit/prepare.py's targets_of_fit_rows)."""
        dask = import_dask()
        start = time.perf_counter()
        # persisted before the pass (as the states of the later passes): the partitions'
        # tasks find it on the cluster rather than wait for it while generated partitions
        # pile up (README, the Dask benchmark: 1.4 GB a worker for a state in the pass's graph)
        state = _shared(_State(self.encoding, task=task, supports_missing=supports_missing,
                               source=source if self.y_input is None else None), persist=True)
        first = dask.delayed(_first_pass, pure=False)
        split_rows = self.partitions.split_rows(rows)

        def run():
            options = _scheduler_options()
            results = dask.persist(*[first(p, yp, state, r, int(n)) for p, yp, r, n in zip(
                self.partitions.parts, self.y_parts, split_rows, self.partitions.lengths)], **options)
            parts = dask.compute(*[dask.delayed(operator.getitem)(r, 1) for r in results], **options)
            targets = list(dask.persist(*[dask.delayed(operator.getitem)(r, 0) for r in results], **options))
            return parts, targets

        # the first pass's tasks stay in the targets' graph: the scheduler recomputes the
        # targets of a lost worker from them
        parts, self.targets = _on_cluster(run, "the first pass")
        logger.info("first pass over %d partitions (coding, NaN, targets, subsample): %.3f s",
                    len(self.partitions.parts), time.perf_counter() - start)
        regression = task == "regression"
        return FirstPass(
            nan_columns=np.logical_or.reduce([p.nan_columns for p in parts]),
            labels=None if regression else np.unique(np.concatenate([p.labels for p in parts])),
            partial_sums=[s for p in parts for s in p.partial_sums] if regression else None,
            y_range=(min(p.y_range[0] for p in parts), max(p.y_range[1] for p in parts)) if regression else None,
            X_fit=np.ascontiguousarray(np.concatenate([p.X_fit for p in parts])),
            y_fit=np.concatenate([p.y_fit for p in parts]))

    def variance(self, mean):
        dask = import_dask()
        partials = _on_cluster(lambda: dask.compute(*[dask.delayed(_variance_partial)(t, mean) for t in self.targets],
                                                     **_scheduler_options()), "the target's variance")
        return exact_mean(partials, self.n_samples)

    def all_targets(self, task, classes=None, mean=0.0, var=1.0):
        """The Target of all rows, its values on the workers (its y here is empty)."""
        if task == "regression":
            return regression_target(np.empty(0), mean, var)
        dask = import_dask()
        self.targets = _on_cluster(lambda: list(dask.persist(
            *[dask.delayed(class_codes)(t, classes) for t in self.targets], **_scheduler_options())), "class codes")
        return class_target(np.empty(0, dtype=classes.dtype), classes)

    def _map(self, fn, payload, state=None):
        """fn(partition, its targets, state, payload) on every partition, computed: the
        results in partition order."""
        dask = import_dask()
        start = time.perf_counter()
        payload = _shared(payload)
        task = dask.delayed(fn, pure=False)
        state = self.state if state is None else state
        results = _on_cluster(lambda: dask.compute(*[task(p, y, state, payload) for p, y in zip(
            self.partitions.parts, self.targets)], **_scheduler_options()), f"pass {fn.__name__}")
        logger.info("pass %s over %d partitions: %.3f s", fn.__name__, len(self.partitions.parts),
                    time.perf_counter() - start)
        return results

    def scorer(self, score, splits, bits):
        """(a stand-in for the Problem of all rows, score on all rows): the sum of score
        (problem, params, target, eps, n_threads) on every partition, in partition order."""
        state = _shared(_State(self.encoding, splits=splits), persist=True)

        def on_all_rows(problem, params, target, eps, n_threads):
            return float(sum(self._map(_score_part, (params, target, score, eps, bits), state)))

        return RowCount(self.n_samples), on_all_rows

    def refit_rule_lists(self, rule_lists, target, classes):
        """refit_rule_list of each list (one pass over the partitions per list)."""
        return [self.refit_rule_list(rules, target, classes) for rules in rule_lists]

    def refit_rule_list(self, rules, target, classes):
        """refit_rule_list of the rules on all rows (rules/lists.py), from per-partition
        counts and sums."""
        cached = self._refitted.get(id(rules))
        if cached is not None and cached[0] is rules:
            return cached[1]
        used = list(rules)
        if used and not used[-1].conditions:  # a last rule without conditions is the default
            used = used[:-1]
        stats = self._map(_list_part, (used, target.n_classes))
        n = self.n_samples
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

    def printed_conditions(self, conditions):
        """The conditions printed for all rows, from per-partition statistics."""
        results = self._map(_tree_statistics_part, (list(conditions), []))
        return conditions_printed(list(conditions), combine_training_row_statistics(r[0] for r in results))

    def key_counts(self, tree):
        """RuleTree.key_counts on all rows, summed over the partitions."""
        results = self._map(_tree_statistics_part, ([], [tree]))
        total = {}
        for _, (counts,) in results:
            for key, value in counts.items():
                total[key] = total.get(key, 0) + value
        return total

    def on_training_rows(self, rule_set):
        """A list's on_training_rows on all rows (rules/explanation.py), from per-partition
        statistics."""
        results = self._map(_printing_part, rule_set)
        stats = combine_training_row_statistics(r[0] for r in results)
        cover = sum(r[1] for r in results)
        printed = conditions_printed([c for r in rule_set.rules for c in r.conditions], stats)
        return rule_set.printed_list(printed, [int(c) for c in cover], sum(r[2] for r in results), self.n_samples)
