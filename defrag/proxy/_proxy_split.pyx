# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Split search of the proxy tree (src_c/dfg_proxy_split.h): the best split of a node
for a regression reference (mean and variance per row) or a classification one (class
probabilities per row). X may hold NaN: each split also says where missing values go.
Both stop (KernelInterrupted) when the fit they work for is interrupted."""
from libc.stdint cimport int32_t, int64_t

from defrag._cdefs cimport dfg_proxy_best_split, dfg_proxy_best_split_proba
from defrag.utils._common cimport check_status, kernel_threads, stop_flag, stop_pointer


def proxy_best_split(const double[:, ::1] X, const int64_t[::1] rows, const double[::1] mean,
                     const double[::1] var, int64_t min_leaf, double var_floor, int n_threads=1):
    """(feature, threshold, gain, n_left, missing_right) of the best split of a node;
    feature -1 if none."""
    flag = stop_flag(False)  # the kernel reads it
    cdef const int *stop = stop_pointer(flag)
    n_threads = kernel_threads(n_threads)
    if mean.shape[0] != X.shape[0] or var.shape[0] != X.shape[0]:
        raise ValueError("mean and var must have one entry per row of X")
    if rows.shape[0] == 0 or X.shape[0] == 0:
        raise ValueError("proxy_best_split: empty node")
    cdef int32_t feature = -1, missing_right = 0
    cdef double threshold = 0.0, gain = 0.0
    cdef int64_t n_left = 0
    cdef int status
    with nogil:
        status = dfg_proxy_best_split(&X[0, 0], X.shape[0], X.shape[1], &rows[0], rows.shape[0],
                                      &mean[0], &var[0], min_leaf, var_floor, &feature,
                                      &threshold, &gain, &n_left, &missing_right, n_threads, stop)
    check_status(status, "proxy_best_split")
    return int(feature), float(threshold), float(gain), int(n_left), bool(missing_right)


def proxy_best_split_proba(const double[:, ::1] X, const int64_t[::1] rows,
                           const double[:, ::1] P, int64_t min_leaf, int n_threads=1):
    """Soft-target classification split (entropy of the mean class probabilities)."""
    flag = stop_flag(False)  # the kernel reads it
    cdef const int *stop = stop_pointer(flag)
    n_threads = kernel_threads(n_threads)
    if P.shape[0] != X.shape[0]:
        raise ValueError("P must have one row per row of X")
    if rows.shape[0] == 0 or X.shape[0] == 0 or P.shape[1] == 0:
        raise ValueError("proxy_best_split_proba: empty node or no classes")
    cdef int32_t feature = -1, missing_right = 0
    cdef double threshold = 0.0, gain = 0.0
    cdef int64_t n_left = 0
    cdef int status
    with nogil:
        status = dfg_proxy_best_split_proba(&X[0, 0], X.shape[0], X.shape[1], &rows[0],
                                            rows.shape[0], &P[0, 0], P.shape[1], min_leaf,
                                            &feature, &threshold, &gain, &n_left,
                                            &missing_right, n_threads, stop)
    check_status(status, "proxy_best_split_proba")
    return int(feature), float(threshold), float(gain), int(n_left), bool(missing_right)
