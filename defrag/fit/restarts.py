"""Restart orchestration: random initialisations, parallel runs, selection (sec. 5.2).

Each restart draws its initial state from its own seed (spawned from one
SeedSequence), runs FAB or EM in C with the GIL released, and is scored by its
training error under the two-step MAP prediction (eq. 10-11). Restarts run in a
thread pool; the OpenMP threads of each run are capped so that workers x threads
<= the fit's threads (utils/threads.py). Every kernel reduces in a fixed order, so the
chosen model is identical for any n_jobs and any OpenMP thread count. The pool's
tasks run in copies of the fit's context (its stop flag and threads), and a stopped
fit starts no further restart (utils/interrupt.py).
"""
import dataclasses
import itertools
import logging
import threading
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass

import numpy as np

from . import _fit
from ..utils.interrupt import check_interrupt, copy_context_run
from ..utils.threads import thread_budget, useful_threads

logger = logging.getLogger("defrag")


@dataclass
class Restart:
    index: int
    params: dict  # None once another restart is known to be better
    n_components: int
    lower_bound: np.ndarray  # trace, one value per outer iteration
    phases: np.ndarray  # annealing phase of each iteration (last = final phase)
    train_error: float
    rule_list: object = None  # the restart's rule list (_rule_list.RuleList), when fitted

    @property
    def final_bound(self):
        return float(self.lower_bound[-1]) if self.lower_bound.size else -np.inf


def initial_state(rng, n_samples, n_splits, n_components, target, eps):
    """Random initial parameters and responsibilities for one restart (Algorithm 1)."""
    K = n_components
    beta = rng.random((n_samples, K))
    beta /= beta.sum(axis=1, keepdims=True)
    params = {
        "eta": np.clip(rng.random((K, n_splits)), eps, 1.0 - eps),
        "alpha": rng.dirichlet(np.ones(K)),
    }
    if target.n_classes == 0:
        params["mean"] = target.mean + target.std * rng.standard_normal(K)
        params["precision"] = (0.1 + rng.random(K)) / target.var
    else:
        params["gamma"] = rng.dirichlet(np.ones(target.n_classes), size=K)
    return params, beta


def training_error(problem, params, target, eps, n_threads):
    """Error(D, Pi) of sec. 5.2 under the two-step MAP (eq. 10-11)."""
    assign = _fit.map_assign(problem, params, eps, n_threads)
    if target.n_classes == 0:
        return float(np.sum((target.y - params["mean"][assign]) ** 2))
    return float(np.count_nonzero(np.argmax(params["gamma"], axis=1)[assign] != target.y))


# E-step schedule passed to the kernel (dfg_options in src_c/dfg_fit.h): in the first
# 5 outer iterations at most 2 updates of eq. 13, later at most 20; and the
# iterations of each annealing phase of eps_schedule.
INNER = (5, 2, 20)
ANNEAL_ITER = 3


def run_restart(index, seed, problem, target, options, n_threads, score=True, live_threads=None):
    """One restart; its training error on the rows it was fitted on (NaN with score=False,
    for a caller that scores it on other rows). live_threads: see _ThreadShares."""
    rng = np.random.default_rng(seed)
    params, beta = initial_state(
        rng, problem.n_samples, options["n_splits"], options["n_components"], target, options["eps"]
    )
    K, trace, phases = _fit.fit(
        problem, params, beta, options["method"], options["max_iter"], options["tol"],
        options["delta"], options["eps"], target.var_floor, n_threads, INNER,
        options["eps_schedule"], ANNEAL_ITER, options.get("penalty_splits", 0), live_threads,
    )
    if live_threads is not None:
        n_threads = int(live_threads[0])
    params = {name: np.ascontiguousarray(a[:K]) for name, a in params.items()}
    error = training_error(problem, params, target, options["eps"], n_threads) if score else np.nan
    # the error rate (mean squared error in regression); else scored by the caller
    scored = f", training error {error / max(problem.n_samples, 1):.6g}" if score else ""
    logger.info("restart %d: %d components, %d iterations, lower bound %.6g%s",
                index, K, trace.size, trace[-1] if trace.size else float("nan"), scored)
    return Restart(index, params, K, trace, phases, error)


class _ThreadShares:
    """OpenMP threads of the running restarts. While restarts wait for a worker, each
    runs on the budget of one worker; once none waits, the threads of the workers that
    have finished go to the restarts still running (the C loop reads its share at every
    outer iteration through live_threads), so that the last restarts do not run on one
    thread while the other cores idle. Results do not depend on the shares: every
    kernel reduces in blocks fixed by the sizes alone."""

    def __init__(self, n_restarts, workers, threads, n_samples):
        self.total = workers * threads
        self.base = threads
        self.n_samples = n_samples
        self.share = [threads] * n_restarts
        self.live = [np.full(1, useful_threads(threads, n_samples), dtype=np.int32)
                     for _ in range(n_restarts)]
        self.waiting = n_restarts
        self.running = []
        self._lock = threading.Lock()

    def start(self, i):
        with self._lock:
            self.waiting -= 1
            self.running.append(i)
            self._rebalance()
        return self.live[i]

    def finish(self, i):
        with self._lock:
            self.running.remove(i)
            self._rebalance()

    def threads_for(self, i, n_samples):
        """The threads restart i may use now for work on n_samples rows."""
        with self._lock:
            return useful_threads(self.share[i], n_samples)

    def _rebalance(self):
        if self.waiting > 0 or not self.running:
            return
        each, extra = divmod(self.total, len(self.running))
        for rank, i in enumerate(self.running):
            self.share[i] = max(1, each + (rank < extra))
            self.live[i][0] = useful_threads(self.share[i], self.n_samples)


class _BestKeeper:
    """Keeps the parameters of the best restart so far and drops the others' as soon as
    they finish: a restart's eta is K x L (24 MB on a 297,397-split forest), so 20 kept
    restarts held half a gigabyte. The minimum of _selection_key does not depend on the
    order in which restarts finish."""

    def __init__(self):
        self._lock = threading.Lock()
        self._best = None

    def offer(self, r):
        with self._lock:
            if self._best is None or _selection_key(r) < _selection_key(self._best):
                if self._best is not None:
                    self._best.params = None
                self._best = r
            else:
                r.params = None
        return r

    @property
    def best(self):
        return self._best


def run_restarts(problem, target, options, n_restarts, random_state, n_jobs,
                 score_problem=None, score_target=None, rule_list=None, restart=run_restart,
                 score=training_error, collect=None, progress=None):
    """All restarts, in index order, and the selected one (the only one that keeps its
    params). With score_problem, each restart's training error is taken on it (all rows)
    instead of on the rows it was fitted on. With rule_list, a function
    ``rule_list(params) -> (RuleList, training error)``, each restart is scored by the
    error of its rule list instead of the mixture's MAP prediction. restart and score:
    one restart's fit (run_restart's signature) and the training error of its params
    (training_error's), FAB / EM's by default, EM-KL's from defrag/fit/emkl.py. collect:
    ``collect(index, params)`` is called with every restart's params before they may be
    dropped (form="list" reads every restart's components). progress: called in this
    thread after each restart with the restarts done and the best training error rate so far
    (utils/progress.py's RestartProgress)."""
    seeds = np.random.SeedSequence(random_state).spawn(n_restarts)
    workers, threads = thread_budget(n_jobs, n_restarts, problem.n_samples)
    logger.info("%d restarts on %d workers x %d OpenMP threads", n_restarts, workers, threads)
    keeper = _BestKeeper()
    shares = _ThreadShares(n_restarts, workers, threads, problem.n_samples)

    # errors are sums over the scored rows (all rows with a score_problem, and for rule
    # lists, which score themselves on all rows); the log gives rates
    n_scored = (problem if score_problem is None else score_problem).n_samples

    def job(i):
        check_interrupt()  # before the random start (N x K draws) of a restart
        live = shares.start(i)
        try:
            return keeper.offer(scored_restart(i, live))
        finally:
            shares.finish(i)

    def scored_restart(i, live):
        # a restart kernel that takes live_threads hands its thread count to the C loop
        extra = {"live_threads": live} if restart is run_restart else {}
        r = restart(i, seeds[i], problem, target, options, int(live[0]),
                    score=score_problem is None and rule_list is None, **extra)
        if rule_list is not None:
            fitted, error = rule_list(r.params)
            r = dataclasses.replace(r, train_error=error, rule_list=fitted)
            logger.info("restart %d: %d rules in the list, training error %.6g", i,
                        len(fitted.rules), error / max(n_scored, 1))
        elif score_problem is not None:  # all rows: the threads they keep busy
            error = score(score_problem, r.params, score_target, options["eps"],
                          shares.threads_for(i, score_problem.n_samples))
            r = dataclasses.replace(r, train_error=error)
            logger.info("restart %d: training error on all %d rows %.6g", i,
                        score_problem.n_samples, error / max(n_scored, 1))
        if collect is not None:
            collect(i, r.params)
        return r

    done = []

    def finished(r):
        done.append(r)
        if progress is not None:
            errors = [x.train_error for x in done if x.train_error == x.train_error]  # (NaN: diverged)
            progress(len(done), min(errors, default=np.nan) / max(n_scored, 1))
        return r

    if progress is not None:  # (a bar, where the fit has already run its delay)
        progress(0, np.nan)
    if workers == 1:
        results = [finished(job(i)) for i in range(n_restarts)]
    else:
        # Restarts are handed to the pool one as another ends, in index order, rather
        # than all at once: a stopped fit then has no queue of restarts to drain
        # (10,000 queued restarts, each raising at once, took seconds on busy cores).
        results = [None] * n_restarts
        indices = iter(range(n_restarts))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            running = {pool.submit(copy_context_run(job), i): i
                       for i in itertools.islice(indices, workers)}
            while running:
                ended, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in ended:
                    results[running.pop(future)] = finished(future.result())
                for i in itertools.islice(indices, len(ended)):
                    running[pool.submit(copy_context_run(job), i)] = i
    return results, keeper.best


def _selection_key(r):
    # Smallest training error (sec. 5.2); ties go to fewer rules, the larger bound, then
    # the earlier restart, so the choice never depends on completion order. A NaN (a
    # diverged run) ranks last: NaN compares false either way, and the order of the
    # comparisons would then decide.
    error = r.train_error if r.train_error == r.train_error else np.inf
    bound = r.final_bound if r.final_bound == r.final_bound else -np.inf
    n_rules = r.n_components if r.rule_list is None else len(r.rule_list.rules)
    return (error, n_rules, -bound, r.index)
