# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""What the kernel modules share: C status codes become Python exceptions, optional
flag arrays and category sets become the pointers the kernels take; and how the
kernels were built (build_info)."""
from libc.stdint cimport int64_t, uint8_t, uint64_t

from defrag._cdefs cimport (DFG_ENOMEM, DFG_OK, dfg_cpu_has_popcnt, dfg_has_openmp,
                            dfg_max_threads, dfg_sets)


cdef void check_status(int status, str what) except *:
    """A kernel's status code as an exception (none for DFG_OK)."""
    if status == DFG_OK:
        return
    if status == DFG_ENOMEM:
        raise MemoryError(f"defrag kernel {what}: out of memory")
    raise ValueError(f"defrag kernel {what}: invalid argument (status {status})")


cdef const uint8_t *optional_flags(object flags, int64_t n) except? NULL:
    """Pointer to an optional uint8 flag array of length n (None: NULL)."""
    cdef const uint8_t[::1] view
    if flags is None:
        return NULL
    view = flags
    if view.shape[0] != n:
        raise ValueError(f"missing_right has {view.shape[0]} flags for {n} splits")
    return &view[0] if n else NULL


cdef class CategorySets:
    """A dfg_sets over n items from (kind, ptr, words) arrays (see src_c/dfg_sets.h);
    holds the arrays so that the struct's pointers stay valid."""

    def __init__(self, int64_t n, kind, ptr, words):
        if kind is None or ptr is None or words is None:
            raise ValueError("category sets need kind, set_ptr and set_words together")
        cdef const uint8_t[::1] k = kind
        cdef const int64_t[::1] p = ptr
        cdef const uint64_t[::1] w = words
        if k.shape[0] != n or p.shape[0] != n + 1 or p[0] != 0 or p[n] > w.shape[0]:
            raise ValueError("category set arrays do not match the number of items")
        self._keep = (kind, ptr, words)
        self.view.n = n
        self.view.kind = &k[0] if n else NULL
        self.view.ptr = &p[0]
        self.view.words = &w[0] if w.shape[0] else NULL


cdef CategorySets category_sets(int64_t n, object kind, object set_ptr, object set_words):
    """The sets of n items, or None when kind, set_ptr and set_words are all None."""
    if kind is None and set_ptr is None and set_words is None:
        return None
    return CategorySets(n, kind, set_ptr, set_words)


cdef const dfg_sets *optional_sets(CategorySets sets) except? NULL:
    return NULL if sets is None else &sets.view


def build_info():
    """(has_openmp, default_threads, cpu_has_popcnt)."""
    return bool(dfg_has_openmp()), int(dfg_max_threads()), bool(dfg_cpu_has_popcnt())
