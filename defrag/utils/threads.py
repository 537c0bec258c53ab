"""How many threads defrag's kernels and restart workers take."""
import os

from . import _common


def available_cores():
    """Cores this process may run on (its CPU affinity on Linux)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def threads_from_n_jobs(n_jobs):
    """Threads for n_jobs in scikit-learn's convention (None: every available core,
    -1: all cores, -2: all but one, ...)."""
    cores = available_cores()
    if n_jobs is None:
        return max(1, cores)
    if n_jobs < 0:
        return max(1, cores + 1 + n_jobs)
    return int(n_jobs)


# Samples per OpenMP thread below which a restart runs on one thread: each
# E-step update is a parallel region, and on small inputs the synchronisation
# costs more than it saves (measured: 5,000 x 28 with a busy second core, 0.19 s
# per restart on one thread vs 0.4-2.8 s on two).
MIN_SAMPLES_PER_THREAD = 8192

# Rows above which n_jobs=None runs the restarts in turn, each on every thread, rather
# than side by side on one thread each: a restart's buffers are about 24 bytes per row
# and component, so side by side they would multiply by the core count.
MAX_SAMPLES_SIDE_BY_SIDE = 100_000


def thread_budget(n_jobs, n_restarts, n_samples=None):
    """(restart workers, OpenMP threads per worker) with workers x threads <= cores.

    n_jobs=None uses every core the OpenMP runtime allows (OMP_NUM_THREADS): restarts
    side by side, one thread each, up to n_restarts of them (no barrier between threads
    at all, so a busy core slows one restart instead of stalling every update), unless
    the rows are many (MAX_SAMPLES_SIDE_BY_SIDE), where restarts run in turn on all
    threads. An integer n_jobs is the number of restart workers, the cores shared
    among them."""
    cores = available_cores()
    _, omp_default, _ = _common.build_info()
    if n_jobs is None:
        total = max(1, min(omp_default, cores))
        side_by_side = n_samples is None or n_samples <= MAX_SAMPLES_SIDE_BY_SIDE
        workers = max(1, min(total, n_restarts)) if side_by_side else 1
        threads = max(1, total // workers)
    else:
        workers = max(1, min(threads_from_n_jobs(n_jobs), n_restarts))
        threads = max(1, min(omp_default, cores // workers))
    if n_samples is not None:
        threads = useful_threads(threads, n_samples)
    return workers, threads


def useful_threads(threads, n_samples):
    """At most `threads`, and no more than the rows keep busy (MIN_SAMPLES_PER_THREAD)."""
    return max(1, min(threads, n_samples // MIN_SAMPLES_PER_THREAD))
