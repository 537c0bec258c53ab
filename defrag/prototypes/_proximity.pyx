# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Tree-ensemble distances from leaf indices (src_c/dfg_proximity.h)."""
import numpy as np

from libc.stdint cimport int32_t, int64_t

from defrag._cdefs cimport dfg_tree_distance
from defrag.utils._common cimport check_status, kernel_threads, stop_flag, stop_pointer


def tree_distance(const int32_t[:, ::1] leaves_a, const int32_t[:, ::1] leaves_bt,
                  const float[::1] weights, int n_threads=1):
    """1 - weighted share of trees in which a point of A and a point of B share a leaf.

    leaves_a: n_a x n_trees; leaves_bt: n_trees x n_b (tree-major); weights: n_trees.
    Returns an n_a x n_b float32 array (see src_c/dfg_proximity.h). Stops
    (KernelInterrupted) when the fit it works for is interrupted."""
    flag = stop_flag(False)  # the kernel reads it
    cdef const int *stop = stop_pointer(flag)
    n_threads = kernel_threads(n_threads)
    cdef int64_t n_a = leaves_a.shape[0], T = leaves_a.shape[1], n_b = leaves_bt.shape[1]
    if leaves_bt.shape[0] != T or weights.shape[0] != T:
        raise ValueError("leaves_a, leaves_bt and weights disagree on the number of trees")
    if T < 1:
        raise ValueError("at least one tree is needed")
    out = np.empty((n_a, n_b), dtype=np.float32)
    cdef float[:, ::1] o = out
    cdef int status
    with nogil:
        status = dfg_tree_distance(&leaves_a[0, 0] if n_a else NULL, n_a,
                                   &leaves_bt[0, 0] if n_b else NULL, n_b, T,
                                   &weights[0], &o[0, 0] if n_a * n_b else NULL, n_threads,
                                   stop)
    check_status(status, "tree_distance")
    return out
