"""The package version, and the build and run-time configuration of the compiled kernels."""
from . import _common

VERSION = "0.1.0"  # also pyproject.toml's [project] version


class BuildConfig(dict):
    """A dict of build facts that prints as aligned ``key: value`` lines."""

    def __str__(self):
        width = max(len(k) for k in self)
        return "\n".join(f"{k.ljust(width)} : {v}" for k, v in self.items())


def show_config():
    """Report how the kernels were built and which CPU features they use.

    Useful in a bug report: it says whether the compiled core has OpenMP and whether
    popcounts use the CPU's instruction.

    Returns
    -------
    BuildConfig
        A dict that prints as aligned ``key: value`` lines: ``version`` (the package's),
        ``openmp`` (built with OpenMP), ``openmp_default_threads``, and ``popcount``
        ("hardware" when the POPCNT/CNT instruction is used at run time, else
        "portable").

    See Also
    --------
    set_max_memory : The memory limit of the fits.

    Examples
    --------
    >>> from defrag import show_config
    >>> config = show_config()
    >>> sorted(config)
    ['openmp', 'openmp_default_threads', 'popcount', 'version']
    >>> print(config)  # doctest: +SKIP
    version                : 0.1.0
    openmp                 : True
    openmp_default_threads : 2
    popcount               : hardware
    """
    has_omp, threads, popcnt = _common.build_info()
    return BuildConfig(
        version=VERSION,
        openmp=has_omp,
        openmp_default_threads=threads,
        popcount="hardware" if popcnt else "portable",
    )
