"""How many threads defrag's kernels and restart workers take.

Every kernel takes its thread count from Python (the C never asks OpenMP for a
default), and every count comes through here or through the Cython layer's
``kernel_threads`` (utils/_common.pyx), which caps it. The limits that meet (docs/user_guide/deploying.rst,
"Processes, threads and Ctrl-C"):

* the cores: this process's CPU affinity;
* OpenMP's own limit in the thread that calls fit (``OMP_NUM_THREADS``,
  ``threadpoolctl.threadpool_limits``, ``omp_set_num_threads``), and the limit that
  threadpoolctl sets for defrag from any thread (``DefragThreadController``):
  OpenMP's limit holds only in the thread that set it, so without it a fit started in
  another thread ran on every core whatever the main thread had asked;
* the cores that the other fits of this process hold: each fit asks the process's
  ``CoreBudget`` for its threads, gets at least one and at most the free cores, and
  waits while none is free, so that fits run side by side in threads (joblib's
  threading backend, a web server's request threads) never run more threads than
  cores in total;
* 1 in a child process forked after this process's kernels ran several threads
  (GNU libgomp cannot start threads there: see utils/_common.pyx).
"""
import contextlib
import logging
import os
import threading

import threadpoolctl

from . import _common
from .config import VERSION
from .validation import check_n_threads

logger = logging.getLogger("defrag")


def available_cores():
    """Cores this process may run on (its CPU affinity on Linux)."""
    return _common.available_cores()


# ------------------------------------------------------------ threadpoolctl's limit
# The limit threadpoolctl set for defrag's kernels (None: none), for every thread: held
# by the compiled layer, whose kernel_threads caps every kernel call at it.
_process_limit = _common.PROCESS_LIMIT


class DefragThreadController(threadpoolctl.LibController):
    """threadpoolctl's handle on defrag's kernels (``user_api="openmp"``), so that
    ``threadpool_limits(n)`` and ``threadpool_limits(n, user_api="openmp")`` limit the
    fits of every thread of the process, as they limit OpenBLAS: the limit OpenMP
    itself takes (``omp_set_num_threads``) holds in the calling thread only. Found by
    threadpoolctl as the loaded library ``defrag/utils/_common.*`` (the only one with
    ``dfg_max_threads``). Limits set at once from several threads overwrite each
    other, as for OpenBLAS."""

    user_api = "openmp"
    internal_api = "defrag"
    filename_prefixes = ("_common.",)
    check_symbols = ("dfg_max_threads",)

    def get_num_threads(self):
        limit = _process_limit[0]
        return available_cores() if limit is None else limit

    def set_num_threads(self, num_threads):
        _process_limit[0] = max(1, int(num_threads))

    def get_version(self):
        return VERSION


if hasattr(threadpoolctl, "register"):  # threadpoolctl >= 3.2
    threadpoolctl.register(DefragThreadController)


def threads_now():
    """The most threads a fit or kernel call started here may take: the cores, this
    thread's OpenMP limit, threadpoolctl's limit for defrag, the grant of the fit this
    context works for, and 1 after a fork that libgomp cannot follow."""
    return _common.thread_ceiling()


def checked_threads(n_threads):
    """The threads a call given ``n_threads`` takes: an integer >= 1 (a ValueError
    otherwise: a bool, a float, 0 and -1 are refused), at most threads_now(); a larger
    count runs on threads_now() threads (the results do not depend on it)."""
    return min(check_n_threads(n_threads), threads_now())


# ------------------------------------------------------------ the cores of the process
class CoreBudget:
    """The cores that the fits of this process share. ``acquire(n)`` grants between 1
    and n threads, as many as are free, and waits while none is; ``release`` gives
    them back. Fits that wait are served as cores come free (no order is promised)."""

    def __init__(self):
        self.reset()

    def reset(self):
        """A budget with nothing held: also in a forked child, where the threads that
        held cores (and perhaps this budget's lock) do not exist."""
        self._cond = threading.Condition(threading.Lock())
        self._held = 0

    @property
    def held(self):
        return self._held

    def acquire(self, wanted):
        total = available_cores()
        with self._cond:
            if self._held >= total:
                logger.info("waiting for a core: %d held by other fits", self._held)
            while self._held >= total:
                self._cond.wait()  # a lock's wait: Ctrl-C interrupts it in the main thread
            grant = max(1, min(int(wanted), total - self._held))
            self._held += grant
            return grant

    def release(self, granted):
        with self._cond:
            self._held = max(0, self._held - granted)
            self._cond.notify_all()


CORES = CoreBudget()
if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=CORES.reset)


@contextlib.contextmanager
def fit_threads(wanted):
    """Holds threads of the process's CoreBudget for one fit and yields how many: at
    most ``wanted`` and threads_now(), at least 1. Kernel calls in this context (and in
    the threads that copy it) take no more. Inside another fit's context it takes
    nothing more and yields that fit's grant (capped at wanted)."""
    held = _common.THREAD_GRANT.get()
    if held is not None:
        yield max(1, min(int(wanted), held))
        return
    grant = CORES.acquire(max(1, min(int(wanted), threads_now())))
    token = _common.THREAD_GRANT.set(grant)
    try:
        yield grant
    finally:
        _common.THREAD_GRANT.reset(token)
        CORES.release(grant)


# ------------------------------------------------------------ a fit's threads
def threads_from_n_jobs(n_jobs):
    """Threads for n_jobs in scikit-learn's convention (None: every available core,
    -1: all cores, -2: all but one, ...), at most threads_now()."""
    cores = available_cores()
    if n_jobs is None:
        wanted = cores
    elif n_jobs < 0:
        wanted = cores + 1 + n_jobs
    else:
        wanted = int(n_jobs)
    return max(1, min(wanted, threads_now()))


# Samples per OpenMP thread below which a restart runs on one thread: each
# E-step update is a parallel region, and on small inputs the synchronisation
# costs more than it saves (5,000 x 28 with a busy second core: 0.19 s per restart on
# one thread, 0.4-2.8 s on two).
MIN_SAMPLES_PER_THREAD = 8192

# Rows above which n_jobs=None runs the restarts in turn, each on every thread, rather
# than side by side on one thread each: a restart's buffers are about 24 bytes per row
# and component, so side by side they would multiply by the core count.
MAX_SAMPLES_SIDE_BY_SIDE = 100_000


def thread_budget(n_jobs, n_restarts, n_samples=None):
    """(restart workers, OpenMP threads per worker) with workers x threads <=
    threads_now() (the cores, the OpenMP and threadpoolctl limits, the fit's grant).

    n_jobs=None: restarts side by side, one thread each, up to n_restarts of them (no
    barrier between threads at all, so a busy core slows one restart instead of
    stalling every update), unless the rows are many (MAX_SAMPLES_SIDE_BY_SIDE), where
    restarts run in turn on all threads. An integer n_jobs is the number of restart
    workers (at most the threads there are: a worker is a running thread), the threads
    shared among them. Small problems, where a restart's C fit is about as short as its
    Python steps, run side by side too: in turn is no faster overall on 2 cores
    (benchmarks/restart_workers.py)."""
    total = threads_now()
    if n_jobs is None:
        side_by_side = n_samples is None or n_samples <= MAX_SAMPLES_SIDE_BY_SIDE
        workers = max(1, min(total, n_restarts)) if side_by_side else 1
    else:
        workers = max(1, min(threads_from_n_jobs(n_jobs), n_restarts, total))
    threads = max(1, total // workers)
    if n_samples is not None:
        threads = useful_threads(threads, n_samples)
    return workers, threads


def useful_threads(threads, n_samples):
    """At most `threads`, and no more than the rows keep busy (MIN_SAMPLES_PER_THREAD)."""
    return max(1, min(threads, n_samples // MIN_SAMPLES_PER_THREAD))
