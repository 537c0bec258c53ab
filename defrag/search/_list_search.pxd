# The box searches' shared argument layer (defrag/search/_list_search.pyx), cimported by
# _tree_search.pyx: the sizes their kernels take (src_c/dfg_box_refine.h) checked once,
# and the pointers to the checked arrays.
from libc.stdint cimport int64_t, uint8_t


cdef struct SearchInputs:
    # the kernels' input pointers, NULL for an empty array
    const uint8_t *S
    const double *T
    const int64_t *feature
    const int64_t *group
    const int64_t *cand_literals


cdef SearchInputs search_pointers(const uint8_t[:, ::1] S, const double[:, ::1] T,
                                  const int64_t[::1] literal_feature, const int64_t[::1] literal_group,
                                  const int64_t[::1] cand_literals)
cdef int64_t checked_sizes(const uint8_t[:, ::1] S, const double[:, ::1] T, const int64_t[::1] literal_feature,
                           const int64_t[::1] literal_group, const int64_t[::1] cand_ptr,
                           const int64_t[::1] cand_literals, int64_t max_rules, int64_t max_moves,
                           int64_t n_starts) except -1
cdef int64_t box_bound(const int64_t[::1] cand_ptr, int64_t max_rules, int64_t max_moves, int64_t extra) except -1
