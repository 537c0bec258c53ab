"""Sums of float64 values rounded once, whatever the order or the partitioning of the values.

The target's mean and variance start every restart (defrag/fit/restarts.py, initial_state),
so a fit on data split into partitions (defrag/fit/dask_rows.py) gives the same bits as one in
memory only if they do not depend on how the rows are grouped. A float sum does: NumPy
sums pairwise, a sum of partial sums rounds at other places. Here each partition's sum is
exact, an integer multiple of 2**-SCALE (a Python int), partial sums add exactly, and the
mean is the correctly rounded quotient.

Each value is split as m * 2**(e - 53) (np.frexp) with m an integer of at most 53 bits,
m = hi * 2**26 + lo with |hi| <= 2**27 and 0 <= lo < 2**26 (float64 integers, all exact);
per exponent e, the sums of hi and of lo over at most BLOCK rows stay within 2**52 in
magnitude, so float64 bincounts add them exactly. Python loops over exponents (at most 2098) and blocks, never over values.
"""
import numpy as np

E_MIN = -1073  # np.frexp's exponent of the smallest subnormal, 2**-1074 = 0.5 * 2**-1073
N_EXPONENTS = 1024 - E_MIN + 1
SCALE = 53 - E_MIN  # value = m * 2**(e - 53) = (m << (e - E_MIN)) * 2**-SCALE
BLOCK = 2**25  # rows per bincount: 2**25 * 2**27 = 2**52, exact in float64


def exact_partial(values):
    """The exact sum of finite float64 values, as a Python int in units of 2**-SCALE."""
    v = np.asarray(values, dtype=np.float64).reshape(-1)
    if not np.all(np.isfinite(v)):
        raise ValueError("exact sums take finite values only")
    total = 0
    for start in range(0, v.size, BLOCK):
        lo, index = np.frexp(v[start:start + BLOCK])
        lo *= 2.0**53  # m, an integer of at most 53 bits (exact: a power of 2)
        hi = np.floor(lo * 2.0**-26)
        lo -= hi * 2.0**26  # exact: both integers below 2**53
        index -= E_MIN
        sums = [np.bincount(index, weights=part, minlength=N_EXPONENTS) for part in (hi, lo)]
        for k in np.flatnonzero((sums[0] != 0) | (sums[1] != 0)):
            total += ((int(sums[0][k]) << 26) + int(sums[1][k])) << int(k)
    return total


def exact_mean(partials, n):
    """The correctly rounded mean of n values whose exact partial sums (exact_partial)
    are partials."""
    if n < 1:
        raise ValueError("the mean of no values")
    return sum(partials) / (int(n) << SCALE)  # int / int: correctly rounded


def squared_deviations(values, mean):
    """(values - mean)**2, elementwise: the terms of the variance."""
    d = np.asarray(values, dtype=np.float64) - mean
    return d * d
