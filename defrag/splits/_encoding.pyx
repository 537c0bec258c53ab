# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Inputs as the fit kernels read them: thermometer ranks of numeric features, ranks of
split groups with categorical splits, and bit-packed split outcomes (src_c/dfg_ranks.h,
src_c/dfg_bits.h). Each stops (KernelInterrupted) when the fit it works for is interrupted."""
import numpy as np

from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t

from defrag._cdefs cimport (DFG_OK, dfg_compute_group_ranks, dfg_compute_ranks,
                            dfg_pack_rows, dfg_sets)
from defrag.utils._common cimport (CategorySets, category_sets, check_status, kernel_threads,
                                   optional_flags, optional_sets, stop_flag, stop_pointer)


def compute_ranks(const double[:, ::1] X, const int64_t[::1] feat_ptr,
                  const double[::1] thresholds, int n_threads=1):
    """Thermometer ranks, shape (n_features, n_samples), int32."""
    flag = stop_flag(False)  # the kernel reads it
    cdef const int *stop = stop_pointer(flag)
    n_threads = kernel_threads(n_threads)
    cdef int64_t N = X.shape[0], D = X.shape[1]
    if feat_ptr.shape[0] != D + 1 or feat_ptr[D] != thresholds.shape[0]:
        raise ValueError("compute_ranks: feat_ptr must have n_features + 1 entries, the last "
                         "equal to the number of thresholds")
    ranks = np.empty((D, N), dtype=np.int32)
    cdef int32_t[:, ::1] r = ranks
    cdef int status
    with nogil:
        status = dfg_compute_ranks(&X[0, 0] if N * D else NULL, N, D, &feat_ptr[0],
                                   &thresholds[0] if thresholds.shape[0] else NULL,
                                   &r[0, 0] if N * D else NULL, n_threads, stop)
    check_status(status, "compute_ranks")
    return ranks


def compute_group_ranks(const double[:, ::1] X, const int32_t[::1] group_feature,
                        const int64_t[::1] group_ptr, const double[::1] thresholds,
                        int n_threads=1, kind=None, set_ptr=None, set_words=None):
    """Ranks of split groups (src_c/dfg_ranks.h), shape (n_groups, n_samples), int32:
    a numeric group's thermometer rank; a one-split categorical group's s (0/1), 2 if missing.

    kind / set_ptr / set_words (all or none): one item per split, see src_c/dfg_sets.h."""
    flag = stop_flag(False)  # the kernel reads it
    cdef const int *stop = stop_pointer(flag)
    n_threads = kernel_threads(n_threads)
    cdef int64_t N = X.shape[0], D = X.shape[1], G = group_feature.shape[0]
    cdef int64_t L = thresholds.shape[0]
    if group_ptr.shape[0] != G + 1 or group_ptr[G] != L:
        raise ValueError("compute_group_ranks: group_ptr must have n_groups + 1 entries, the "
                         "last equal to the number of thresholds")
    cdef CategorySets sets = category_sets(L, kind, set_ptr, set_words)
    cdef const dfg_sets *sp = optional_sets(sets)
    ranks = np.empty((G, N), dtype=np.int32)
    cdef int32_t[:, ::1] r = ranks
    cdef int status
    with nogil:
        status = dfg_compute_group_ranks(&X[0, 0] if N * D else NULL, N, D, G,
                                         &group_feature[0] if G else NULL, &group_ptr[0],
                                         &thresholds[0] if L else NULL, sp,
                                         &r[0, 0] if N * G else NULL, n_threads, stop)
    check_status(status, "compute_group_ranks")
    return ranks


def pack_rows(const double[:, ::1] X, const int32_t[::1] split_feature,
              const double[::1] split_threshold, int n_threads=1, missing_right=None,
              kind=None, set_ptr=None, set_words=None):
    """Bit-packed s matrix, shape (n_samples, ceil(L / 64)), uint64.

    kind / set_ptr / set_words (all or none): categorical splits, see src_c/dfg_sets.h."""
    flag = stop_flag(False)  # the kernel reads it
    cdef const int *stop = stop_pointer(flag)
    n_threads = kernel_threads(n_threads)
    cdef int64_t N = X.shape[0], D = X.shape[1], L = split_feature.shape[0]
    if split_threshold.shape[0] != L:
        raise ValueError("pack_rows: split_feature and split_threshold differ in length")
    cdef const uint8_t *mr = optional_flags(missing_right, L)
    cdef CategorySets sets = category_sets(L, kind, set_ptr, set_words)
    cdef const dfg_sets *sp = optional_sets(sets)
    cdef int64_t W = (L + 63) // 64
    S = np.zeros((N, max(W, 1)), dtype=np.uint64)
    cdef uint64_t[:, ::1] s = S
    cdef int status = DFG_OK
    if N and L:
        with nogil:
            status = dfg_pack_rows(&X[0, 0], N, D, &split_feature[0], &split_threshold[0],
                                   mr, sp, L, &s[0, 0], n_threads, stop)
    check_status(status, "pack_rows")
    return S[:, :W] if W else S[:, :0]
