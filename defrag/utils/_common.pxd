# Helpers the kernel modules share: status codes to exceptions, optional flag arrays,
# category sets, the thread count and the stop flag of a kernel call. Cimported by the
# other modules (one copy, in defrag/utils/_common.pyx).
from libc.stdint cimport int64_t, uint8_t

from defrag._cdefs cimport dfg_sets


cdef void check_status(int status, str what) except *

cdef int kernel_threads(int n_threads, bint live=*) except? -1

cdef object stop_flag(bint raise_if_set=*)

cdef const int *stop_pointer(object flag) except? NULL

cdef const uint8_t *optional_flags(object flags, int64_t n) except? NULL


cdef class CategorySets:
    cdef dfg_sets view
    cdef object _keep


cdef CategorySets category_sets(int64_t n, object kind, object set_ptr, object set_words)

cdef const dfg_sets *optional_sets(CategorySets sets) except? NULL
