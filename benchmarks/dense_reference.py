"""One FAB restart (Hara & Hayashi 2017, Algorithm 1) in plain dense NumPy.

This is the baseline that bench_core.py times against defrag's C kernels. It
holds the split outcomes as a dense N x L float64 matrix S and evaluates every
equation with matrix products, the way a straightforward implementation would:

* eq. 6 + 8 + 9: log f_nk = S @ log(eta).T + (1 - S) @ log(1 - eta).T
  + log gamma_{k, y_n} (or the Gaussian term) + log alpha_k;
* eq. 12: the FAB lower bound;
* eq. 13: the E-step update, iterated;
* truncation of components with mean responsibility < delta;
* eq. 14: the M-step.

To make the timing a like-for-like comparison, the control flow copies
defrag's run (src_c/dfg_fit.c with ``eps_schedule=()``, defrag/_restarts.py)
step for step: the same random initial state drawn from the same seed, the
same warm-up (few E-step updates in the first outer iterations), the same
convergence tests, and the bound evaluated at the start of each outer
iteration. Both implementations therefore do the same amount of work and,
up to rounding, produce the same lower-bound trace, which bench_core.py checks.
"""
import time

import numpy as np

from defrag._restarts import INNER, initial_state as _defrag_initial_state
from defrag.defrag_model import _Target

# defrag's E-step schedule (defrag/_restarts.py): in the first WARMUP_ITER outer
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
        target = _Target(y, 0, float(np.mean(y)), float(np.sqrt(var)), var)
    else:
        target = _Target(y, n_classes)
    return _defrag_initial_state(rng, n_samples, n_splits, n_components, target, eps)


def omega(n_splits, n_classes):
    """omega = (dim phi / K + L + 1) / 2 of eq. 12 (dim phi / K = 2 or C)."""
    return 0.5 * ((2 if n_classes == 0 else n_classes) + n_splits + 1)


def log_joint(S, params, y, n_classes):
    """log f_nk (N x K), eq. 9 with the dense Bernoulli term of eq. 6."""
    eta = params["eta"]
    # Two N x L by L x K products; (1.0 - S) is a second N x L temporary.
    logf = S @ np.log(eta).T + (1.0 - S) @ np.log(1.0 - eta).T
    if n_classes == 0:
        lam, mu = params["precision"], params["mean"]
        logf += 0.5 * np.log(lam / (2 * np.pi)) - 0.5 * lam * (y[:, None] - mu) ** 2
    else:
        logf += np.log(params["gamma"][:, y].T)
    logf += np.log(params["alpha"])
    return logf


def lower_bound(logf, beta, om):
    """eq. 12 and the column sums of beta; terms with beta = 0 contribute 0."""
    pos = beta > 0
    fit = np.sum(beta * np.where(pos, logf, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        neg_entropy = np.sum(np.where(pos, beta * np.log(beta), 0.0))
    colsum = beta.sum(axis=0)
    return float(fit - om * np.sum(np.log(colsum + 1.0)) - neg_entropy), colsum


def estep(logf, beta, om, max_inner, tol):
    """eq. 13 iterated until no column sum moves by more than tol * N, or max_inner updates
    (the update reads beta only through its column sums, as in src_c/dfg_estep.c)."""
    colsum = beta.sum(axis=0)
    for _ in range(max_inner):
        a = logf - om / (colsum + 1.0)
        a -= a.max(axis=1, keepdims=True)
        beta = np.exp(a)
        beta /= beta.sum(axis=1, keepdims=True)
        previous, colsum = colsum, beta.sum(axis=0)
        if np.max(np.abs(colsum - previous)) <= tol * beta.shape[0]:
            break
    return beta, colsum


def truncate(params, beta, colsum, delta):
    """Algorithm 1: drop k when (1/N) sum_n beta_nk < delta; renormalise beta's rows."""
    keep = colsum / beta.shape[0] >= delta
    if keep.all():
        return params, beta
    params = {name: a[keep] for name, a in params.items()}
    beta = beta[:, keep]
    rows = beta.sum(axis=1, keepdims=True)
    beta = np.where(rows > 0, beta / np.where(rows > 0, rows, 1.0), 1.0 / beta.shape[1])
    return params, beta


def mstep(S, beta, y, n_classes, eps, var_floor):
    """eq. 14, with eta clamped to [eps, 1 - eps] and gamma floored at eps."""
    nk = beta.sum(axis=0)
    params = {
        "eta": np.clip((beta.T @ S) / nk[:, None], eps, 1.0 - eps),
        "alpha": nk / nk.sum(),
    }
    if n_classes == 0:
        mu = beta.T @ y / nk
        var = np.sum(beta * (y[:, None] - mu) ** 2, axis=0) / nk
        params["mean"], params["precision"] = mu, 1.0 / np.maximum(var, var_floor)
    else:
        counts = beta.T @ np.eye(n_classes)[y]
        params["gamma"] = np.maximum(counts / counts.sum(axis=1, keepdims=True), eps)
    return params


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
    om = omega(L, n_classes)
    trace, iter_seconds = [], []
    for t in range(max_iter + 1):
        start = time.perf_counter()
        logf = log_joint(S, params, y, n_classes)
        bound, _ = lower_bound(logf, beta, om)
        trace.append(bound)
        converged = t > 0 and bound - trace[-2] < tol * max(1.0, abs(trace[-2]))
        if converged or t >= max_iter:
            break
        inner = WARMUP_INNER if t < WARMUP_ITER else MAX_INNER
        beta, colsum = estep(logf, beta, om, inner, tol)
        params, beta = truncate(params, beta, colsum, delta)
        params = mstep(S, beta, y, n_classes, eps, var_floor)
        iter_seconds.append(time.perf_counter() - start)
    return {
        "lower_bound": np.array(trace),
        "iter_seconds": np.array(iter_seconds),
        "n_components": int(params["alpha"].size),
        "params": params,
    }
