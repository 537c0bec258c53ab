# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Thin Cython layer over the C kernels in src_c/.

Typed memoryviews in, the GIL released around every kernel call. Shapes are
checked in the Python layer (defrag/_kernels.py); here only what the C code
needs to be safe is asserted, and C status codes become Python exceptions.
"""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t

cnp.import_array()

cdef extern from "dfg_common.h":
    int DFG_OK
    int DFG_EINVAL
    int DFG_ENOMEM

cdef extern from "dfg_config.h":
    int dfg_has_openmp() nogil
    int dfg_max_threads() nogil

cdef extern from "dfg_cpu.h":
    int dfg_cpu_has_popcnt() nogil

cdef extern from "dfg_ranks.h":
    int dfg_compute_ranks(const double *X, int64_t n_samples, int64_t n_features,
                          const int64_t *feat_ptr, const double *thresholds,
                          int32_t *ranks, int n_threads) nogil

cdef extern from "dfg_sets.h":
    ctypedef struct dfg_sets:
        int64_t n
        const uint8_t *kind
        const int64_t *ptr
        const uint64_t *words

cdef extern from "dfg_ranks.h":
    int dfg_compute_group_ranks(const double *X, int64_t n_samples, int64_t n_features,
                                int64_t n_groups, const int32_t *group_feature,
                                const int64_t *group_ptr, const double *thresholds,
                                const dfg_sets *sets, int32_t *ranks, int n_threads) nogil

cdef extern from "dfg_bits.h":
    int dfg_pack_rows(const double *X, int64_t n_samples, int64_t n_features,
                      const int32_t *split_feature, const double *split_threshold,
                      const uint8_t *missing_right, const dfg_sets *sets, int64_t n_splits,
                      uint64_t *S, int n_threads) nogil
    int dfg_condition_column(const double *X, int64_t n_samples, int64_t n_features,
                             int32_t feature, double threshold, int greater, int missing,
                             uint64_t *col) nogil
    int dfg_set_column(const double *X, int64_t n_samples, int64_t n_features, int32_t feature,
                       const uint64_t *words, int64_t n_words, int negate, int missing,
                       uint64_t *col) nogil

cdef extern from "dfg_prune.h":
    int64_t dfg_count_all(const uint64_t *cols, int64_t m, int64_t n_samples, int64_t skip) nogil
    int64_t dfg_prune_conditions(const uint64_t *cols, int64_t m, int64_t n_samples,
                                 uint8_t *keep) nogil

cdef extern from "dfg_rules.h":
    int DFG_ENAN
    ctypedef struct dfg_ruleset:
        int64_t n_rules
        const int64_t *rule_ptr
        const int32_t *feature
        const double *lower
        const double *upper
        const uint8_t *missing
        const dfg_sets *sets
    int dfg_rules_cover(const double *X, int64_t n_samples, int64_t n_features,
                        const dfg_ruleset *rules, uint8_t *covers, int n_threads) nogil
    int dfg_rules_first(const double *X, int64_t n_samples, int64_t n_features,
                        const dfg_ruleset *rules, int32_t *first, int n_threads) nogil

cdef extern from "dfg_loglik.h":
    int dfg_rank_tables(const double *eta, int64_t n_components, int64_t n_splits,
                        const int64_t *feat_ptr, int64_t n_features,
                        const uint8_t *missing_right, double *table, double *base,
                        int n_threads) nogil
    int dfg_loglik_ranks(const int32_t *ranks, int64_t n_samples, int64_t n_features,
                         const int64_t *feat_ptr, const double *table, const double *base,
                         int64_t n_components, double *out, int n_threads) nogil
    int dfg_loglik_bits(const uint64_t *S, int64_t n_samples, int64_t n_splits,
                        const double *eta, int64_t n_components, double eps,
                        double *out, int n_threads) nogil

cdef extern from "dfg_estep.h":
    int dfg_lower_bound(const double *logf, const double *beta, int64_t n_samples,
                        int64_t n_components, double omega, double *colsum,
                        double *value, int n_threads) nogil
    int dfg_estep(const double *logf, int64_t n_samples, int64_t n_components, double omega,
                  int max_inner, double tol, double *beta, double *colsum, double *value,
                  int *n_inner, double *scratch, int n_threads) nogil

cdef extern from "dfg_mstep.h":
    int dfg_split_stats_ranks(const int32_t *ranks, int64_t n_samples, int64_t n_features,
                              const int64_t *feat_ptr, const uint8_t *missing_right,
                              const double *beta, int64_t n_components, double *num,
                              int n_threads) nogil
    int dfg_split_stats_bits(const uint64_t *S, int64_t n_samples, int64_t n_splits,
                             const double *beta, int64_t n_components, double *num,
                             int n_threads) nogil

cdef extern from "dfg_model.h":
    int DFG_METHOD_FAB
    int DFG_METHOD_EM
    ctypedef struct dfg_data:
        int64_t n_samples
        int64_t n_features
        int64_t n_splits
        const int64_t *feat_ptr
        const uint8_t *missing_right
        const int32_t *ranks
        const uint64_t *bits
        int64_t n_classes
        const double *y_value
        const int32_t *y_class
    ctypedef struct dfg_params:
        int64_t n_components
        double *eta
        double *alpha
        double *mean
        double *precision
        double *gamma
    ctypedef struct dfg_options:
        int method
        int max_iter
        double tol
        double delta
        double eps
        double var_floor
        int warmup_iter
        int warmup_inner
        int max_inner
        int n_anneal
        const double *anneal_eps
        int anneal_iter
        int n_threads
    double dfg_omega(const dfg_data *data) nogil

cdef extern from "dfg_joint.h":
    int dfg_log_joint(const dfg_data *data, const dfg_params *params, double *logf,
                      int n_threads) nogil

cdef extern from "dfg_mstep.h":
    int dfg_mstep(const dfg_data *data, const double *beta, const dfg_options *opt,
                  dfg_params *params) nogil

cdef extern from "dfg_fit.h":
    int dfg_fit_max_iterations(const dfg_options *opt) nogil
    int dfg_fit(const dfg_data *data, const dfg_options *opt, dfg_params *params,
                double *beta, double *lower_bound, int32_t *phase, int *n_iter) nogil

cdef extern from "dfg_assign.h":
    int dfg_map_assign(const dfg_data *data, const dfg_params *params, double eps,
                       int32_t *assign, int n_threads) nogil


cdef const uint8_t *_flags(object flags, int64_t n) except? NULL:
    """Pointer to an optional uint8 flag array of length n (None: NULL)."""
    cdef const uint8_t[::1] view
    if flags is None:
        return NULL
    view = flags
    if view.shape[0] != n:
        raise ValueError(f"missing_right has {view.shape[0]} flags for {n} splits")
    return &view[0] if n else NULL


cdef inline void _check(int status, str what) except *:
    if status == DFG_OK:
        return
    if status == DFG_ENOMEM:
        raise MemoryError(f"defrag kernel {what}: out of memory")
    raise ValueError(f"defrag kernel {what}: invalid argument (status {status})")


def build_info():
    """(has_openmp, default_threads, cpu_has_popcnt)."""
    return bool(dfg_has_openmp()), int(dfg_max_threads()), bool(dfg_cpu_has_popcnt())


# ---- proxy-tree split search (issue 6) ----
cdef extern from "dfg_proxy_split.h":
    int dfg_proxy_node_score(const int64_t *rows, int64_t n_rows, int64_t n_samples,
                             const double *mean, const double *var, double var_floor,
                             double *score) nogil
    int dfg_proxy_best_split(const double *X, int64_t n_samples, int64_t n_features,
                             const int64_t *rows, int64_t n_rows,
                             const double *mean, const double *var,
                             int64_t min_leaf, double var_floor,
                             int32_t *feature, double *threshold, double *gain,
                             int64_t *n_left, int n_threads) nogil
    int dfg_proxy_best_split_proba(const double *X, int64_t n_samples, int64_t n_features,
                                   const int64_t *rows, int64_t n_rows,
                                   const double *P, int64_t n_classes, int64_t min_leaf,
                                   int32_t *feature, double *threshold, double *gain,
                                   int64_t *n_left, int n_threads) nogil


def proxy_node_score(const int64_t[::1] rows, const double[::1] mean, const double[::1] var,
                     double var_floor):
    """-n log(max(sigma2, var_floor)) of the node holding `rows` (eq. 8)."""
    if mean.shape[0] != var.shape[0]:
        raise ValueError("mean and var differ in length")
    cdef double score = 0.0
    cdef int status
    with nogil:
        status = dfg_proxy_node_score(&rows[0] if rows.shape[0] else NULL, rows.shape[0],
                                      mean.shape[0], &mean[0], &var[0], var_floor, &score)
    _check(status, "proxy_node_score")
    return score


def proxy_best_split(const double[:, ::1] X, const int64_t[::1] rows, const double[::1] mean,
                     const double[::1] var, int64_t min_leaf, double var_floor, int n_threads=1):
    """(feature, threshold, gain, n_left) of the best split of a node; feature -1 if none."""
    if mean.shape[0] != X.shape[0] or var.shape[0] != X.shape[0]:
        raise ValueError("mean and var must have one entry per row of X")
    if rows.shape[0] == 0 or X.shape[0] == 0:
        raise ValueError("proxy_best_split: empty node")
    cdef int32_t feature = -1
    cdef double threshold = 0.0, gain = 0.0
    cdef int64_t n_left = 0
    cdef int status
    with nogil:
        status = dfg_proxy_best_split(&X[0, 0], X.shape[0], X.shape[1], &rows[0], rows.shape[0],
                                      &mean[0], &var[0], min_leaf, var_floor, &feature,
                                      &threshold, &gain, &n_left, n_threads)
    _check(status, "proxy_best_split")
    return int(feature), float(threshold), float(gain), int(n_left)


def proxy_best_split_proba(const double[:, ::1] X, const int64_t[::1] rows,
                           const double[:, ::1] P, int64_t min_leaf, int n_threads=1):
    """Soft-target classification split (entropy of the mean class probabilities)."""
    if P.shape[0] != X.shape[0]:
        raise ValueError("P must have one row per row of X")
    if rows.shape[0] == 0 or X.shape[0] == 0 or P.shape[1] == 0:
        raise ValueError("proxy_best_split_proba: empty node or no classes")
    cdef int32_t feature = -1
    cdef double threshold = 0.0, gain = 0.0
    cdef int64_t n_left = 0
    cdef int status
    with nogil:
        status = dfg_proxy_best_split_proba(&X[0, 0], X.shape[0], X.shape[1], &rows[0],
                                            rows.shape[0], &P[0, 0], P.shape[1], min_leaf,
                                            &feature, &threshold, &gain, &n_left, n_threads)
    _check(status, "proxy_best_split_proba")
    return int(feature), float(threshold), float(gain), int(n_left)


def compute_ranks(const double[:, ::1] X, const int64_t[::1] feat_ptr,
                  const double[::1] thresholds, int n_threads=1):
    """Thermometer ranks, shape (n_features, n_samples), int32."""
    cdef int64_t N = X.shape[0], D = X.shape[1]
    assert feat_ptr.shape[0] == D + 1 and feat_ptr[D] == thresholds.shape[0]
    ranks = np.empty((D, N), dtype=np.int32)
    cdef int32_t[:, ::1] r = ranks
    cdef int status
    with nogil:
        status = dfg_compute_ranks(&X[0, 0] if N * D else NULL, N, D, &feat_ptr[0],
                                   &thresholds[0] if thresholds.shape[0] else NULL,
                                   &r[0, 0] if N * D else NULL, n_threads)
    _check(status, "compute_ranks")
    return ranks


cdef class _Sets:
    """A dfg_sets over n items from (kind, ptr, words) arrays (see src_c/dfg_sets.h);
    holds the arrays so that the struct's pointers stay valid."""
    cdef dfg_sets view
    cdef object _keep

    def __init__(self, int64_t n, kind, ptr, words):
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


cdef const dfg_sets *_sets_ptr(_Sets sets) except? NULL:
    return NULL if sets is None else &sets.view


def compute_group_ranks(const double[:, ::1] X, const int32_t[::1] group_feature,
                        const int64_t[::1] group_ptr, const double[::1] thresholds,
                        int n_threads=1, kind=None, set_ptr=None, set_words=None):
    """Ranks of split groups (src_c/dfg_ranks.h), shape (n_groups, n_samples), int32:
    a numeric group's thermometer rank; a one-split categorical group's s (0/1), 2 if missing.

    kind / set_ptr / set_words (all or none): one item per split, see src_c/dfg_sets.h."""
    cdef int64_t N = X.shape[0], D = X.shape[1], G = group_feature.shape[0]
    cdef int64_t L = thresholds.shape[0]
    assert group_ptr.shape[0] == G + 1 and group_ptr[G] == L
    cdef _Sets sets = None if kind is None else _Sets(L, kind, set_ptr, set_words)
    cdef const dfg_sets *sp = _sets_ptr(sets)
    ranks = np.empty((G, N), dtype=np.int32)
    cdef int32_t[:, ::1] r = ranks
    cdef int status
    with nogil:
        status = dfg_compute_group_ranks(&X[0, 0] if N * D else NULL, N, D, G,
                                         &group_feature[0] if G else NULL, &group_ptr[0],
                                         &thresholds[0] if L else NULL, sp,
                                         &r[0, 0] if N * G else NULL, n_threads)
    _check(status, "compute_group_ranks")
    return ranks


def pack_rows(const double[:, ::1] X, const int32_t[::1] split_feature,
              const double[::1] split_threshold, int n_threads=1, missing_right=None,
              kind=None, set_ptr=None, set_words=None):
    """Bit-packed s matrix, shape (n_samples, ceil(L / 64)), uint64.

    kind / set_ptr / set_words (all or none): categorical splits, see src_c/dfg_sets.h."""
    cdef int64_t N = X.shape[0], D = X.shape[1], L = split_feature.shape[0]
    assert split_threshold.shape[0] == L
    cdef const uint8_t *mr = _flags(missing_right, L)
    cdef _Sets sets = None if kind is None else _Sets(L, kind, set_ptr, set_words)
    cdef const dfg_sets *sp = _sets_ptr(sets)
    cdef int64_t W = (L + 63) // 64
    S = np.zeros((N, max(W, 1)), dtype=np.uint64)
    cdef uint64_t[:, ::1] s = S
    cdef int status = DFG_OK
    if N and L:
        with nogil:
            status = dfg_pack_rows(&X[0, 0], N, D, &split_feature[0], &split_threshold[0],
                                   mr, sp, L, &s[0, 0], n_threads)
    _check(status, "pack_rows")
    return S[:, :W] if W else S[:, :0]


def condition_column(const double[:, ::1] X, int feature, double threshold, bint greater,
                     bint missing=False):
    """One condition (x_f > t if greater else x_f <= t; a missing x_f gives missing)
    as bits over the samples."""
    cdef int64_t N = X.shape[0], D = X.shape[1]
    col = np.zeros(max((N + 63) // 64, 1), dtype=np.uint64)
    cdef uint64_t[::1] c = col
    cdef int status = DFG_OK
    if N:
        with nogil:
            status = dfg_condition_column(&X[0, 0], N, D, feature, threshold, greater, missing, &c[0])
    _check(status, "condition_column")
    return col


def set_condition_column(const double[:, ::1] X, int feature, const uint64_t[::1] words,
                         bint negate=False, bint missing=False):
    """One set condition (x_f in the set of words, or not in it when negate; a missing
    x_f gives missing) as bits over the samples."""
    cdef int64_t N = X.shape[0], D = X.shape[1], W = words.shape[0]
    col = np.zeros(max((N + 63) // 64, 1), dtype=np.uint64)
    cdef uint64_t[::1] c = col
    cdef int status = DFG_OK
    if N:
        with nogil:
            status = dfg_set_column(&X[0, 0], N, D, feature, &words[0] if W else NULL, W,
                                    negate, missing, &c[0])
    _check(status, "set_condition_column")
    return col


def count_all(const uint64_t[:, ::1] cols, int64_t n_samples, int64_t skip=-1):
    """Samples satisfying every condition column except index skip."""
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
    assert keep.shape[0] == m
    cdef int64_t out
    with nogil:
        out = dfg_prune_conditions(&cols[0, 0] if m else NULL, m, n_samples,
                                   &keep[0] if m else NULL)
    if out < 0:
        raise MemoryError("defrag kernel prune_conditions failed")
    return int(out)


cdef dfg_ruleset _ruleset_view(const int64_t[::1] rule_ptr, const int32_t[::1] feature,
                              const double[::1] lower, const double[::1] upper,
                              const uint8_t[::1] missing, _Sets sets) except *:
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
    rs.sets = _sets_ptr(sets)
    return rs


cdef inline void _check_rules(int status, str what) except *:
    if status == DFG_ENAN:
        raise ValueError("X contains NaN in a feature the rules use, and the model they come "
                         "from has no rule for missing values")
    _check(status, what)


def rules_cover(const double[:, ::1] X, const int64_t[::1] rule_ptr, const int32_t[::1] feature,
                const double[::1] lower, const double[::1] upper, const uint8_t[::1] missing,
                int n_threads=1, kind=None, set_ptr=None, set_words=None):
    """Boolean (n_samples, n_rules): rule r covers sample n."""
    cdef _Sets sets = None if kind is None else _Sets(feature.shape[0], kind, set_ptr, set_words)
    cdef dfg_ruleset rs = _ruleset_view(rule_ptr, feature, lower, upper, missing, sets)
    cdef int64_t N = X.shape[0], D = X.shape[1], R = rs.n_rules
    out = np.zeros((N, R), dtype=np.uint8)
    cdef uint8_t[:, ::1] o = out
    cdef int status = DFG_OK
    if N and R:
        with nogil:
            status = dfg_rules_cover(&X[0, 0], N, D, &rs, &o[0, 0], n_threads)
    _check_rules(status, "rules_cover")
    return out.view(bool)


def rules_first(const double[:, ::1] X, const int64_t[::1] rule_ptr, const int32_t[::1] feature,
                const double[::1] lower, const double[::1] upper, const uint8_t[::1] missing,
                int n_threads=1, kind=None, set_ptr=None, set_words=None):
    """Index of the first rule covering each sample, -1 for none (int32)."""
    cdef _Sets sets = None if kind is None else _Sets(feature.shape[0], kind, set_ptr, set_words)
    cdef dfg_ruleset rs = _ruleset_view(rule_ptr, feature, lower, upper, missing, sets)
    cdef int64_t N = X.shape[0], D = X.shape[1], R = rs.n_rules
    out = np.full(N, -1, dtype=np.int32) if R == 0 else np.empty(N, dtype=np.int32)
    cdef int32_t[::1] o = out
    cdef int status = DFG_OK
    if N and R:
        with nogil:
            status = dfg_rules_first(&X[0, 0], N, D, &rs, &o[0], n_threads)
    _check_rules(status, "rules_first")
    return out


def loglik_ranks(const int32_t[:, ::1] ranks, const int64_t[::1] feat_ptr,
                 const double[:, ::1] eta, int n_threads=1, missing_right=None):
    """log p(s_n | k) (eq. 6) by the rank path, shape (n_samples, K)."""
    cdef int64_t D = ranks.shape[0], N = ranks.shape[1], K = eta.shape[0], L = eta.shape[1]
    assert feat_ptr.shape[0] == D + 1 and feat_ptr[D] == L and K >= 1
    cdef const uint8_t *mr = _flags(missing_right, L)
    table = np.empty(((L + 2 * D) * K + K,), dtype=np.float64)
    cdef double[::1] t = table
    out = np.empty((N, K), dtype=np.float64)
    cdef double[:, ::1] o = out
    cdef int status
    with nogil:
        status = dfg_rank_tables(&eta[0, 0] if L else NULL, K, L, &feat_ptr[0], D, mr,
                                 &t[0], &t[(L + 2 * D) * K], n_threads)
        if status == DFG_OK and N:
            status = dfg_loglik_ranks(&ranks[0, 0] if D else NULL, N, D, &feat_ptr[0],
                                      &t[0], &t[(L + 2 * D) * K], K, &o[0, 0], n_threads)
    _check(status, "loglik_ranks")
    return out


def loglik_bits(const uint64_t[:, ::1] S, int64_t n_splits, const double[:, ::1] eta,
                double eps, int n_threads=1):
    """log p(s_n | k) (eq. 6) by the bit path with popcounts, shape (n_samples, K)."""
    cdef int64_t N = S.shape[0], K = eta.shape[0]
    assert eta.shape[1] == n_splits and S.shape[1] == (n_splits + 63) // 64 and K >= 1
    out = np.empty((N, K), dtype=np.float64)
    cdef double[:, ::1] o = out
    cdef int status = DFG_OK
    if N and n_splits:
        with nogil:
            status = dfg_loglik_bits(&S[0, 0], N, n_splits, &eta[0, 0], K, eps, &o[0, 0], n_threads)
    elif N:
        out[:] = 0.0
    _check(status, "loglik_bits")
    return out


def lower_bound(const double[:, ::1] logf, const double[:, ::1] beta, double omega,
                int n_threads=1):
    """(bound of eq. 12, column sums of beta)."""
    cdef int64_t N = logf.shape[0], K = logf.shape[1]
    assert beta.shape[0] == N and beta.shape[1] == K and N >= 1
    colsum = np.empty(K, dtype=np.float64)
    cdef double[::1] c = colsum
    cdef double value = 0.0
    cdef int status
    with nogil:
        status = dfg_lower_bound(&logf[0, 0], &beta[0, 0], N, K, omega, &c[0], &value, n_threads)
    _check(status, "lower_bound")
    return value, colsum


def estep(const double[:, ::1] logf, double[:, ::1] beta, double omega, int max_inner,
          double tol, int n_threads=1):
    """E-step (eq. 13 iterated; EM when omega == 0) in place on beta.

    Returns (column sums, bound, number of updates)."""
    cdef int64_t N = logf.shape[0], K = logf.shape[1]
    assert beta.shape[0] == N and beta.shape[1] == K and N >= 1
    colsum = np.empty(K, dtype=np.float64)
    cdef double[::1] c = colsum
    cdef double value = 0.0
    cdef int n_inner = 0, status
    with nogil:
        status = dfg_estep(&logf[0, 0], N, K, omega, max_inner, tol, &beta[0, 0], &c[0],
                           &value, &n_inner, NULL, n_threads)
    _check(status, "estep")
    return colsum, value, n_inner


def split_stats_ranks(const int32_t[:, ::1] ranks, const int64_t[::1] feat_ptr,
                      const double[:, ::1] beta, int n_threads=1, missing_right=None):
    """sum_n beta_nk s_nl by rank histograms, shape (K, L)."""
    cdef int64_t D = ranks.shape[0], N = ranks.shape[1], K = beta.shape[1]
    assert beta.shape[0] == N and feat_ptr.shape[0] == D + 1 and N >= 1
    cdef int64_t L = feat_ptr[D]
    cdef const uint8_t *mr = _flags(missing_right, L)
    num = np.zeros((K, L), dtype=np.float64)
    cdef double[:, ::1] o = num
    cdef int status = DFG_OK
    if L:
        with nogil:
            status = dfg_split_stats_ranks(&ranks[0, 0], N, D, &feat_ptr[0], mr, &beta[0, 0], K,
                                           &o[0, 0], n_threads)
    _check(status, "split_stats_ranks")
    return num


def split_stats_bits(const uint64_t[:, ::1] S, int64_t n_splits, const double[:, ::1] beta,
                     int n_threads=1):
    """sum_n beta_nk s_nl over the bit-packed rows, shape (K, L)."""
    cdef int64_t N = S.shape[0], K = beta.shape[1]
    assert beta.shape[0] == N and S.shape[1] == (n_splits + 63) // 64 and N >= 1
    num = np.zeros((K, n_splits), dtype=np.float64)
    cdef double[:, ::1] o = num
    cdef int status = DFG_OK
    if n_splits:
        with nogil:
            status = dfg_split_stats_bits(&S[0, 0], N, n_splits, &beta[0, 0], K, &o[0, 0], n_threads)
    _check(status, "split_stats_bits")
    return num


cdef class Problem:
    """Training data for the fit kernels: ranks or packed bits, and targets.

    Holds references to the arrays so the C struct's pointers stay valid.
    """
    cdef dfg_data data
    cdef object _keep

    def __init__(self, const int64_t[::1] feat_ptr, ranks=None, bits=None, y_value=None,
                 y_class=None, int64_t n_classes=0, int64_t n_samples=-1, missing_right=None):
        cdef const int32_t[:, ::1] r
        cdef const uint64_t[:, ::1] b
        cdef const double[::1] yv
        cdef const int32_t[::1] yc
        self._keep = [feat_ptr, ranks, bits, y_value, y_class, missing_right]
        self.data.n_features = feat_ptr.shape[0] - 1
        self.data.n_splits = feat_ptr[feat_ptr.shape[0] - 1]
        self.data.feat_ptr = &feat_ptr[0]
        self.data.missing_right = _flags(missing_right, self.data.n_splits)
        self.data.ranks = NULL
        self.data.bits = NULL
        self.data.y_value = NULL
        self.data.y_class = NULL
        self.data.n_classes = n_classes
        self.data.n_samples = n_samples
        if ranks is not None:
            r = ranks
            assert r.shape[0] == self.data.n_features
            self.data.n_samples = r.shape[1]
            if r.shape[0] * r.shape[1]:
                self.data.ranks = &r[0, 0]
            else:
                self.data.ranks = <const int32_t *>self.data.feat_ptr  # never read: no splits
        elif bits is not None:
            b = bits
            assert b.shape[1] == (self.data.n_splits + 63) // 64
            self.data.n_samples = b.shape[0]
            self.data.bits = &b[0, 0] if b.shape[0] * b.shape[1] else <const uint64_t *>self.data.feat_ptr
        else:
            raise ValueError("Problem needs ranks or bits")
        if n_classes == 0 and y_value is not None:
            yv = y_value
            assert yv.shape[0] == self.data.n_samples
            self.data.y_value = &yv[0]
        elif n_classes > 0 and y_class is not None:
            yc = y_class
            assert yc.shape[0] == self.data.n_samples
            self.data.y_class = &yc[0]

    @property
    def n_samples(self):
        return int(self.data.n_samples)

    @property
    def omega(self):
        return float(dfg_omega(&self.data))


cdef dfg_params _params_view(object p, int64_t K, int64_t n_classes, int64_t n_splits) except *:
    """dfg_params pointing into the arrays of dict p (checked contiguous float64)."""
    cdef dfg_params out
    cdef double[:, ::1] eta = p["eta"]
    cdef double[::1] alpha = p["alpha"]
    cdef double[::1] mean, precision
    cdef double[:, ::1] gamma
    if eta.shape[0] < K or alpha.shape[0] < K or eta.shape[1] != n_splits:
        raise ValueError("parameter arrays do not match the problem (eta shape)")
    out.n_components = K
    out.eta = &eta[0, 0] if eta.shape[1] else &alpha[0]
    out.alpha = &alpha[0]
    out.mean = NULL
    out.precision = NULL
    out.gamma = NULL
    if n_classes == 0:
        mean = p["mean"]
        precision = p["precision"]
        if mean.shape[0] < K or precision.shape[0] < K:
            raise ValueError("parameter arrays do not match the problem (mean shape)")
        out.mean = &mean[0]
        out.precision = &precision[0]
    else:
        gamma = p["gamma"]
        if gamma.shape[0] < K or gamma.shape[1] != n_classes:
            raise ValueError("parameter arrays do not match the problem (gamma shape)")
        out.gamma = &gamma[0, 0]
    return out


cdef dfg_options _options(str method, int max_iter, double tol, double delta, double eps,
                          double var_floor, int n_threads, tuple inner=(5, 2, 20)) except *:
    cdef dfg_options o
    if method == "fab":
        o.method = DFG_METHOD_FAB
    elif method == "em":
        o.method = DFG_METHOD_EM
    else:
        raise ValueError(f"unknown method {method!r}")
    o.max_iter = max_iter
    o.tol = tol
    o.delta = delta
    o.eps = eps
    o.var_floor = var_floor
    o.warmup_iter, o.warmup_inner, o.max_inner = inner
    o.n_anneal = 0
    o.anneal_eps = NULL
    o.anneal_iter = 1
    o.n_threads = n_threads
    return o


def log_joint(Problem problem, dict params, int n_threads=1):
    """log f_nk = log p(y|k) + log p(s|k) + log alpha_k, shape (N, K)."""
    cdef int64_t K = params["alpha"].shape[0]
    cdef dfg_params p = _params_view(params, K, problem.data.n_classes, problem.data.n_splits)
    out = np.empty((problem.data.n_samples, K), dtype=np.float64)
    cdef double[:, ::1] o = out
    cdef int status
    with nogil:
        status = dfg_log_joint(&problem.data, &p, &o[0, 0], n_threads)
    _check(status, "log_joint")
    return out


def mstep(Problem problem, const double[:, ::1] beta, dict params, double eps,
          double var_floor, int n_threads=1):
    """M-step (eq. 14) into the arrays of params (sized for beta.shape[1] components)."""
    cdef int64_t K = beta.shape[1]
    assert beta.shape[0] == problem.data.n_samples
    cdef dfg_params p = _params_view(params, K, problem.data.n_classes, problem.data.n_splits)
    cdef dfg_options o = _options("fab", 1, 0.0, 0.0, eps, var_floor, n_threads)
    cdef int status
    with nogil:
        status = dfg_mstep(&problem.data, &beta[0, 0], &o, &p)
    _check(status, "mstep")


def fit(Problem problem, dict params, double[:, ::1] beta, str method, int max_iter,
        double tol, double delta, double eps, double var_floor, int n_threads=1,
        tuple inner=(5, 2, 20), anneal_eps=(), int anneal_iter=10):
    """One FAB/EM run in place on params and beta.

    inner = (warm-up iterations, E-step updates in the warm-up, E-step updates after);
    anneal_eps: clamps of the phases before the final one (see dfg_fit.h).
    Returns (K, lower-bound trace, phase of each iteration)."""
    cdef int64_t K = beta.shape[1]
    assert beta.shape[0] == problem.data.n_samples and max_iter >= 1
    cdef dfg_params p = _params_view(params, K, problem.data.n_classes, problem.data.n_splits)
    cdef dfg_options o = _options(method, max_iter, tol, delta, eps, var_floor, n_threads, inner)
    cdef double[::1] levels = np.ascontiguousarray(anneal_eps, dtype=np.float64).reshape(-1)
    o.n_anneal = levels.shape[0]
    o.anneal_eps = &levels[0] if levels.shape[0] else NULL
    o.anneal_iter = anneal_iter
    cdef int cap = dfg_fit_max_iterations(&o)
    if cap < 1:
        raise ValueError("max_iter and the eps schedule give too many iterations")
    trace = np.zeros(cap, dtype=np.float64)
    phases = np.zeros(cap, dtype=np.int32)
    cdef double[::1] tr = trace
    cdef int32_t[::1] ph = phases
    cdef int n_iter = 0, status
    with nogil:
        status = dfg_fit(&problem.data, &o, &p, &beta[0, 0], &tr[0], &ph[0], &n_iter)
    _check(status, "fit")
    return int(p.n_components), trace[:n_iter].copy(), phases[:n_iter].copy()


def map_assign(Problem problem, dict params, double eps, int n_threads=1):
    """eq. 10: argmax_k log p(s|k) + log alpha_k per sample, int32."""
    cdef int64_t K = params["alpha"].shape[0]
    cdef dfg_params p = _params_view(params, K, problem.data.n_classes, problem.data.n_splits)
    out = np.empty(problem.data.n_samples, dtype=np.int32)
    cdef int32_t[::1] o = out
    cdef int status = DFG_OK
    if problem.data.n_samples:
        with nogil:
            status = dfg_map_assign(&problem.data, &p, eps, &o[0], n_threads)
    _check(status, "map_assign")
    return out


# ---- proximities (issue 5) ----

cdef extern from "dfg_proximity.h":
    int dfg_tree_distance(const int32_t *leaves_a, int64_t n_a, const int32_t *leaves_bt,
                          int64_t n_b, int64_t n_trees, const float *weights, float *out,
                          int n_threads) nogil


def tree_distance(const int32_t[:, ::1] leaves_a, const int32_t[:, ::1] leaves_bt,
                  const float[::1] weights, int n_threads=1):
    """1 - weighted share of trees in which a point of A and a point of B share a leaf.

    leaves_a: n_a x n_trees; leaves_bt: n_trees x n_b (tree-major); weights: n_trees.
    Returns an n_a x n_b float32 array (see src_c/dfg_proximity.h)."""
    cdef int64_t n_a = leaves_a.shape[0], T = leaves_a.shape[1], n_b = leaves_bt.shape[1]
    if leaves_bt.shape[0] != T or weights.shape[0] != T:
        raise ValueError("leaves_a, leaves_bt and weights disagree on the number of trees")
    if T < 1:
        raise ValueError("at least one tree is needed")
    out = np.empty((n_a, n_b), dtype=np.float32)
    cdef float[:, ::1] o = out
    cdef int status
    with nogil:
        status = dfg_tree_distance(&leaves_a[0, 0] if n_a else NULL, n_a,
                                   &leaves_bt[0, 0] if n_b else NULL, n_b, T,
                                   &weights[0], &o[0, 0] if n_a * n_b else NULL, n_threads)
    _check(status, "tree_distance")
    return out


# ---- vectorised logarithm (rank tables) ----

cdef extern from "dfg_log.h":
    int dfg_log_kind() nogil
    void dfg_log_array_kind(int kind, const double *x, double *out, int64_t n) nogil
    void dfg_log_odds_array_kind(int kind, const double *x, double *out, int64_t n) nogil


def log_kind():
    """The vectorised log this CPU runs: 0 baseline, 1 AVX2, 2 AVX-512 (for tests)."""
    return dfg_log_kind()


def log_array(const double[::1] x, bint odds=False):
    """log x, or with odds=True log(x / (1 - x)), by the tables' vectorised kernel (for
    tests). x: positive, finite, normal values (for odds, in (0, 1) with normal odds)."""
    cdef int64_t n = x.shape[0]
    arr = np.asarray(x)
    valid = np.all(arr >= np.finfo(np.float64).tiny) and np.all(np.isfinite(arr))
    if odds:
        valid = valid and np.all(arr < 1.0)
    if n and not valid:
        raise ValueError("log_array needs positive, finite, normal values (below 1 for odds)")
    out = np.empty(n, dtype=np.float64)
    cdef double[::1] o = out
    cdef int kind = dfg_log_kind()
    if n:
        with nogil:
            if odds:
                dfg_log_odds_array_kind(kind, &x[0], &o[0], n)
            else:
                dfg_log_array_kind(kind, &x[0], &o[0], n)
    return out
