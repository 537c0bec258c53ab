# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""A scikit-learn forest's leaf values summed over its trees (src_c/dfg_forest_sum.h)."""
import numpy as np

from libc.stdint cimport int64_t, uint8_t

from defrag._cdefs cimport dfg_forest, dfg_forest_sum
from defrag.utils._common cimport check_status, kernel_threads, stop_flag, stop_pointer


def forest_sum(const float[:, ::1] X, const int64_t[::1] roots, const int64_t[::1] left,
               const int64_t[::1] right, const int64_t[::1] feature, const double[::1] threshold,
               missing_left, const double[:, ::1] value, int n_threads=1):
    """Each row's leaf values summed over the trees, in tree order: an n_samples x
    value.shape[1] float64 array (see src_c/dfg_forest_sum.h; missing_left: uint8 per node
    or None). A ValueError where the node arrays are not trees of X's features."""
    cdef int64_t n = X.shape[0], d = X.shape[1], N = left.shape[0]
    if (right.shape[0] != N or feature.shape[0] != N or threshold.shape[0] != N or value.shape[0] != N
            or value.shape[1] < 1 or roots.shape[0] < 1):
        raise ValueError("forest_sum: the node arrays disagree on the number of nodes")
    cdef const uint8_t[::1] miss
    cdef const uint8_t *miss_ptr = NULL
    if missing_left is not None:
        miss = missing_left
        if miss.shape[0] != N:
            raise ValueError("forest_sum: missing_left needs one flag per node")
        miss_ptr = &miss[0]
    cdef dfg_forest forest
    forest.n_trees = roots.shape[0]
    forest.n_nodes = N
    forest.n_values = value.shape[1]
    forest.roots = &roots[0]
    forest.left = &left[0]
    forest.right = &right[0]
    forest.feature = &feature[0]
    forest.threshold = &threshold[0]
    forest.missing_left = miss_ptr
    forest.value = &value[0, 0]
    flag = stop_flag(False)
    cdef const int *stop = stop_pointer(flag)
    n_threads = kernel_threads(n_threads)
    out = np.empty((n, value.shape[1]), dtype=np.float64)
    cdef double[:, ::1] o = out
    cdef int status
    with nogil:
        status = dfg_forest_sum(&X[0, 0] if n * d else NULL, n, d, &forest, &o[0, 0] if n else NULL,
                                n_threads, stop)
    check_status(status, "forest_sum")
    return out
