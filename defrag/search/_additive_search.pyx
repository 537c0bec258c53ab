# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The additive path (src_c/dfg_additive_path.h: FIGS over single splits, grown one split
at a time), for defrag/search/additive_search.py. Arrays are checked here; the algorithm is
all in the kernel. Stops (KernelInterrupted) when the fit it works for is interrupted."""
import numpy as np

from libc.stdint cimport int64_t, uint8_t

from defrag._cdefs cimport dfg_additive_path_grow, dfg_additive_replay
from defrag.utils._common cimport check_status, kernel_threads, stop_flag, stop_pointer


def additive_path_grow(const uint8_t[:, ::1] S, const double[:, ::1] T, int64_t max_splits, int64_t min_leaf,
                       int64_t backfit_rounds, double rel_tol, int n_threads=1):
    """(term, node, split, base, leaf_values): the steps (step t splits node node[t] of term
    term[t] on split[t]), the base (d) and the final values of the nodes each step made
    (leaf_values[t, side], side 0 then, 1 else; NaN where the node was split later).
    S (n, L) 0/1, T (n, d)."""
    flag = stop_flag(False)  # the kernel reads it
    cdef const int *stop = stop_pointer(flag)
    n_threads = kernel_threads(n_threads)
    cdef int64_t n = S.shape[0], L = S.shape[1], d = T.shape[1]
    if T.shape[0] != n:
        raise ValueError(f"T has {T.shape[0]} rows for {n} rows of S")
    if max_splits < 0 or min_leaf < 1 or backfit_rounds < 0:
        raise ValueError("max_splits and backfit_rounds must be >= 0, min_leaf >= 1")
    if max_splits > 2 ** 30 or (d > 0 and max_splits > 2 ** 60 // (2 * d)):
        raise ValueError(f"additive_path_grow: max_splits = {max_splits} is too large")
    term = np.zeros(max(max_splits, 1), dtype=np.int64)
    node = np.zeros(max(max_splits, 1), dtype=np.int64)
    split = np.zeros(max(max_splits, 1), dtype=np.int64)
    base = np.zeros(max(d, 1), dtype=np.float64)
    leaf_values = np.zeros((max(max_splits, 1), 2, max(d, 1)), dtype=np.float64)
    cdef int64_t[::1] term_view = term
    cdef int64_t[::1] node_view = node
    cdef int64_t[::1] split_view = split
    cdef double[::1] base_view = base
    cdef double[:, :, ::1] values_view = leaf_values
    cdef const uint8_t *S_ptr = &S[0, 0] if n * L > 0 else NULL
    cdef const double *T_ptr = &T[0, 0] if n * d > 0 else NULL
    cdef int64_t n_steps = 0
    cdef int status
    with nogil:
        status = dfg_additive_path_grow(S_ptr, T_ptr, n, L, d, max_splits, min_leaf, backfit_rounds, rel_tol,
                                        &term_view[0], &node_view[0], &split_view[0], &n_steps, &base_view[0],
                                        &values_view[0, 0, 0], n_threads, stop)
    check_status(status, "additive_path_grow")
    return (term[:n_steps], node[:n_steps], split[:n_steps], base[:d],
            leaf_values[:n_steps, :, :d])


def additive_replay(const uint8_t[:, ::1] S, const double[:, ::1] T0, const int64_t[:, ::1] steps,
                    int64_t backfit_rounds):
    """(values, bad_step) of dfg_additive_replay (src_c/dfg_additive_path.h): the leaf values
    of the model of each number of steps, flat (term by term, leaves in node order, d each),
    and the first step that leaves a side without rows (-1: none). S (n, L) 0/1, T0 (n, d)
    the targets less their mean, steps (m, 3) a path (checked by the caller)."""
    cdef int64_t n = S.shape[0], L = S.shape[1], d = T0.shape[1], m = steps.shape[0]
    if T0.shape[0] != n or steps.shape[1] != 3:
        raise ValueError(f"additive_replay: T0 {T0.shape} and steps {steps.shape} do not fit S {S.shape}")
    values = np.zeros(max(m * (m + 1) * d, 1), dtype=np.float64)
    cdef double[::1] values_view = values
    cdef int64_t bad = -1
    cdef int status
    cdef const uint8_t *S_ptr = &S[0, 0] if n * L > 0 else NULL
    cdef const double *T_ptr = &T0[0, 0] if n * d > 0 else NULL
    cdef const int64_t *steps_ptr = &steps[0, 0] if m > 0 else NULL
    with nogil:
        status = dfg_additive_replay(S_ptr, T_ptr, n, L, d, steps_ptr, m, backfit_rounds, &values_view[0], &bad)
    check_status(status, "additive_replay")
    return values, bad
