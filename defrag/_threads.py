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


def thread_budget(n_jobs, n_restarts, n_samples=None):
    """(restart workers, OpenMP threads per worker) with workers x threads <= cores."""
    cores = available_cores()
    workers = 1 if n_jobs is None else threads_from_n_jobs(n_jobs)  # None: restarts in turn
    workers = max(1, min(workers, n_restarts))
    _, omp_default, _ = _common.build_info()
    threads = max(1, min(omp_default, cores // workers))
    if n_samples is not None:
        threads = max(1, min(threads, n_samples // MIN_SAMPLES_PER_THREAD))
    return workers, threads
