#include "dfg_loglik.h"
#include "dfg_cpu.h"
#include "dfg_log.h"
#include "dfg_portable.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* log prod_j (1 - eta_j) from four interleaved running products (one chain of
   multiplications would be latency bound), kept as value * 2^exponent and
   renormalised every 16 factors each; the logarithm is taken once at the end. Factors
   lie in [2^-53, 1] (eta < 1 is a double), so 16 of them cannot underflow, and the
   rounding of the products (one ulp per factor) stays far below the 1e-9
   relative accuracy the kernels promise. */
static inline double renormalise(double value, int64_t *exponent) {
    uint64_t u;
    memcpy(&u, &value, sizeof u);
    *exponent += (int64_t)((u >> 52) & 0x7ff) - 1022; /* value is positive and normal */
    u = (u & ~((uint64_t)0x7ff << 52)) | ((uint64_t)1022 << 52); /* into [0.5, 1) */
    memcpy(&value, &u, sizeof u);
    return value;
}

/* Log-odds of one feature's eta (m values) into w[run[j]], j < m: one log per run
   of equal consecutive values. Consecutive thresholds with no training sample
   between them have identical s columns, hence bit-identical eta (70% of the
   splits of a 100-tree forest). The runs are found without branches (a change
   of value is data dependent and mispredicts) and the logs are then taken in a
   loop of independent iterations. Returns log prod_j (1 - eta_j); value holds m
   scratch values; log_kind is dfg_log_kind(), read once per table build. */
static double feature_log_odds(const double *e, int64_t m, int32_t *run, double *value, double *w,
                               int log_kind) {
    double p0 = 1.0, p1 = 1.0, p2 = 1.0, p3 = 1.0; /* in registers, unlike an indexed array */
    int64_t exponent = 0;
    int64_t n_runs = 0;
    double last = -1.0, smallest = 1.0;
#define DFG_RUN_STEP(jj, prod) do {                    \
        double v_ = e[jj];                             \
        n_runs += v_ != last;                          \
        last = v_;                                     \
        smallest = v_ < smallest ? v_ : smallest;      \
        run[jj] = (int32_t)(n_runs - 1);               \
        value[n_runs - 1] = v_;                        \
        prod *= 1.0 - v_;                              \
    } while (0)
    for (int64_t j0 = 0; j0 < m; j0 += 64) {
        int64_t j1 = j0 + 64 < m ? j0 + 64 : m, j = j0;
        for (; j + 4 <= j1; j += 4) {
            DFG_RUN_STEP(j, p0);
            DFG_RUN_STEP(j + 1, p1);
            DFG_RUN_STEP(j + 2, p2);
            DFG_RUN_STEP(j + 3, p3);
        }
        for (; j < j1; j++) DFG_RUN_STEP(j, p0); /* at most 3, at the very end */
        p0 = renormalise(p0, &exponent);
        p1 = renormalise(p1, &exponent);
        p2 = renormalise(p2, &exponent);
        p3 = renormalise(p3, &exponent);
    }
#undef DFG_RUN_STEP
    /* the odds are at least eta: normal unless some eta is subnormal */
    if (smallest >= DBL_MIN) {
        dfg_log_odds_array_kind(log_kind, value, w, n_runs);
    } else {
        for (int64_t r = 0; r < n_runs; r++) w[r] = log(value[r] / (1.0 - value[r]));
    }
    return (double)exponent * 0.69314718055994530941723212145818
           + ((log(p0) + log(p1)) + (log(p2) + log(p3)));
}

/* Column k of a feature's table block (rows 1..m, stride K): the prefix sums of
   the component's log-odds, w[run[j]] for split j. */
static void prefix_column(const double *w, const int32_t *run, int64_t K, int64_t k, int64_t m,
                          double *block) {
    double a = 0.0;
    for (int64_t j = 0; j < m; j++) {
        a += w[run[j]];
        block[(j + 1) * K + k] = a;
    }
}

/* Columns k0..k0+3 at once: four independent chains of additions kept in
   registers (one chain alone waits on each addition's latency; an array of
   accumulators goes through memory). The same additions in the same order as
   prefix_column. */
static void prefix_columns_4(const double *w, const int32_t *run, int64_t slot, int64_t K,
                             int64_t k0, int64_t m, double *block) {
    const double *w0 = w + k0 * slot, *w1 = w0 + slot, *w2 = w1 + slot, *w3 = w2 + slot;
    const int32_t *r0 = run + k0 * slot, *r1 = r0 + slot, *r2 = r1 + slot, *r3 = r2 + slot;
    double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
    for (int64_t j = 0; j < m; j++) {
        a0 += w0[r0[j]];
        a1 += w1[r1[j]];
        a2 += w2[r2[j]];
        a3 += w3[r3[j]];
        double *row = block + (j + 1) * K + k0;
        row[0] = a0;
        row[1] = a1;
        row[2] = a2;
        row[3] = a3;
    }
}

int dfg_rank_tables(const double *eta, int64_t n_components, int64_t n_splits,
                    const int64_t *feat_ptr, int64_t n_features, const uint8_t *missing_right,
                    double *table, double *base, int n_threads) {
    if (n_components < 0 || n_splits < 0) return DFG_EINVAL;
    for (int64_t j = 0; j < n_components * n_splits; j++)
        if (!(eta[j] > 0.0 && eta[j] < 1.0)) return DFG_EINVAL;
    return dfg_rank_tables_unchecked(eta, n_components, n_splits, feat_ptr, n_features,
                                     missing_right, table, base, n_threads);
}

int dfg_rank_tables_unchecked(const double *eta, int64_t n_components, int64_t n_splits,
                              const int64_t *feat_ptr, int64_t n_features,
                              const uint8_t *missing_right, double *table, double *base,
                              int n_threads) {
    if (n_components < 1 || n_splits < 0 || n_features < 0 || n_threads < 1) return DFG_EINVAL;
    if (feat_ptr[0] != 0 || feat_ptr[n_features] != n_splits) return DFG_EINVAL;
    int64_t max_m = 0;
    for (int64_t d = 0; d < n_features; d++) {
        if (feat_ptr[d + 1] < feat_ptr[d]) return DFG_EINVAL;
        if (feat_ptr[d + 1] - feat_ptr[d] > max_m) max_m = feat_ptr[d + 1] - feat_ptr[d];
    }
    if (max_m > INT32_MAX) return DFG_EINVAL;
    const int64_t K = n_components, D = n_features;
    /* log prod_l (1 - eta_kl) of each feature's splits, summed over features in order */
    double *partial = (double *)malloc((size_t)((D > 0 ? D : 1) * K) * sizeof(double));
    if (!partial) return DFG_ENOMEM;
    int status = DFG_OK;
    /* Features are independent, one task each: the log-odds of each component
       (its runs and their logs), then the feature's block of the table
       ((m_d + 2) x K) written once, row by row, as prefix sums. */
    const int64_t slot = max_m > 0 ? max_m : 1;
    const int log_kind = dfg_log_kind();
    #pragma omp parallel num_threads(dfg_team(n_threads))
    {
        int32_t *run = (int32_t *)malloc((size_t)(K * slot) * sizeof(int32_t));
        double *w = (double *)malloc((size_t)((K + 1) * slot) * sizeof(double));
        if (!run || !w) {
            #pragma omp atomic write
            status = DFG_ENOMEM;
        }
        #pragma omp for schedule(dynamic, 1)
        for (int64_t d = 0; d < D; d++) {
            if (!run || !w) continue;
            const int64_t m = feat_ptr[d + 1] - feat_ptr[d];
            const uint8_t *mr = missing_right ? missing_right + feat_ptr[d] : NULL;
            double *block = table + (feat_ptr[d] + 2 * d) * K;
            double *scratch = w + K * slot;
            for (int64_t k = 0; k < K; k++)
                partial[d * K + k] = feature_log_odds(eta + k * n_splits + feat_ptr[d], m,
                                                      run + k * slot, scratch, w + k * slot,
                                                      log_kind);
            for (int64_t k = 0; k < K; k++) block[k] = 0.0;
            int64_t k0 = 0;
            for (; k0 + 4 <= K; k0 += 4) prefix_columns_4(w, run, slot, K, k0, m, block);
            for (; k0 < K; k0++) prefix_column(w + k0 * slot, run + k0 * slot, K, k0, m, block);
            /* missing rank: the splits sending missing values right, listed first
               (in the scratch of the odds, free again) so that each sum skips the rest */
            double *missing = block + (m + 1) * K;
            int32_t *right = (int32_t *)scratch;
            int64_t n_right = 0;
            for (int64_t j = 0; j < m && mr; j++) {
                right[n_right] = (int32_t)j;
                n_right += mr[j] != 0;
            }
            for (int64_t k = 0; k < K; k++) {
                const double *wk = w + k * slot;
                const int32_t *rk = run + k * slot;
                double sum = 0.0;
                for (int64_t i = 0; i < n_right; i++) sum += wk[rk[right[i]]];
                missing[k] = sum;
            }
        }
        free(run);
        free(w);
    }
    if (status == DFG_OK) {
        for (int64_t k = 0; k < K; k++) base[k] = 0.0;
        for (int64_t d = 0; d < D; d++)
            for (int64_t k = 0; k < K; k++) base[k] += partial[d * K + k];
    }
    free(partial);
    return status;
}

/* out[n - n0] += the table rows at the ranks of rows n0..n1-1, of one, two or four
   features, added in feature order. */
static void add_tables_1(const int32_t *r, const double *t, int64_t K, int64_t n0, int64_t n1,
                         double *out) {
    for (int64_t n = n0; n < n1; n++) {
        const double *a = t + (int64_t)r[n] * K;
        double *o = out + (n - n0) * K;
        for (int64_t k = 0; k < K; k++) o[k] += a[k];
    }
}

static void add_tables_2(const int32_t *const *r, const double *const *t, int64_t K, int64_t n0,
                         int64_t n1, double *out) {
    for (int64_t n = n0; n < n1; n++) {
        const double *a = t[0] + (int64_t)r[0][n] * K, *b = t[1] + (int64_t)r[1][n] * K;
        double *o = out + (n - n0) * K;
        for (int64_t k = 0; k < K; k++) o[k] = (o[k] + a[k]) + b[k];
    }
}

static void add_tables_4(const int32_t *const *r, const double *const *t, int64_t K, int64_t n0,
                         int64_t n1, double *out) {
    for (int64_t n = n0; n < n1; n++) {
        const double *a = t[0] + (int64_t)r[0][n] * K, *b = t[1] + (int64_t)r[1][n] * K;
        const double *c = t[2] + (int64_t)r[2][n] * K, *e = t[3] + (int64_t)r[3][n] * K;
        double *o = out + (n - n0) * K;
        for (int64_t k = 0; k < K; k++) o[k] = (((o[k] + a[k]) + b[k]) + c[k]) + e[k];
    }
}

/* Tables of at most this many bytes together are read in one pass over the rows. */
#define DFG_LOGLIK_GROUP_BYTES (512 * 1024)

/* Features are taken up to four at a time (those with splits; a feature without
   any contributes 0), as long as their tables fit in DFG_LOGLIK_GROUP_BYTES
   together (stay in L2), so that each output row is read and written once per
   group instead of once per table: 6% of a FAB update on the 5,000-row
   benchmark. The additions keep their order, feature by feature, so the sums are
   exactly those of one feature at a time. */
void dfg_loglik_ranks_rows(const int32_t *ranks, int64_t n_samples, int64_t n_features,
                           const int64_t *feat_ptr, const double *table, const double *base,
                           int64_t n_components, int64_t n0, int64_t n1, double *out) {
    const int64_t K = n_components;
    for (int64_t n = n0; n < n1; n++)
        for (int64_t k = 0; k < K; k++) out[(n - n0) * K + k] = base[k];
    int64_t d = 0;
    for (;;) {
        const int32_t *r[4];
        const double *t[4];
        int g = 0;
        int64_t bytes = 0;
        for (; d < n_features && g < 4; d++) {
            const int64_t m = feat_ptr[d + 1] - feat_ptr[d];
            if (m == 0) continue;
            bytes += (m + 2) * K * (int64_t)sizeof(double);
            if (g > 0 && bytes > DFG_LOGLIK_GROUP_BYTES) break; /* d starts the next group */
            r[g] = ranks + d * n_samples;
            t[g] = table + (feat_ptr[d] + 2 * d) * K;
            g++;
        }
        if (g == 0) break;
        if (g == 4) {
            add_tables_4(r, t, K, n0, n1, out);
        } else {
            int i = 0;
            if (g >= 2) { add_tables_2(r, t, K, n0, n1, out); i = 2; }
            for (; i < g; i++) add_tables_1(r[i], t[i], K, n0, n1, out);
        }
    }
}

/* Rows per task of the rank-path likelihood. Each task walks its rows once per
   group of features (dfg_loglik_ranks_rows), so the group's tables ((m_d + 2) x K
   doubles each, about 1 MB for 10,000 thresholds) stay in L2 while the task's
   output rows stream through L3: smaller tasks evict the tables between tasks
   (2,048-row tasks make the 1e6-row benchmark 2.7x slower). No sums cross rows, so the task size does
   not change the results. */
#define DFG_LOGLIK_ROWS 65536

int dfg_loglik_ranks(const int32_t *ranks, int64_t n_samples, int64_t n_features,
                     const int64_t *feat_ptr, const double *table, const double *base,
                     int64_t n_components, double *out, int n_threads) {
    if (n_samples < 0 || n_features < 0 || n_components < 1 || n_threads < 1) return DFG_EINVAL;
    for (int64_t d = 0; d < n_features; d++)
        if (feat_ptr[d + 1] < feat_ptr[d]) return DFG_EINVAL;
    int64_t rows = (n_samples + n_threads - 1) / n_threads;
    if (rows > DFG_LOGLIK_ROWS) rows = DFG_LOGLIK_ROWS;
    if (rows < DFG_BLOCK) rows = DFG_BLOCK;
    int64_t n_tasks = (n_samples + rows - 1) / rows;
    #pragma omp parallel for schedule(dynamic, 1) num_threads(dfg_team(n_threads))
    for (int64_t b = 0; b < n_tasks; b++) {
        int64_t n0 = b * rows;
        int64_t n1 = n0 + rows < n_samples ? n0 + rows : n_samples;
        dfg_loglik_ranks_rows(ranks, n_samples, n_features, feat_ptr, table, base,
                              n_components, n0, n1, out + n0 * n_components);
    }
    return DFG_OK;
}

/* Per-component decomposition of the splits for the bit path. */
typedef struct {
    uint64_t *low;   /* eta == eps: a mismatch is s_l = 1 */
    uint64_t *high;  /* eta == 1 - eps: a mismatch is s_l = 0 */
    uint64_t *free_; /* all other splits */
    const double *w;  /* log eta - log(1 - eta), per split */
    double constant; /* sum of log(1 - eta) over free splits + clamp constants */
    double low_step, high_step; /* added per mismatch */
} bit_component;

DFG_ALWAYS_INLINE void loglik_bits_impl(const uint64_t *S, int64_t n_samples, int64_t n_words,
                                        int64_t K, const bit_component *comp, double *out, int n_threads) {
    (void)n_threads; /* used only by the OpenMP pragma */
    #pragma omp parallel for schedule(static) num_threads(dfg_team(n_threads))
    for (int64_t n = 0; n < n_samples; n++) {
        const uint64_t *s = S + n * n_words;
        for (int64_t k = 0; k < K; k++) {
            const bit_component *c = comp + k;
            int64_t low_mismatch = 0, high_mismatch = 0;
            double acc = 0.0;
            for (int64_t w = 0; w < n_words; w++) {
                low_mismatch += dfg_popcount64(s[w] & c->low[w]);
                high_mismatch += dfg_popcount64(~s[w] & c->high[w]);
                uint64_t bits = s[w] & c->free_[w];
                while (bits) {
                    int64_t l = w * 64 + dfg_ctz64(bits);
                    acc += c->w[l];
                    bits &= bits - 1;
                }
            }
            out[n * K + k] = c->constant + (double)low_mismatch * c->low_step
                             + (double)high_mismatch * c->high_step + acc;
        }
    }
}

#if DFG_X86_DISPATCH
DFG_TARGET_POPCNT static void loglik_bits_hw(const uint64_t *S, int64_t n_samples, int64_t n_words,
                                             int64_t K, const bit_component *comp, double *out, int n_threads) {
    loglik_bits_impl(S, n_samples, n_words, K, comp, out, n_threads);
}
#endif

static void loglik_bits_generic(const uint64_t *S, int64_t n_samples, int64_t n_words,
                                int64_t K, const bit_component *comp, double *out, int n_threads) {
    loglik_bits_impl(S, n_samples, n_words, K, comp, out, n_threads);
}

int dfg_loglik_bits(const uint64_t *S, int64_t n_samples, int64_t n_splits,
                    const double *eta, int64_t n_components, double eps,
                    double *out, int n_threads) {
    if (n_samples < 0 || n_splits < 0 || n_components < 1 || n_threads < 1) return DFG_EINVAL;
    if (!(eps > 0.0 && eps < 0.5)) return DFG_EINVAL;
    const int64_t K = n_components, n_words = dfg_n_words(n_splits);
    const double lo = eps, hi = 1.0 - eps;
    bit_component *comp = (bit_component *)calloc((size_t)K, sizeof(bit_component));
    uint64_t *masks = (uint64_t *)calloc((size_t)(3 * K * (n_words > 0 ? n_words : 1)), sizeof(uint64_t));
    double *w = (double *)malloc((size_t)(K * (n_splits > 0 ? n_splits : 1)) * sizeof(double));
    if (!comp || !masks || !w) { free(comp); free(masks); free(w); return DFG_ENOMEM; }
    int status = DFG_OK;
    for (int64_t k = 0; k < K && status == DFG_OK; k++) {
        bit_component *c = comp + k;
        c->low = masks + (3 * k) * n_words;
        c->high = masks + (3 * k + 1) * n_words;
        c->free_ = masks + (3 * k + 2) * n_words;
        c->w = w + k * n_splits;
        c->low_step = log(lo) - log1p(-lo);
        c->high_step = log1p(-hi) - log(hi);
        int64_t n_low = 0, n_high = 0;
        double free_base = 0.0;
        for (int64_t l = 0; l < n_splits; l++) {
            double v = eta[k * n_splits + l];
            if (!(v > 0.0 && v < 1.0)) { status = DFG_EINVAL; break; }
            uint64_t bit = (uint64_t)1 << (l & 63);
            if (v == lo) { c->low[l >> 6] |= bit; n_low++; }
            else if (v == hi) { c->high[l >> 6] |= bit; n_high++; }
            else { c->free_[l >> 6] |= bit; free_base += log1p(-v); }
            w[k * n_splits + l] = log(v) - log1p(-v);
        }
        /* A match costs log(1 - eps) on a low split and log(hi) on a high one. */
        c->constant = free_base + (double)n_low * log1p(-lo) + (double)n_high * log(hi);
    }
    if (status == DFG_OK) {
#if DFG_X86_DISPATCH
        if (dfg_cpu_has_popcnt())
            loglik_bits_hw(S, n_samples, n_words, K, comp, out, n_threads);
        else
#endif
            loglik_bits_generic(S, n_samples, n_words, K, comp, out, n_threads);
    }
    free(comp);
    free(masks);
    free(w);
    return status;
}
