"""EM-KL: the KL-divergence mixture of experts with a softmax gate (Hara & Hayashi 2016).

Model (3) of the paper: q(z, s | x) = sum_k q(z | k) q(s | k) q(k | x), with

* q(s | k) the Bernoulli region eta_k over the split bits s (as in FAB),
* q(k | x) = exp(w_k^T s) / sum_k' exp(w_k'^T s), a softmax gate, w_k in R^L,
* q(z | k) a Gaussian (mean_k, precision_k) for regression, or, the natural analogue
  for classification, a categorical distribution gamma_k over the classes.

z is the ensemble's own prediction at x (its predicted class for classification: the
deterministic output z_g of the paper's model P), so maximising (5),
sum_n log q(z_n, s_n | x_n), minimises the KL divergence (4) from the ensemble to
the simplified model on the input sample. The fit is EM exactly as section 4.3:

* E-step: beta_nk proportional to q(z_n | k) q(s_n | k) q(k | x_n);
* M-step: eta, mean and precision (or gamma) in closed form, and the gate by a
  weighted multinomial logistic regression, solved by SciPy's conjugate gradient
  (the paper's suggestion) from the previous w, its objective and gradient computed in C (src_c/dfg_gate.h) on the
  rank path in O(N K D + K L). An L2 penalty gate_l2 / 2 ||w||^2 keeps w bounded
  when the components separate perfectly; EM then maximises (5) minus the penalty.

The lower bound (6) minus the penalty is recorded per iteration; it never decreases
within an eta clamp phase (the E-step and the closed forms maximise it exactly, and a
gate step that would lower it is not taken). Python loops over EM iterations only;
every pass over the samples is a C kernel.
"""
import logging

import numpy as np
from scipy.optimize import minimize

from . import _gate
from .restarts import ANNEAL_ITER, Restart, initial_state

logger = logging.getLogger("defrag")

# The gate's solver: SciPy's nonlinear conjugate gradient, as the paper suggests. On
# the 5,000 x 28 case of benchmarks/run.py (7,080 gate weights) an L-BFGS-B step cost
# 2.2 ms in SciPy's own code, more than the objective and gradient (1.6 ms); a CG step
# is a few vector operations, and a restart took 1.2 s instead of 2.5 s (same bound).
GATE_METHOD = "CG"
# Solver iterations of the gate per M-step. It starts from the previous w, so EM keeps
# improving the gate across iterations (a generalised EM step: the bound still never
# decreases); a full solve per M-step costs more for no better fit (same case: 5
# iterations gave a higher final bound than 10).
GATE_MAXITER = 5
# Gradient tolerance of the gate's solver (largest absolute entry).
GATE_GTOL = 1e-6


def gate_penalty(w, rho):
    """rho / 2 ||w||^2."""
    return 0.5 * rho * float(np.dot(w.ravel(), w.ravel()))


def fit_gate(problem, beta, w0, rho, n_threads, maxiter=GATE_MAXITER):
    """The gate's M-step: w minimising -sum_nk beta_nk log q(k | x_n) + rho / 2 ||w||^2,
    by SciPy's conjugate gradient (GATE_METHOD) from w0 with at most maxiter iterations. Returns (w, f(w)); w0 itself
    when the solver ends above f(w0), so the bound never decreases by the gate."""
    K, L = w0.shape
    first = []

    def fun(x):
        value, grad = _gate.gate_objective(problem, beta, x.reshape(K, L), rho, n_threads)
        if not first:
            first.append(value)
        return value, grad.ravel()

    if L == 0:
        return w0, fun(w0.ravel())[0]
    res = minimize(fun, w0.ravel(), jac=True, method=GATE_METHOD,
                   options={"maxiter": int(maxiter), "gtol": GATE_GTOL})
    if not res.fun <= first[0]:
        return w0, first[0]
    return np.ascontiguousarray(res.x.reshape(K, L)), float(res.fun)


def fit_emkl(problem, params, beta, w, options, var_floor, n_threads):
    """EM (sec. 4.3) in place on params, beta; returns (w, bound trace, phase of each
    iteration). options: max_iter, tol, eps, eps_schedule, gate_l2 (see DefragModel).

    The eta clamp follows DefragModel's eps_schedule as FAB's does (a few iterations
    per clamp, then eps until convergence); ``eps_schedule=()`` is plain EM. The trace
    is the bound (6) minus the gate's penalty at (beta_t, parameters_t), one value per
    iteration, as dfg_fit records FAB's."""
    schedule = tuple(options["eps_schedule"])
    n_anneal, max_iter, tol = len(schedule), int(options["max_iter"]), float(options["tol"])
    rho = float(options["gate_l2"])
    step_eps = schedule[0] if n_anneal else options["eps"]
    np.clip(params["eta"], step_eps, 1.0 - step_eps, out=params["eta"])
    trace, phases = [], []
    ph = ph_start = 0
    for t in range(n_anneal * ANNEAL_ITER + max_iter + 1):
        bound, _ = _gate.estep(problem, params, w, beta, n_threads)  # beta updated after
        trace.append(bound - gate_penalty(w, rho))
        phases.append(ph)
        converged = t > ph_start and trace[t] - trace[t - 1] < tol * max(1.0, abs(trace[t - 1]))
        if ph == n_anneal:
            if converged or t - ph_start >= max_iter:
                break
        elif converged or t - ph_start + 1 >= ANNEAL_ITER:
            ph += 1
            ph_start = t + 1
            step_eps = schedule[ph] if ph < n_anneal else options["eps"]
        _gate.mstep(problem, beta, params, step_eps, var_floor, n_threads)
        w, _ = fit_gate(problem, beta, w, rho, n_threads)
    return w, np.asarray(trace), np.asarray(phases, dtype=np.int32)


def posterior(problem, params, n_threads):
    """Weights of the experts at each row: q(k | x_n, s_n), proportional to
    q(s_n | k) q(k | x_n), shape (N, K)."""
    return _gate.posterior(problem, params["eta"], params["w"], n_threads)


def expected_output(weights, params):
    """The mixture of experts' prediction from posterior weights: the mean sum_k
    weight_k mean_k (regression), or the class probabilities sum_k weight_k gamma_k
    (classification), each row's gamma_k renormalised after the eps clamp."""
    if "mean" in params:
        return weights @ params["mean"]
    gamma = params["gamma"] / params["gamma"].sum(axis=1, keepdims=True)
    return weights @ gamma


def training_error(problem, params, target, eps, n_threads):
    """Training error of the mixture of experts' prediction: squared error summed
    (regression) or misclassified count (classification), as the restarts are compared."""
    out = expected_output(posterior(problem, params, n_threads), params)
    if target.n_classes == 0:
        return float(np.sum((target.y - out) ** 2))
    return float(np.count_nonzero(np.argmax(out, axis=1) != target.y))


def run_restart(index, seed, problem, target, options, n_threads, score=True):
    """One EM-KL restart from a random start (FAB's initial_state; the gate starts at
    w = 0, a uniform q(k | x)); its training error with score=True, else NaN."""
    rng = np.random.default_rng(seed)
    K, L = options["n_components"], options["n_splits"]
    params, beta = initial_state(rng, problem.n_samples, L, K, target, options["eps"])
    w = np.zeros((K, L))
    w, trace, phases = fit_emkl(problem, params, beta, w, options, target.var_floor, n_threads)
    params["w"] = w
    error = training_error(problem, params, target, options["eps"], n_threads) if score else np.nan
    logger.info("restart %d (EM-KL): %d iterations, lower bound %.6g%s", index, trace.size,
                trace[-1], f", training error {error:.6g}" if score else "")
    return Restart(index, params, K, trace, phases, error)
