# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The greedy rule-list search (src_c/dfg_list_search.h): the boxes of ListSearch.grow
(defrag/rules/list_search.py) grown by the C kernel. Arrays are checked here; the
algorithm is all in the kernel. Stops (KernelInterrupted) when the fit it works for is
interrupted."""
import numpy as np

from libc.stdint cimport int64_t, uint8_t

from defrag._cdefs cimport dfg_list_params, dfg_list_search_box_bound, dfg_list_search_grow
from defrag.utils._common cimport check_status, kernel_threads, stop_flag, stop_pointer


def list_search_grow(const uint8_t[:, ::1] S, const double[:, ::1] T, const int64_t[::1] literal_feature,
                     const int64_t[::1] literal_group, const int64_t[::1] cand_ptr,
                     const int64_t[::1] cand_literals, int64_t max_rules, double cost_power,
                     double condition_price, int64_t min_support, int64_t max_moves, int64_t n_starts,
                     double rel_tol, int n_threads=1):
    """(box_ptr, box_literals): the grown boxes in CSR form (box i: box_literals[box_ptr[i]:
    box_ptr[i + 1]]). S (n, L) 0/1, T (n, d), literal_feature and literal_group (2L),
    candidate boxes (cand_ptr, n_candidates + 1; cand_literals); condition_price is
    condition_penalty * log(n)."""
    flag = stop_flag(False)  # the kernel reads it
    cdef const int *stop = stop_pointer(flag)
    n_threads = kernel_threads(n_threads)
    cdef int64_t n = S.shape[0], L = S.shape[1], d = T.shape[1]
    if T.shape[0] != n:
        raise ValueError(f"T has {T.shape[0]} rows for {n} rows of S")
    if literal_feature.shape[0] != 2 * L or literal_group.shape[0] != 2 * L:
        raise ValueError(f"literal_feature and literal_group must have 2 L = {2 * L} entries")
    if cand_ptr.shape[0] < 1 or cand_ptr[0] != 0:
        raise ValueError("cand_ptr must start with 0")
    cdef int64_t n_cand = cand_ptr.shape[0] - 1
    if cand_ptr[n_cand] != cand_literals.shape[0]:
        raise ValueError("cand_ptr must end at the number of candidate literals")
    if max_rules < 0 or max_moves < 0 or n_starts < 0:
        raise ValueError("max_rules, max_moves and n_starts must be >= 0")
    cdef int64_t bound = 0
    check_status(dfg_list_search_box_bound(&cand_ptr[0], n_cand, max_moves, &bound), "list_search_box_bound")
    if max_rules > 0 and bound > (2 ** 62) // max_rules:
        raise ValueError("list_search_grow: too many rules or moves")
    cdef int64_t capacity = max(max_rules * bound, 1)
    box_ptr = np.zeros(max_rules + 1, dtype=np.int64)
    box_literals = np.zeros(capacity, dtype=np.int64)
    cdef int64_t[::1] ptr_view = box_ptr
    cdef int64_t[::1] lit_view = box_literals
    cdef dfg_list_params params
    params.max_rules = max_rules
    params.cost_power = cost_power
    params.condition_price = condition_price
    params.min_support = min_support
    params.max_moves = max_moves
    params.n_starts = n_starts
    params.rel_tol = rel_tol
    cdef const uint8_t *S_ptr = &S[0, 0] if n * L > 0 else NULL
    cdef const double *T_ptr = &T[0, 0] if n * d > 0 else NULL
    cdef const int64_t *feat_ptr = &literal_feature[0] if L > 0 else NULL
    cdef const int64_t *group_ptr = &literal_group[0] if L > 0 else NULL
    cdef const int64_t *cand_lit_ptr = &cand_literals[0] if cand_literals.shape[0] > 0 else NULL
    cdef int64_t n_boxes = 0
    cdef int status
    with nogil:
        status = dfg_list_search_grow(S_ptr, T_ptr, n, L, d, feat_ptr, group_ptr, &cand_ptr[0], cand_lit_ptr,
                                      n_cand, &params, &ptr_view[0], &lit_view[0], capacity, &n_boxes,
                                      n_threads, stop)
    check_status(status, "list_search_grow")
    return box_ptr[:n_boxes + 1], box_literals[:box_ptr[n_boxes]]
