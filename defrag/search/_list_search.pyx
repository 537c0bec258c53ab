# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The greedy rule-list search (src_c/dfg_list_search.h: the boxes of one list) and the
list at every size (src_c/dfg_list_path.h), for defrag/search/list_search.py, and the size
checks every box search shares (_list_search.pxd; _tree_search.pyx cimports them). Arrays
are checked here; the algorithm is all in the kernels. Stops (KernelInterrupted) when the fit
it works for is interrupted."""
import numpy as np

from libc.stdint cimport int64_t, uint8_t

from defrag._cdefs cimport dfg_list_params, dfg_list_path_grow, dfg_list_search_box_bound, dfg_list_search_grow
from defrag.utils._common cimport check_status, kernel_threads, stop_flag, stop_pointer


def list_search_grow(const uint8_t[:, ::1] S, const double[:, ::1] T, const int64_t[::1] literal_feature,
                     const int64_t[::1] literal_group, const int64_t[::1] cand_ptr,
                     const int64_t[::1] cand_literals, int64_t max_rules,
                     int64_t min_support, int64_t max_moves, int64_t n_starts,
                     double rel_tol, int n_threads=1):
    """(box_ptr, box_literals): the grown boxes in CSR form (box i: box_literals[box_ptr[i]:
    box_ptr[i + 1]]). S (n, L) 0/1, T (n, d), literal_feature and literal_group (2L),
    candidate boxes (cand_ptr, n_candidates + 1; cand_literals)."""
    flag = stop_flag(False)  # the kernel reads it
    cdef const int *stop = stop_pointer(flag)
    n_threads = kernel_threads(n_threads)
    cdef int64_t n = S.shape[0], L = S.shape[1], d = T.shape[1]
    cdef int64_t n_cand = checked_sizes(S, T, literal_feature, literal_group, cand_ptr, cand_literals, max_rules,
                                        max_moves, n_starts)
    cdef int64_t bound = box_bound(cand_ptr, max_rules, max_moves, 0)
    cdef int64_t capacity = max(max_rules * bound, 1)
    box_ptr = np.zeros(max_rules + 1, dtype=np.int64)
    box_literals = np.zeros(capacity, dtype=np.int64)
    cdef int64_t[::1] ptr_view = box_ptr
    cdef int64_t[::1] lit_view = box_literals
    cdef dfg_list_params params = _params(max_rules, min_support, max_moves, n_starts, rel_tol)
    cdef SearchInputs p = search_pointers(S, T, literal_feature, literal_group, cand_literals)
    cdef int64_t n_boxes = 0
    cdef int status
    with nogil:
        status = dfg_list_search_grow(p.S, p.T, n, L, d, p.feature, p.group, &cand_ptr[0], p.cand_literals,
                                      n_cand, &params, &ptr_view[0], &lit_view[0], capacity, &n_boxes,
                                      n_threads, stop)
    check_status(status, "list_search_grow")
    return box_ptr[:n_boxes + 1], box_literals[:box_ptr[n_boxes]]


def list_path_grow(const uint8_t[:, ::1] S, const double[:, ::1] T, const int64_t[::1] literal_feature,
                   const int64_t[::1] literal_group, const int64_t[::1] cand_ptr,
                   const int64_t[::1] cand_literals, int64_t max_rules,
                   int64_t min_support, int64_t max_moves, int64_t n_starts,
                   double rel_tol, int n_threads=1):
    """(kind, rule, step_ptr, step_literals): the steps of the list grown one region at a
    time, step t adding the rule step_literals[step_ptr[t]:step_ptr[t + 1]] at position
    rule[t] (kind 0: appended; 1: a split of the rule that was there). Arguments as
    list_search_grow's (max_rules: the rules at most; more than n - 1 is n - 1, since
    every region keeps a row, and the buffers grow with it)."""
    flag = stop_flag(False)  # the kernel reads it
    cdef const int *stop = stop_pointer(flag)
    n_threads = kernel_threads(n_threads)
    cdef int64_t n = S.shape[0], L = S.shape[1], d = T.shape[1]
    cdef int64_t n_cand = checked_sizes(S, T, literal_feature, literal_group, cand_ptr, cand_literals, max_rules,
                                        max_moves, n_starts)
    max_rules = min(max_rules, max(n - 1, 0))
    # a split adds one literal to a box
    cdef int64_t longest = box_bound(cand_ptr, max_rules, max_moves, max_rules)
    cdef int64_t capacity = max(max_rules * longest, 1)
    kind = np.zeros(max(max_rules, 1), dtype=np.int64)
    rule = np.zeros(max(max_rules, 1), dtype=np.int64)
    step_ptr = np.zeros(max_rules + 1, dtype=np.int64)
    step_literals = np.zeros(capacity, dtype=np.int64)
    cdef int64_t[::1] kind_view = kind
    cdef int64_t[::1] rule_view = rule
    cdef int64_t[::1] ptr_view = step_ptr
    cdef int64_t[::1] lit_view = step_literals
    cdef dfg_list_params params = _params(max_rules, min_support, max_moves, n_starts, rel_tol)
    cdef SearchInputs p = search_pointers(S, T, literal_feature, literal_group, cand_literals)
    cdef int64_t n_steps = 0
    cdef int status
    with nogil:
        status = dfg_list_path_grow(p.S, p.T, n, L, d, p.feature, p.group, &cand_ptr[0], p.cand_literals, n_cand,
                                    &params, &kind_view[0], &rule_view[0], &ptr_view[0], &lit_view[0], capacity,
                                    &n_steps, n_threads, stop)
    check_status(status, "list_path_grow")
    return kind[:n_steps], rule[:n_steps], step_ptr[:n_steps + 1], step_literals[:step_ptr[n_steps]]


cdef SearchInputs search_pointers(const uint8_t[:, ::1] S, const double[:, ::1] T,
                                  const int64_t[::1] literal_feature, const int64_t[::1] literal_group,
                                  const int64_t[::1] cand_literals):
    """Pointers to checked arrays (checked_sizes), valid while the caller holds them."""
    cdef SearchInputs p
    p.S = &S[0, 0] if S.shape[0] * S.shape[1] > 0 else NULL
    p.T = &T[0, 0] if T.shape[0] * T.shape[1] > 0 else NULL
    p.feature = &literal_feature[0] if literal_feature.shape[0] > 0 else NULL
    p.group = &literal_group[0] if literal_group.shape[0] > 0 else NULL
    p.cand_literals = &cand_literals[0] if cand_literals.shape[0] > 0 else NULL
    return p


cdef int64_t checked_sizes(const uint8_t[:, ::1] S, const double[:, ::1] T, const int64_t[::1] literal_feature,
                           const int64_t[::1] literal_group, const int64_t[::1] cand_ptr,
                           const int64_t[::1] cand_literals, int64_t max_rules, int64_t max_moves,
                           int64_t n_starts) except -1:
    """The number of candidate boxes, once the arrays' sizes agree."""
    cdef int64_t n = S.shape[0], L = S.shape[1]
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
    return n_cand


cdef int64_t box_bound(const int64_t[::1] cand_ptr, int64_t max_rules, int64_t max_moves, int64_t extra) except -1:
    """The literals a box may hold (the kernel's bound plus extra), its total over
    max_rules boxes checked for overflow."""
    cdef int64_t bound = 0
    check_status(dfg_list_search_box_bound(&cand_ptr[0], cand_ptr.shape[0] - 1, max_moves, &bound),
                 "list_search_box_bound")
    if bound > 2 ** 61 - extra or (max_rules > 0 and bound + extra > (2 ** 61) // max_rules):
        raise ValueError("box search: too many boxes or moves")
    return bound + extra


cdef dfg_list_params _params(int64_t max_rules, int64_t min_support, int64_t max_moves, int64_t n_starts,
                             double rel_tol):
    cdef dfg_list_params params
    params.max_rules = max_rules
    params.min_support = min_support
    params.max_moves = max_moves
    params.n_starts = n_starts
    params.rel_tol = rel_tol
    return params
