"""One FAB restart (Hara & Hayashi 2017, Algorithm 1) in plain dense NumPy, timed.

This is the baseline that bench_core.py and run.py time against defrag's C kernels. It
holds the split outcomes as a dense N x L float64 matrix S and evaluates every
equation with matrix products, the way a straightforward implementation would. The
equations are those the tests check the C kernels against (tests/reference.py):

* eq. 6 + 8 + 9: log f_nk (``reference.log_joint``);
* eq. 12: the FAB lower bound (``reference.lower_bound``);
* eq. 13: the E-step update, iterated (``reference.estep_fab``);
* truncation of components with mean responsibility < delta (``reference.truncate``);
* eq. 14: the M-step (``reference.mstep``).

To make the timing a like-for-like comparison, the control flow copies
defrag's run (src_c/dfg_fit.c with ``eps_schedule=()``, defrag/fit/restarts.py)
step for step: the same random initial state drawn from the same seed, the
same warm-up (few E-step updates in the first outer iterations), the same
convergence tests, and the bound evaluated at the start of each outer
iteration. Both implementations therefore do the same amount of work and,
up to rounding, produce the same lower-bound trace, which the benchmarks check.
"""
import os
import sys
import time

import numpy as np

from defrag.fit.restarts import INNER, initial_state as _defrag_initial_state
from defrag.fit.targets import Target

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
import reference  # noqa: E402  (tests/reference.py, found through the path above)

# defrag's E-step schedule (defrag/fit/restarts.py): in the first WARMUP_ITER outer
# iterations the E-step makes at most WARMUP_INNER updates of eq. 13, later at most MAX_INNER.
WARMUP_ITER, WARMUP_INNER, MAX_INNER = INNER


def restart_seed(random_state, index=0):
    """Seed of restart ``index`` as DefragModel(random_state=int) derives it."""
    entropy = np.random.RandomState(random_state).randint(np.iinfo(np.int32).max)
    return np.random.SeedSequence(entropy).spawn(index + 1)[index]


def initial_state(rng, n_samples, n_splits, n_components, y, n_classes, eps):
    """Random initial parameters and responsibilities: defrag's own draw, so that both
    implementations start from the same point."""
    if n_classes == 0:
        var = float(np.var(y)) or 1.0
        target = Target(y, 0, float(np.mean(y)), float(np.sqrt(var)), var)
    else:
        target = Target(y, n_classes)
    return _defrag_initial_state(rng, n_samples, n_splits, n_components, target, eps)


def fab_restart(S, y, n_classes, *, n_components=10, max_iter=100, seed=None, tol=1e-6,
                delta=1e-8, eps=1e-10, var_floor=None):
    """One FAB run on the dense split matrix S (N x L float64).

    y: int class codes 0..n_classes-1, or float targets with n_classes = 0.
    Runs like ``DefragModel(max_iter=max_iter, eps_schedule=())``: at most
    max_iter updates, the bound evaluated before each and after the last.

    Returns a dict: ``lower_bound`` (trace, one value per outer iteration),
    ``iter_seconds`` (wall time of each full outer iteration: log f, bound,
    E-step, truncation, M-step), ``n_components``, ``params``.
    """
    N, L = S.shape
    if n_classes == 0 and var_floor is None:
        var = float(np.var(y))
        var_floor = 1e-9 * var if var > 0 else 1e-12
    params, beta = initial_state(np.random.default_rng(seed), N, L, n_components, y, n_classes, eps)
    om = reference.omega(L, n_classes)
    trace, iter_seconds = [], []
    for t in range(max_iter + 1):
        start = time.perf_counter()
        logf = reference.log_joint(S, params, y, n_classes)
        bound = reference.lower_bound(logf, beta, om)
        trace.append(bound)
        converged = t > 0 and bound - trace[-2] < tol * max(1.0, abs(trace[-2]))
        if converged or t >= max_iter:
            break
        inner = WARMUP_INNER if t < WARMUP_ITER else MAX_INNER
        beta = reference.estep_fab(logf, beta, om, inner, tol)
        params, beta = reference.truncate(params, beta, delta)
        params = reference.mstep(S, beta, y, n_classes, eps, var_floor)
        iter_seconds.append(time.perf_counter() - start)
    return {
        "lower_bound": np.array(trace),
        "iter_seconds": np.array(iter_seconds),
        "n_components": int(params["alpha"].size),
        "params": params,
    }
