# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Rules on data: one condition as a bit column over the samples, coverage counts and the
greedy pruning of a rule's conditions, whole rule sets evaluated on raw inputs, and a
rule list's first matches, training loss and conditions pruned against it (src_c/dfg_bits.h,
src_c/dfg_prune.h, src_c/dfg_rules.h, src_c/dfg_cover.h, src_c/dfg_list_loss.h,
src_c/dfg_list_order.h, src_c/dfg_list_prune.h). The calls that take threads
take at most those of the fit they work for (kernel_threads) and start no kernel once
that fit is interrupted (stop_flag)."""
import numpy as np

from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t

from defrag._cdefs cimport (DFG_EINVAL, DFG_ENAN, DFG_OK, dfg_bound_neighbours, dfg_condition_bits,
                            dfg_condition_counts, dfg_count_all,
                            dfg_first_cover, dfg_list_loss, dfg_list_order, dfg_list_prune, dfg_pairwise_sum,
                            dfg_prune_conditions,
                            dfg_rules_cover, dfg_rules_first, dfg_ruleset, dfg_sets)
from defrag.utils._common cimport (CategorySets, category_sets, check_status, kernel_threads,
                                   optional_sets, stop_flag, stop_pointer)


cdef int64_t check_items(int64_t n, arrays, str what) except -1:
    """n, after checking that every per-condition array has n entries."""
    for a in arrays:
        if a.shape[0] != n:
            raise ValueError(f"{what}: every per-condition array needs {n} entries")
    return n


def bound_neighbours(const double[:, ::1] X, const int32_t[::1] feature, const double[::1] value,
                     int n_threads=1):
    """(below, above): for each bound, the largest value of its feature in X at or below it
    and the smallest above it (-inf / +inf where none; NaN skipped)."""
    stop_flag()
    n_threads = kernel_threads(n_threads)
    cdef int64_t B = check_items(feature.shape[0], (value,), "bound_neighbours")
    below = np.full(B, -np.inf)
    above = np.full(B, np.inf)
    cdef double[::1] lo = below, hi = above
    cdef int status = DFG_OK
    if X.shape[0] and B:
        with nogil:
            status = dfg_bound_neighbours(&X[0, 0], X.shape[0], X.shape[1], B, &feature[0],
                                          &value[0], &lo[0], &hi[0], n_threads)
    check_status(status, "bound_neighbours")
    return below, above


def condition_holds(const double[:, ::1] X, const int32_t[::1] feature, const double[::1] lower,
                    const double[::1] upper, const uint8_t[::1] missing,
                    const uint8_t[::1] zero_missing, double zero_threshold, int n_threads=1,
                    kind=None, set_ptr=None, set_words=None, str output="bool"):
    """Truth values of each condition on each row of X: lower < x <= upper (lower = -inf:
    no lower bound) or the set test of the condition's item; a missing x (NaN, or
    |x| <= zero_threshold where zero_missing) gives missing.

    output "bool": boolean (n_conditions, n_samples); "bits": the same bit-packed,
    uint64 (n_conditions, ceil(n_samples / 64)); "count": (holds, n_nan), the rows
    satisfying each condition and the NaN values of each column."""
    stop_flag()
    n_threads = kernel_threads(n_threads)
    if output not in ("bool", "bits", "count"):
        raise ValueError(f"condition_holds: output must be 'bool', 'bits' or 'count', not {output!r}")
    cdef int64_t C = check_items(feature.shape[0], (lower, upper, missing, zero_missing),
                                 "condition_holds")
    cdef CategorySets sets = category_sets(C, kind, set_ptr, set_words)
    cdef const dfg_sets *sp = optional_sets(sets)
    cdef int64_t N = X.shape[0], D = X.shape[1]
    cdef bint count = output == "count", bits = output == "bits"
    cols = np.zeros((0 if count else C, max((N + 63) // 64, 1)), dtype=np.uint64)
    holds = np.zeros(C if count else 0, dtype=np.int64)
    n_nan = np.zeros(D, dtype=np.int64)
    cdef uint64_t[:, ::1] w = cols
    cdef int64_t[::1] h = holds, m = n_nan
    cdef const double *x = &X[0, 0] if N and D else NULL
    cdef int status = DFG_OK
    if count and N and D:
        with nogil:
            status = dfg_condition_counts(x, N, D, C, &feature[0] if C else NULL,
                                          &lower[0] if C else NULL, &upper[0] if C else NULL,
                                          &missing[0] if C else NULL,
                                          &zero_missing[0] if C else NULL, zero_threshold, sp,
                                          &h[0] if C else NULL, &m[0], n_threads)
    elif N and C:
        with nogil:
            status = dfg_condition_bits(x, N, D, C, &feature[0], &lower[0], &upper[0],
                                        &missing[0], &zero_missing[0], zero_threshold, sp,
                                        &w[0, 0], n_threads)
    check_status(status, "condition_holds")
    if count or bits:
        return (holds, n_nan) if count else cols
    return np.unpackbits(cols.view(np.uint8), axis=1, count=N, bitorder="little").view(bool)


def first_cover(const uint8_t[:, ::1] cover, int n_threads=1):
    """Each row's first nonzero column of cover (n_samples, n_rules), n_rules where none
    (intp)."""
    stop_flag()
    n_threads = kernel_threads(n_threads)
    cdef int64_t N = cover.shape[0], R = cover.shape[1]
    out = np.empty(N, dtype=np.intp)
    cdef int64_t[::1] o = out
    cdef int status = DFG_OK
    if N:
        with nogil:
            status = dfg_first_cover(&cover[0, 0] if R else NULL, N, R, &o[0], n_threads)
    check_status(status, "first_cover")
    return out


cdef int _list_targets(int64_t n, const double[::1] y, const int64_t[::1] y_class, int64_t n_classes,
                       str what, const double **yp, const int64_t **cp) except -1:
    """Points yp (n_classes 0) or cp (class codes) at the targets, checked to have n entries."""
    if n_classes < 0:
        raise ValueError(f"{what}: n_classes must be >= 0, got {n_classes}")
    if (y is None) if n_classes == 0 else (y_class is None):
        raise ValueError(f"{what}: give y (n_classes 0) or y_class (n_classes > 0)")
    if n_classes == 0 and y.shape[0] != n:
        raise ValueError(f"{what}: y has {y.shape[0]} entries for {n} rows")
    if n_classes > 0 and y_class.shape[0] != n:
        raise ValueError(f"{what}: y_class has {y_class.shape[0]} entries for {n} rows")
    yp[0] = &y[0] if n_classes == 0 and n else NULL
    cp[0] = &y_class[0] if n_classes > 0 and n else NULL
    return 0


def list_loss(const uint8_t[:, ::1] cover not None, const int64_t[::1] order not None, const double[::1] y=None,
              const int64_t[::1] y_class=None, int64_t n_classes=0):
    """(training loss, whether every rule is some row's first match) of the rule list of
    cover's columns order[0], order[1], ... (cover: n_samples x n_columns, nonzero where
    the column's rule covers the row): squared error about each first-match group's mean
    (y, n_classes 0), or the rows outside each group's majority class (y_class, codes in
    [0, n_classes)). NumPy's arithmetic (src_c/dfg_list_loss.h). No GIL, one thread: a
    call is a few microseconds of work."""
    cdef int64_t N = cover.shape[0], C = cover.shape[1], R = order.shape[0]
    cdef const double *yp = NULL
    cdef const int64_t *cp = NULL
    _list_targets(N, y, y_class, n_classes, "list_loss", &yp, &cp)
    cdef double loss = 0.0
    cdef int all_matched = 1
    cdef int status
    with nogil:
        status = dfg_list_loss(&cover[0, 0] if N and C else NULL, N, C, &order[0] if R else NULL,
                               R, yp, cp, n_classes, &loss, &all_matched)
    if status == DFG_EINVAL:
        raise ValueError("list_loss: order's entries must be columns of cover, and class codes must lie in "
                         "[0, n_classes)")
    check_status(status, "list_loss")
    return loss, bool(all_matched)


def list_order(const uint8_t[:, ::1] cover not None, const double[::1] y=None, const int64_t[::1] y_class=None,
               int64_t n_classes=0, bint local_search=True):
    """The order of the rule list of cover's columns (n_samples x n_rules, nonzero where
    the rule covers the row): the greedy order, then, with local_search, single moves
    while the list's training loss drops (src_c/dfg_list_order.h). Targets as
    list_loss's. Returns the columns in list order (int64)."""
    flag = stop_flag(False)  # the kernel reads it
    cdef const int *stop = stop_pointer(flag)
    cdef int64_t N = cover.shape[0], R = cover.shape[1]
    cdef const double *yp = NULL
    cdef const int64_t *cp = NULL
    _list_targets(N, y, y_class, n_classes, "list_order", &yp, &cp)
    out = np.zeros(R, dtype=np.int64)
    cdef int64_t[::1] o = out
    cdef int status
    with nogil:
        status = dfg_list_order(&cover[0, 0] if N and R else NULL, N, R, yp, cp, n_classes, local_search,
                                &o[0] if R else NULL, stop)
    if status == DFG_EINVAL:
        raise ValueError("list_order: class codes must lie in [0, n_classes)")
    check_status(status, "list_order")
    return out


def list_prune(const uint8_t[:, ::1] holds not None, const int64_t[::1] rule_ptr not None,
               uint8_t[::1] keep not None, double budget, int64_t n_passes, const double[::1] y=None,
               const int64_t[::1] y_class=None, int64_t n_classes=0, bint keep_one=False):
    """A rule list's conditions pruned against its training loss (src_c/dfg_list_prune.h),
    keep updated in place; returns the pruned list's cover (n_samples x n_rules, bool).
    holds: n_conditions x n_samples (nonzero where condition c holds on a row); rule r's
    conditions: rule_ptr[r] .. rule_ptr[r + 1] - 1. Targets as list_loss's. keep_one: no
    rule loses its last condition."""
    flag = stop_flag(False)  # the kernel reads it
    cdef const int *stop = stop_pointer(flag)
    cdef int64_t C = holds.shape[0], N = holds.shape[1], R = rule_ptr.shape[0] - 1
    if R < 0 or rule_ptr[0] != 0 or rule_ptr[R] != C:
        raise ValueError("list_prune: rule_ptr must run from 0 to the number of conditions")
    if keep.shape[0] != C:
        raise ValueError(f"list_prune: keep has {keep.shape[0]} flags for {C} conditions")
    if n_passes < 0:
        raise ValueError(f"list_prune: n_passes must be >= 0, got {n_passes}")
    cdef const double *yp = NULL
    cdef const int64_t *cp = NULL
    _list_targets(N, y, y_class, n_classes, "list_prune", &yp, &cp)
    out = np.zeros((N, R), dtype=np.uint8)
    cdef uint8_t[:, ::1] o = out
    cdef int status
    with nogil:
        status = dfg_list_prune(&holds[0, 0] if C and N else NULL, N, C, &rule_ptr[0], R,
                                yp, cp, n_classes, budget, n_passes, keep_one,
                                &keep[0] if C else NULL, &o[0, 0] if N and R else NULL, stop)
    if status == DFG_EINVAL:
        raise ValueError("list_prune: rule_ptr must not decrease, and class codes must lie in [0, n_classes)")
    check_status(status, "list_prune")
    return out.view(bool)


def pairwise_sum(const double[::1] a not None):
    """np.sum of a float64 array, as src_c/dfg_list_loss.h adds the groups' losses (for the
    tests)."""
    cdef double out
    with nogil:
        out = dfg_pairwise_sum(&a[0] if a.shape[0] else NULL, a.shape[0])
    return out


cdef check_columns(const uint64_t[:, ::1] cols, int64_t n_samples, str what):
    """The kernels read the columns as rows of ceil(n_samples / 64) words."""
    cdef int64_t n_words = (n_samples + 63) // 64
    if n_samples < 0 or (cols.shape[0] and n_words and cols.shape[1] != n_words):
        raise ValueError(f"{what}: each condition column must hold ceil(n_samples / 64) words")


def count_all(const uint64_t[:, ::1] cols, int64_t n_samples, int64_t skip=-1):
    """Samples satisfying every condition column except index skip."""
    check_columns(cols, n_samples, "count_all")
    cdef int64_t m = cols.shape[0]
    cdef int64_t out
    with nogil:
        out = dfg_count_all(&cols[0, 0] if m else NULL, m, n_samples, skip)
    if out < 0:
        raise ValueError("defrag kernel count_all: invalid argument")
    return int(out)


def prune_conditions(const uint64_t[:, ::1] cols, int64_t n_samples, uint8_t[::1] keep):
    """Greedy pruning (sec. 3.2) in place on keep; returns the covered count."""
    cdef int64_t m = cols.shape[0]
    if keep.shape[0] != m:
        raise ValueError("prune_conditions: keep must have one flag per condition column")
    check_columns(cols, n_samples, "prune_conditions")
    cdef int64_t out
    with nogil:
        out = dfg_prune_conditions(&cols[0, 0] if m else NULL, m, n_samples,
                                   &keep[0] if m else NULL)
    if out < 0:
        raise MemoryError("defrag kernel prune_conditions failed")
    return int(out)


cdef dfg_ruleset ruleset_view(const int64_t[::1] rule_ptr, const int32_t[::1] feature,
                              const double[::1] lower, const double[::1] upper,
                              const uint8_t[::1] missing, CategorySets sets) except *:
    cdef dfg_ruleset rs
    cdef int64_t m = feature.shape[0]
    if rule_ptr.shape[0] < 1 or rule_ptr[rule_ptr.shape[0] - 1] != m or lower.shape[0] != m \
            or upper.shape[0] != m or missing.shape[0] != m or (sets is not None and sets.view.n != m):
        raise ValueError("rule arrays do not match")
    rs.n_rules = rule_ptr.shape[0] - 1
    rs.rule_ptr = &rule_ptr[0]
    rs.feature = &feature[0] if m else NULL
    rs.lower = &lower[0] if m else NULL
    rs.upper = &upper[0] if m else NULL
    rs.missing = &missing[0] if m else NULL
    rs.sets = optional_sets(sets)
    return rs


cdef void check_rules_status(int status, str what) except *:
    if status == DFG_ENAN:
        raise ValueError("X contains NaN in a feature the rules use, and the model they come "
                         "from has no rule for missing values")
    check_status(status, what)


def rules_cover(const double[:, ::1] X, const int64_t[::1] rule_ptr, const int32_t[::1] feature,
                const double[::1] lower, const double[::1] upper, const uint8_t[::1] missing,
                int n_threads=1, kind=None, set_ptr=None, set_words=None):
    """Boolean (n_samples, n_rules): rule r covers sample n."""
    stop_flag()
    n_threads = kernel_threads(n_threads)
    cdef CategorySets sets = category_sets(feature.shape[0], kind, set_ptr, set_words)
    cdef dfg_ruleset rs = ruleset_view(rule_ptr, feature, lower, upper, missing, sets)
    cdef int64_t N = X.shape[0], D = X.shape[1], R = rs.n_rules
    out = np.zeros((N, R), dtype=np.uint8)
    cdef uint8_t[:, ::1] o = out
    cdef int status = DFG_OK
    if N and R:
        with nogil:
            status = dfg_rules_cover(&X[0, 0], N, D, &rs, &o[0, 0], n_threads)
    check_rules_status(status, "rules_cover")
    return out.view(bool)


def rules_first(const double[:, ::1] X, const int64_t[::1] rule_ptr, const int32_t[::1] feature,
                const double[::1] lower, const double[::1] upper, const uint8_t[::1] missing,
                int n_threads=1, kind=None, set_ptr=None, set_words=None):
    """Index of the first rule covering each sample, -1 for none (int32)."""
    stop_flag()
    n_threads = kernel_threads(n_threads)
    cdef CategorySets sets = category_sets(feature.shape[0], kind, set_ptr, set_words)
    cdef dfg_ruleset rs = ruleset_view(rule_ptr, feature, lower, upper, missing, sets)
    cdef int64_t N = X.shape[0], D = X.shape[1], R = rs.n_rules
    out = np.full(N, -1, dtype=np.int32) if R == 0 else np.empty(N, dtype=np.int32)
    cdef int32_t[::1] o = out
    cdef int status = DFG_OK
    if N and R:
        with nogil:
            status = dfg_rules_first(&X[0, 0], N, D, &rs, &o[0], n_threads)
    check_rules_status(status, "rules_first")
    return out
