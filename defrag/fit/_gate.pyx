# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The EM-KL mixture of experts' kernels (src_c/dfg_gate.h, src_c/dfg_emkl.h): the
softmax gate over the split bits, its M-step objective and gradient, the E-step with
the lower bound (6), the closed-form M-step and the experts' posterior weights, over a
``_fit.Problem`` on the rank path. EM-KL's loop is Python (defrag/fit/emkl.py): each call
starts with the stop flag (stop_flag raises once the fit is interrupted) and takes at
most the fit's threads (kernel_threads)."""
import numpy as np

from libc.stdint cimport int64_t

from defrag._cdefs cimport (dfg_emkl_estep, dfg_emkl_mstep, dfg_emkl_posterior, dfg_params,
                            dfg_gate_log_prob, dfg_gate_objective)
from defrag.utils._common cimport check_status, kernel_threads, stop_flag, stop_pointer
from defrag.fit._fit cimport Problem, params_view


cdef check_ranks(Problem problem, object w, str what):
    """w (K x L) against the problem; the problem must be on the rank path."""
    if problem.data.ranks == NULL:
        raise ValueError(f"{what}: the EM-KL kernels need the rank path (a Problem with ranks)")
    if w.ndim != 2 or w.shape[0] < 1 or w.shape[1] != problem.data.n_splits:
        raise ValueError(f"{what}: w must have shape (n_components, {problem.data.n_splits}); "
                         f"got {w.shape}")


cdef check_rows(Problem problem, object beta, int64_t K, str what):
    if beta.shape[0] != problem.data.n_samples or beta.shape[1] != K:
        raise ValueError(f"{what}: beta must have shape ({problem.data.n_samples}, {K}); "
                         f"got {beta.shape}")


def gate_log_prob(Problem problem, const double[:, ::1] w, int n_threads=1):
    """log q(k | x_n) of the gate, shape (N, K)."""
    stop_flag()
    n_threads = kernel_threads(n_threads)
    check_ranks(problem, np.asarray(w), "gate_log_prob")
    cdef int64_t K = w.shape[0]
    out = np.empty((problem.data.n_samples, K), dtype=np.float64)
    cdef double[:, ::1] o = out
    cdef int status = 0
    if problem.data.n_samples:
        with nogil:
            status = dfg_gate_log_prob(problem.data.ranks, problem.data.n_samples,
                                       problem.data.n_features, problem.data.feat_ptr,
                                       problem.data.missing_right, &w[0, 0], K, &o[0, 0],
                                       n_threads)
    check_status(status, "gate_log_prob")
    return out


def gate_objective(Problem problem, const double[:, ::1] beta, const double[:, ::1] w,
                   double rho, int n_threads=1):
    """(f(w), gradient K x L) of the gate's M-step, to be minimised:
    -sum_nk beta_nk log q(k | x_n) + rho / 2 ||w||^2."""
    flag = stop_flag(False)  # the kernel reads it
    cdef const int *stop = stop_pointer(flag)
    n_threads = kernel_threads(n_threads)
    check_ranks(problem, np.asarray(w), "gate_objective")
    cdef int64_t K = w.shape[0]
    check_rows(problem, np.asarray(beta), K, "gate_objective")
    if not rho >= 0.0:
        raise ValueError(f"gate_objective: rho must be >= 0; got {rho}")
    grad = np.empty((K, problem.data.n_splits), dtype=np.float64)
    cdef double[:, ::1] g = grad
    cdef double value = 0.0
    cdef double dummy = 0.0
    cdef int status
    with nogil:
        status = dfg_gate_objective(problem.data.ranks, problem.data.n_samples,
                                    problem.data.n_features, problem.data.feat_ptr,
                                    problem.data.missing_right, &beta[0, 0], &w[0, 0], K, rho,
                                    &value, &g[0, 0] if g.shape[1] else &dummy, n_threads, stop)
    check_status(status, "gate_objective")
    return value, grad


def estep(Problem problem, dict params, const double[:, ::1] w, double[:, ::1] beta,
          int n_threads=1):
    """E-step in place on beta; returns (the bound (6) at the beta given, logf N x K)."""
    flag = stop_flag(False)  # the kernel reads it
    cdef const int *stop = stop_pointer(flag)
    n_threads = kernel_threads(n_threads)
    check_ranks(problem, np.asarray(w), "estep")
    cdef int64_t K = w.shape[0]
    check_rows(problem, np.asarray(beta), K, "estep")
    cdef dfg_params p = params_view(params, K, problem.data.n_classes, problem.data.n_splits)
    logf = np.empty((problem.data.n_samples, K), dtype=np.float64)
    cdef double[:, ::1] lf = logf
    cdef double bound = 0.0
    cdef int status
    with nogil:
        status = dfg_emkl_estep(&problem.data, &p, &w[0, 0], &beta[0, 0], &lf[0, 0], &bound,
                                n_threads, stop)
    check_status(status, "emkl_estep")
    return bound, logf


def mstep(Problem problem, const double[:, ::1] beta, dict params, double eps, double var_floor,
          int n_threads=1):
    """Closed-form M-step (eta, mean and precision or gamma, alpha) in place on params."""
    stop_flag()
    n_threads = kernel_threads(n_threads)
    cdef int64_t K = beta.shape[1]
    check_rows(problem, np.asarray(beta), K, "mstep")
    if problem.data.ranks == NULL:
        raise ValueError("mstep: the EM-KL kernels need the rank path (a Problem with ranks)")
    cdef dfg_params p = params_view(params, K, problem.data.n_classes, problem.data.n_splits)
    cdef int status
    with nogil:
        status = dfg_emkl_mstep(&problem.data, &beta[0, 0], eps, var_floor, &p, n_threads)
    check_status(status, "emkl_mstep")


def posterior(Problem problem, const double[:, ::1] eta, const double[:, ::1] w,
              int n_threads=1):
    """q(k | x_n, s_n), proportional to q(s_n | k) q(k | x_n), shape (N, K)."""
    stop_flag()
    n_threads = kernel_threads(n_threads)
    check_ranks(problem, np.asarray(w), "posterior")
    cdef int64_t K = w.shape[0]
    if eta.shape[0] != K or eta.shape[1] != w.shape[1]:
        raise ValueError("posterior: eta and w must have the same shape")
    out = np.empty((problem.data.n_samples, K), dtype=np.float64)
    cdef double[:, ::1] o = out
    cdef double dummy = 0.5
    cdef int status
    with nogil:
        status = dfg_emkl_posterior(&problem.data, &eta[0, 0] if eta.shape[1] else &dummy,
                                    &w[0, 0] if w.shape[1] else &dummy, K,
                                    &o[0, 0] if o.shape[0] else &dummy, n_threads)
    check_status(status, "emkl_posterior")
    return out
