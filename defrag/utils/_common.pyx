# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""What the kernel modules share: C status codes become Python exceptions, optional
flag arrays and category sets become the pointers the kernels take; the stop flag and
the thread count of the fit a kernel runs for; and how the kernels were built
(build_info).

The stop flag and the threads granted to a fit live in context variables, set by
defrag/utils/interrupt.py and defrag/utils/threads.py around an estimator's fit and
carried into the threads that work for it (contextvars.copy_context): the C kernels
take both as arguments and keep no state of their own."""
import contextvars
import os

from cpython.exc cimport PyErr_CheckSignals
from libc.stdint cimport int64_t, uint8_t, uint64_t

from defrag._cdefs cimport (DFG_EINTERRUPTED, DFG_ENOMEM, DFG_OK, dfg_cpu_has_popcnt,
                            dfg_has_openmp, dfg_max_threads, dfg_sets)


class KernelInterrupted(KeyboardInterrupt):
    """A kernel returned early because the stop flag of the fit it works for was set
    (defrag/utils/interrupt.py). A KeyboardInterrupt, so that no ``except Exception``
    on the way up takes it for a failure to recover from."""


# The stop flag of the fit this context works for: a one-element int32 array the
# kernels read while they run (src_c/dfg_common.h), or None.
STOP_FLAG = contextvars.ContextVar("defrag_stop_flag", default=None)
# The threads granted to the fit this context works for (defrag/utils/threads.py), or
# None outside a fit: no kernel call of that fit takes more.
THREAD_GRANT = contextvars.ContextVar("defrag_thread_grant", default=None)

# In a child forked after this process's kernels ran an OpenMP parallel region on
# more than one thread: 1, else 0 (no cap). GNU libgomp keeps the parent's thread
# pool in its state, and the child has none of those threads: its next parallel
# region with more than one thread waits for them forever.
cdef int _fork_cap = 0
cdef bint _threads_used = False


def _after_fork_in_child():
    global _fork_cap
    if _threads_used:
        _fork_cap = 1


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_after_fork_in_child)


def fork_thread_cap():
    """1 in a process forked after this one's kernels ran several threads, else None."""
    return _fork_cap if _fork_cap else None


def threads_used():
    """Whether a kernel of this process was asked for more than one thread."""
    return bool(_threads_used)


def available_cores():
    """Cores this process may run on (its CPU affinity on Linux)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


# The limit threadpoolctl set for defrag's kernels (None: none), for every thread
# (defrag/utils/threads.py's DefragThreadController sets it).
PROCESS_LIMIT = [None]


def thread_ceiling():
    """The most threads a kernel call started here may take: the cores, this thread's
    OpenMP limit, threadpoolctl's limit for defrag, the grant of the fit this context
    works for, and 1 after a fork that libgomp cannot follow (utils/threads.py's
    threads_now)."""
    n = min(available_cores(), dfg_max_threads())
    for cap in (PROCESS_LIMIT[0], THREAD_GRANT.get(), _fork_cap or None):
        if cap is not None:
            n = min(n, cap)
    return max(1, n)


cdef int kernel_threads(int n_threads, bint live=False) except? -1:
    """The threads a kernel call takes: n_threads, at most thread_ceiling() (the cores,
    the OpenMP and threadpoolctl limits, the grant of the fit this context works for,
    and 1 after a fork: see _fork_cap). Every kernel call with a thread count passes
    here: a count below 1 is a ValueError, and one above the cores is never handed to
    a kernel (100,000 threads crashed libgomp). live: the call also reads a live
    thread count (dfg_options.live_threads), which may rise above n_threads."""
    global _threads_used
    if n_threads < 1:
        raise ValueError(f"n_threads must be an integer >= 1; got {n_threads}")
    ceiling = thread_ceiling()
    if n_threads > ceiling:
        n_threads = ceiling
    grant = THREAD_GRANT.get()
    # a live count stays within the fit's grant (utils/threads.py)
    if n_threads > 1 or (live and not _fork_cap and (grant is None or grant > 1)):
        _threads_used = True
    return n_threads


cdef void interrupted(str message) except *:
    """Raises for a stopped kernel. In the main thread, the SIGINT that set the flag is
    pending (Python trips the signal before the watcher sees it, defrag/utils/interrupt.py):
    its handler runs here and raises its KeyboardInterrupt, so that the caller sees
    that one exception. Elsewhere, or when no handler raises: KernelInterrupted."""
    PyErr_CheckSignals()
    raise KernelInterrupted(message)


cdef object stop_flag(bint raise_if_set=True):
    """The stop flag of the fit this context works for (None outside an interruptible
    fit). KernelInterrupted when it is set already, so that no kernel starts; with
    raise_if_set False (for kernels that read the flag themselves) the kernel is
    started and returns at its first check."""
    flag = STOP_FLAG.get()
    if raise_if_set and flag is not None and flag[0]:
        interrupted("defrag: the fit was stopped")
    return flag


cdef const int *stop_pointer(object flag) except? NULL:
    """The pointer the kernels read for a flag of stop_flag() (NULL for None); valid
    while the caller holds the flag."""
    cdef int[::1] view
    if flag is None:
        return NULL
    view = flag
    return &view[0]


cdef void check_status(int status, str what) except *:
    """A kernel's status code as an exception (none for DFG_OK)."""
    if status == DFG_OK:
        return
    if status == DFG_ENOMEM:
        raise MemoryError(f"defrag kernel {what}: out of memory")
    if status == DFG_EINTERRUPTED:
        interrupted(f"defrag kernel {what}: stopped (the fit was interrupted)")
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
