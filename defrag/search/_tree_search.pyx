# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The box tree at every size (src_c/dfg_tree_path.h), for defrag/search/tree_search.py.
Arrays are checked here; the algorithm is all in the kernel. Stops (KernelInterrupted)
when the fit it works for is interrupted."""
import numpy as np

from libc.stdint cimport int64_t, uint8_t

from defrag._cdefs cimport dfg_tree_params, dfg_tree_path_grow, dfg_tree_scores
from defrag.search._list_search cimport SearchInputs, box_bound, checked_sizes, search_pointers
from defrag.utils._common cimport check_status, kernel_threads, stop_flag, stop_pointer


def tree_path_grow(const uint8_t[:, ::1] S, const double[:, ::1] T, const int64_t[::1] literal_feature,
                   const int64_t[::1] literal_group, const int64_t[::1] cand_ptr,
                   const int64_t[::1] cand_literals, int64_t max_leaves, double literal_price,
                   int64_t min_leaf, int64_t max_moves, int64_t n_starts, double rel_tol, int n_threads=1,
                   const uint8_t[:, ::1] S_val=None, const double[::1] y_val=None,
                   const int64_t[::1] codes_val=None, int64_t n_classes=0, int64_t n_sizes=1,
                   const double[:, ::1] outputs=None, bint node_outputs=False):
    """(leaf, step_ptr, step_literals): the steps of the box tree grown best-first, step t
    splitting leaf[t] by the box step_literals[step_ptr[t]:step_ptr[t + 1]] into nodes
    2t + 1 (its rows where the box holds) and 2t + 2. S (n, L) 0/1, T (n, d), literal_feature
    and literal_group (2L), candidate boxes (cand_ptr, n_candidates + 1; cand_literals);
    max_leaves >= 1 (more than n is n: every leaf keeps a row, and the buffers grow with it).

    With validation rows S_val (m, L) 0/1 and their targets (y_val (m,) where n_classes is
    0, else class codes codes_val (m,) in [0, n_classes), n_classes = d): also (losses,
    checks), each (n_sizes, m), the rows' scores at every size (src_c/dfg_tree_path.h's
    dfg_tree_scores); outputs (n, d) or None: the leaves' outputs are its means (T's where
    None). node_outputs: also the output of every node the path makes, (2 max_leaves - 1,
    d), last (row g: node g's), with or without validation rows."""
    flag = stop_flag(False)  # the kernel reads it
    cdef const int *stop = stop_pointer(flag)
    n_threads = kernel_threads(n_threads)
    cdef int64_t n = S.shape[0], L = S.shape[1], d = T.shape[1]
    cdef int64_t n_cand = checked_sizes(S, T, literal_feature, literal_group, cand_ptr, cand_literals, 0,
                                        max_moves, n_starts)
    if max_leaves < 1 or min_leaf < 1:
        raise ValueError("max_leaves and min_leaf must be >= 1")
    max_leaves = min(max_leaves, max(n, 1))
    cdef int64_t bound = box_bound(cand_ptr, max_leaves, max_moves, 0)
    cdef int64_t capacity = max((max_leaves - 1) * bound, 1)
    leaf = np.zeros(max(max_leaves - 1, 1), dtype=np.int64)
    step_ptr = np.zeros(max_leaves, dtype=np.int64)
    step_literals = np.zeros(capacity, dtype=np.int64)
    cdef int64_t[::1] leaf_view = leaf
    cdef int64_t[::1] ptr_view = step_ptr
    cdef int64_t[::1] lit_view = step_literals
    cdef dfg_tree_params params
    params.max_leaves = max_leaves
    params.literal_price = literal_price
    params.min_leaf = min_leaf
    params.max_moves = max_moves
    params.n_starts = n_starts
    params.rel_tol = rel_tol
    cdef SearchInputs p = search_pointers(S, T, literal_feature, literal_group, cand_literals)
    cdef int64_t n_steps = 0
    cdef int status
    cdef dfg_tree_scores scores
    cdef dfg_tree_scores *scores_ptr = NULL
    cdef double[:, ::1] losses_view
    cdef double[:, ::1] checks_view
    cdef int64_t m = 0
    losses = checks = nodes = None
    cdef double[:, ::1] nodes_view
    if outputs is not None and (outputs.shape[0] != n or outputs.shape[1] != d):
        raise ValueError(f"outputs must have T's shape ({n}, {d})")
    if S_val is not None or node_outputs:
        scores.S = NULL
        scores.y = NULL
        scores.codes = NULL
        scores.n_val = 0
        scores.n_classes = n_classes
        scores.n_sizes = 1
        scores.node_outputs = NULL
    if S_val is not None:
        m = S_val.shape[0]
        if S_val.shape[1] != L:
            raise ValueError(f"S_val has {S_val.shape[1]} columns for {L} splits")
        if n_classes < 0 or (n_classes > 0 and n_classes != d) or (n_classes == 0 and d < 1):
            raise ValueError(f"n_classes must be 0 (regression) or T's {d} columns, not {n_classes}")
        if n_classes == 0 and (y_val is None or y_val.shape[0] != m):
            raise ValueError(f"y_val must hold one target per row of S_val ({m})")
        if n_classes > 0 and (codes_val is None or codes_val.shape[0] != m):
            raise ValueError(f"codes_val must hold one class code per row of S_val ({m})")
        if n_sizes < 1:
            raise ValueError(f"n_sizes must be >= 1, not {n_sizes}")
        scores.S = &S_val[0, 0] if m * L > 0 else NULL
        scores.y = &y_val[0] if n_classes == 0 and m > 0 else NULL
        scores.codes = &codes_val[0] if n_classes > 0 and m > 0 else NULL
        scores.n_val = m
        scores.n_sizes = n_sizes
    elif node_outputs:
        scores.n_classes = 0 if d < 1 else d  # (no rows are scored: a class count the check accepts)
    if S_val is not None or node_outputs:
        losses = np.zeros((scores.n_sizes, max(m, 1)), dtype=np.float64)
        checks = np.zeros((scores.n_sizes, max(m, 1)), dtype=np.float64)
        losses_view = losses
        checks_view = checks
        scores.outputs = &outputs[0, 0] if outputs is not None and n * d > 0 else NULL
        scores.losses = &losses_view[0, 0]
        scores.checks = &checks_view[0, 0]
        scores_ptr = &scores
    if node_outputs:
        nodes = np.zeros((max(2 * max_leaves - 1, 1), max(d, 1)), dtype=np.float64)
        nodes_view = nodes
        scores.node_outputs = &nodes_view[0, 0]
    with nogil:
        status = dfg_tree_path_grow(p.S, p.T, n, L, d, p.feature, p.group, &cand_ptr[0], p.cand_literals,
                                    n_cand, &params, &leaf_view[0], &ptr_view[0], &lit_view[0], capacity,
                                    &n_steps, scores_ptr, n_threads, stop)
    check_status(status, "tree_path_grow")
    steps = leaf[:n_steps], step_ptr[:n_steps + 1], step_literals[:step_ptr[n_steps]]
    if S_val is not None:
        steps += (losses[:, :m], checks[:, :m])
    return steps + ((nodes[:2 * n_steps + 1, :d],) if node_outputs else ())
