# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Single kernels of the fit, exposed only so that the tests can check each against its
equation (tests/reference.py) and the builds against each other. The library itself
runs them inside dfg_fit (defrag/_fit.pyx) and never imports this module."""
import numpy as np

from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t

from defrag._cdefs cimport (DFG_OK, dfg_estep, dfg_log_array_kind, dfg_log_joint, dfg_log_kind,
                            dfg_log_odds_array_kind, dfg_loglik_bits, dfg_loglik_ranks,
                            dfg_lower_bound, dfg_mstep, dfg_options, dfg_params,
                            dfg_proxy_node_score, dfg_rank_tables, dfg_split_stats_bits,
                            dfg_split_stats_ranks)
from defrag.utils._common cimport check_status, optional_flags, stop_pointer
from defrag.fit._fit cimport Problem, fit_options, params_view


def loglik_ranks(const int32_t[:, ::1] ranks, const int64_t[::1] feat_ptr,
                 const double[:, ::1] eta, int n_threads=1, missing_right=None):
    """log p(s_n | k) (eq. 6) by the rank path, shape (n_samples, K)."""
    cdef int64_t D = ranks.shape[0], N = ranks.shape[1], K = eta.shape[0], L = eta.shape[1]
    if feat_ptr.shape[0] != D + 1 or feat_ptr[D] != L:
        raise ValueError("loglik_ranks: feat_ptr must have one entry per rank row plus one, "
                         "the last equal to eta's number of splits")
    if K < 1:
        raise ValueError("loglik_ranks: eta needs at least one component")
    cdef const uint8_t *mr = optional_flags(missing_right, L)
    table = np.empty(((L + 2 * D) * K + K,), dtype=np.float64)
    cdef double[::1] t = table
    out = np.empty((N, K), dtype=np.float64)
    cdef double[:, ::1] o = out
    cdef int status
    with nogil:
        status = dfg_rank_tables(&eta[0, 0] if L else NULL, K, L, &feat_ptr[0], D, mr,
                                 &t[0], &t[(L + 2 * D) * K], n_threads)
        if status == DFG_OK and N:
            status = dfg_loglik_ranks(&ranks[0, 0] if D else NULL, N, D, &feat_ptr[0],
                                      &t[0], &t[(L + 2 * D) * K], K, &o[0, 0], n_threads)
    check_status(status, "loglik_ranks")
    return out


def loglik_bits(const uint64_t[:, ::1] S, int64_t n_splits, const double[:, ::1] eta,
                double eps, int n_threads=1):
    """log p(s_n | k) (eq. 6) by the bit path with popcounts, shape (n_samples, K)."""
    cdef int64_t N = S.shape[0], K = eta.shape[0]
    if eta.shape[1] != n_splits or S.shape[1] != (n_splits + 63) // 64:
        raise ValueError("loglik_bits: eta must have n_splits columns and S "
                         "ceil(n_splits / 64) words per row")
    if K < 1:
        raise ValueError("loglik_bits: eta needs at least one component")
    out = np.empty((N, K), dtype=np.float64)
    cdef double[:, ::1] o = out
    cdef int status = DFG_OK
    if N and n_splits:
        with nogil:
            status = dfg_loglik_bits(&S[0, 0], N, n_splits, &eta[0, 0], K, eps, &o[0, 0], n_threads)
    elif N:
        out[:] = 0.0
    check_status(status, "loglik_bits")
    return out


cdef check_responsibilities(const double[:, ::1] logf, const double[:, ::1] beta, str what):
    if beta.shape[0] != logf.shape[0] or beta.shape[1] != logf.shape[1]:
        raise ValueError(f"{what}: logf and beta differ in shape")
    if logf.shape[0] < 1:
        raise ValueError(f"{what}: no samples")


def lower_bound(const double[:, ::1] logf, const double[:, ::1] beta, double omega,
                int n_threads=1):
    """(bound of eq. 12, column sums of beta)."""
    check_responsibilities(logf, beta, "lower_bound")
    cdef int64_t N = logf.shape[0], K = logf.shape[1]
    colsum = np.empty(K, dtype=np.float64)
    cdef double[::1] c = colsum
    cdef double value = 0.0
    cdef int status
    with nogil:
        status = dfg_lower_bound(&logf[0, 0], &beta[0, 0], N, K, omega, &c[0], &value, n_threads)
    check_status(status, "lower_bound")
    return value, colsum


def estep(const double[:, ::1] logf, double[:, ::1] beta, double omega, int max_inner,
          double tol, int n_threads=1, stop=None):
    """E-step (eq. 13 iterated; EM when omega == 0) in place on beta; stop: a stop flag
    (one-element int32 array, src_c/dfg_common.h) or None.

    Returns (column sums, bound, number of updates)."""
    cdef const int *stop_ptr = stop_pointer(stop)
    check_responsibilities(logf, beta, "estep")
    cdef int64_t N = logf.shape[0], K = logf.shape[1]
    colsum = np.empty(K, dtype=np.float64)
    cdef double[::1] c = colsum
    cdef double value = 0.0
    cdef int n_inner = 0, status
    with nogil:
        status = dfg_estep(&logf[0, 0], N, K, omega, max_inner, tol, &beta[0, 0], &c[0],
                           &value, &n_inner, NULL, n_threads, stop_ptr)
    check_status(status, "estep")
    return colsum, value, n_inner


def split_stats_ranks(const int32_t[:, ::1] ranks, const int64_t[::1] feat_ptr,
                      const double[:, ::1] beta, int n_threads=1, missing_right=None):
    """sum_n beta_nk s_nl by rank histograms, shape (K, L)."""
    cdef int64_t D = ranks.shape[0], N = ranks.shape[1], K = beta.shape[1]
    if beta.shape[0] != N or feat_ptr.shape[0] != D + 1:
        raise ValueError("split_stats_ranks: beta must have one row per sample and feat_ptr "
                         "one entry per rank row plus one")
    if N < 1:
        raise ValueError("split_stats_ranks: no samples")
    cdef int64_t L = feat_ptr[D]
    cdef const uint8_t *mr = optional_flags(missing_right, L)
    num = np.zeros((K, L), dtype=np.float64)
    cdef double[:, ::1] o = num
    cdef int status = DFG_OK
    if L:
        with nogil:
            status = dfg_split_stats_ranks(&ranks[0, 0], N, D, &feat_ptr[0], mr, &beta[0, 0], K,
                                           &o[0, 0], n_threads)
    check_status(status, "split_stats_ranks")
    return num


def split_stats_bits(const uint64_t[:, ::1] S, int64_t n_splits, const double[:, ::1] beta,
                     int n_threads=1):
    """sum_n beta_nk s_nl over the bit-packed rows, shape (K, L)."""
    cdef int64_t N = S.shape[0], K = beta.shape[1]
    if beta.shape[0] != N or S.shape[1] != (n_splits + 63) // 64:
        raise ValueError("split_stats_bits: beta must have one row per sample and S "
                         "ceil(n_splits / 64) words per row")
    if N < 1:
        raise ValueError("split_stats_bits: no samples")
    num = np.zeros((K, n_splits), dtype=np.float64)
    cdef double[:, ::1] o = num
    cdef int status = DFG_OK
    if n_splits:
        with nogil:
            status = dfg_split_stats_bits(&S[0, 0], N, n_splits, &beta[0, 0], K, &o[0, 0], n_threads)
    check_status(status, "split_stats_bits")
    return num


def log_joint(Problem problem, dict params, int n_threads=1):
    """log f_nk = log p(y|k) + log p(s|k) + log alpha_k, shape (N, K)."""
    cdef int64_t K = params["alpha"].shape[0]
    cdef dfg_params p = params_view(params, K, problem.data.n_classes, problem.data.n_splits)
    out = np.empty((problem.data.n_samples, K), dtype=np.float64)
    cdef double[:, ::1] o = out
    cdef int status
    with nogil:
        status = dfg_log_joint(&problem.data, &p, &o[0, 0], n_threads)
    check_status(status, "log_joint")
    return out


def mstep(Problem problem, const double[:, ::1] beta, dict params, double eps,
          double var_floor, int n_threads=1, stop=None):
    """M-step (eq. 14) into the arrays of params (sized for beta.shape[1] components);
    stop: a stop flag (one-element int32 array) or None."""
    cdef int64_t K = beta.shape[1]
    if beta.shape[0] != problem.data.n_samples:
        raise ValueError("mstep: beta must have one row per sample of the problem")
    cdef dfg_params p = params_view(params, K, problem.data.n_classes, problem.data.n_splits)
    cdef dfg_options o = fit_options("fab", 1, 0.0, 0.0, eps, var_floor, n_threads, (5, 2, 20))
    o.stop = stop_pointer(stop)
    cdef int status
    with nogil:
        status = dfg_mstep(&problem.data, &beta[0, 0], &o, &p)
    check_status(status, "mstep")


def proxy_node_score(const int64_t[::1] rows, const double[::1] mean, const double[::1] var,
                     double var_floor):
    """-n log(max(sigma2, var_floor)) of the node holding `rows` (eq. 8)."""
    if mean.shape[0] != var.shape[0]:
        raise ValueError("mean and var differ in length")
    cdef double score = 0.0
    cdef int status
    with nogil:
        status = dfg_proxy_node_score(&rows[0] if rows.shape[0] else NULL, rows.shape[0],
                                      mean.shape[0], &mean[0], &var[0], var_floor, &score)
    check_status(status, "proxy_node_score")
    return score


def log_kind():
    """The vectorised log this CPU runs: 0 baseline, 1 AVX2, 2 AVX-512."""
    return dfg_log_kind()


def log_array(const double[::1] x, bint odds=False):
    """log x, or with odds=True log(x / (1 - x)), by the tables' vectorised kernel.
    x: positive, finite, normal values (for odds, in (0, 1) with normal odds)."""
    cdef int64_t n = x.shape[0]
    arr = np.asarray(x)
    valid = np.all(arr >= np.finfo(np.float64).tiny) and np.all(np.isfinite(arr))
    if odds:
        valid = valid and np.all(arr < 1.0)
    if n and not valid:
        raise ValueError("log_array needs positive, finite, normal values (below 1 for odds)")
    out = np.empty(n, dtype=np.float64)
    cdef double[::1] o = out
    cdef int kind = dfg_log_kind()
    if n:
        with nogil:
            if odds:
                dfg_log_odds_array_kind(kind, &x[0], &o[0], n)
            else:
                dfg_log_array_kind(kind, &x[0], &o[0], n)
    return out
