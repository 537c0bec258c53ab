# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Rows down an explanation's trees (src_c/dfg_route.h): the one router that predict,
apply, the per-row checks and the rows per node of every printed form read rows with."""
import numpy as np

from libc.stdint cimport int32_t, int64_t, uint8_t

from defrag._cdefs cimport DFG_OK, dfg_route, dfg_route_tree, dfg_ruleset
from defrag.rules._rules_eval cimport check_rules_status, ruleset_view
from defrag.utils._common cimport CategorySets, category_sets, kernel_threads, optional_sets, stop_flag


def route(const double[:, ::1] X, const int64_t[::1] box, const int64_t[::1] then_item,
          const int64_t[::1] else_item, const int64_t[::1] roots, const int64_t[::1] rule_ptr,
          const int32_t[::1] feature, const double[::1] lower, const double[::1] upper,
          const uint8_t[::1] missing, int n_threads=1, kind=None, set_ptr=None, set_words=None,
          const uint8_t[::1] cost=None, const int64_t[::1] label=None, bint items=True, bint reads=False,
          int64_t[::1] visits=None):
    """(items, reads) of the rows of X: the leaf item each row reaches in each term (or
    its label, where label gives one per item), int64 (n_samples, n_terms), and the comparisons a reader makes per row, float64
    (n_samples,), each None where not asked for; visits (n_items,), where given, gets the
    rows that pass through each item added."""
    stop_flag()
    n_threads = kernel_threads(n_threads)
    cdef CategorySets sets = category_sets(feature.shape[0], kind, set_ptr, set_words)
    cdef dfg_ruleset rs = ruleset_view(rule_ptr, feature, lower, upper, missing, sets)
    cdef dfg_route_tree tree
    cdef int64_t I = box.shape[0], T = roots.shape[0], N = X.shape[0], D = X.shape[1]
    if then_item.shape[0] != I or else_item.shape[0] != I:
        raise ValueError("route: box, then_item and else_item need one entry per item")
    if reads and (cost is None or cost.shape[0] != feature.shape[0]):
        raise ValueError("route: reads needs one cost per condition")
    if label is not None and label.shape[0] != I:
        raise ValueError("route: label needs one entry per item")
    if visits is not None and visits.shape[0] != I:
        raise ValueError("route: visits needs one entry per item")
    tree.n_items, tree.n_terms = I, T
    tree.box = &box[0] if I else NULL
    tree.then_item = &then_item[0] if I else NULL
    tree.else_item = &else_item[0] if I else NULL
    tree.roots = &roots[0] if T else NULL
    out_items = np.empty((N, T), dtype=np.int64) if items else None
    out_reads = np.empty(N, dtype=np.float64) if reads else None
    cdef int64_t[:, ::1] it = out_items
    cdef double[::1] rd = out_reads
    cdef int status = DFG_OK
    if N:
        with nogil:
            status = dfg_route(&X[0, 0], N, D, &rs, &tree, &cost[0] if reads and cost.shape[0] else NULL,
                               &label[0] if label is not None and I else NULL,
                               &it[0, 0] if items and T else NULL, &rd[0] if reads else NULL,
                               &visits[0] if visits is not None and I else NULL, n_threads)
    check_rules_status(status, "route")
    return out_items, out_reads
