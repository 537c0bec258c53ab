#include "dfg_list_search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dfg_cpu.h"
#include "dfg_portable.h"

/* Multiply-adds below which a sum of literals runs on one thread. */
#define LS_PAR_WORK 262144
/* Literals per thread's share of a sum (a share is summed by one thread, in row order). */
#define LS_CHUNK DFG_LIST_CHUNK

enum { MOVE_ADD = 0, MOVE_DROP = 1, MOVE_POLISH = 2 };

typedef struct {
    int has;
    double score, gain;
    int64_t len; /* the length of the box the move gives */
    int kind;
    int64_t pos; /* drop / polish: the box position */
    int64_t lit; /* add / polish: the new literal */
} move;

typedef struct {
    /* the problem */
    const uint8_t *S;
    const double *T;
    int64_t n, L, d, W, L2; /* W = d + 1 (the count last); L2 = 2 L */
    int64_t *feat;           /* dense feature id of each literal */
    int64_t n_feat;
    int64_t *gord, *glo, *ghi; /* literals by (group, literal); literal j's group: gord[glo[j] .. ghi[j]) */
    /* parameters */
    double cost_power, price, tol, min_support;
    int gain_only; /* cost_power 0 and no price per condition: a score is its gain */
    int64_t max_moves;
    int n_threads;
    int avx2; /* the AVX2 build of the sums runs */
    const volatile int *stop;
    /* the rows left, their literals' sums (acc[k L + l]: sum of T[., k] (k = d: 1) over the
       rows with s_l = 1) and totals */
    uint8_t *lmask;
    double *lacc, *ltot;
    int64_t lcount;
    /* the region of the current box in left, and its sums */
    uint8_t *rmask;
    double *racc, *rtot;
    /* the step's left: sums, mean, penalty */
    double *sL, *mL;
    double cL, lam;
    /* scratch */
    uint8_t *nmask;
    int64_t *rows_a, *rows_b, *one, *which, *one_i;
    int64_t n_one;
    double *gain2, *score2, *vec, *sR, *extra, *etot, *gacc, *gbuf;
    int64_t *gcol;
    int64_t *fcount;
    int64_t box_cap;
    int64_t *box_tmp;
} ls_ctx;


/* The gain of a region (sR, cR) inside the step's left. */
static double gain_of(const ls_ctx *c, const double *sR, double cR) {
    if (!(cR >= c->min_support && c->cL - cR >= 1.0)) return -INFINITY;
    if (!(cR > 0.0)) return 0.0;
    for (int64_t k = 0; k < c->d; k++) c->vec[k] = sR[k] - cR * c->mL[k];
    return dfg_sumsq_np(c->vec, c->d) / (cR > 1.0 ? cR : 1.0);
}

static double cost_pow(double cost, double p) {
    if (p == 1.0) return cost;
    if (p == 0.0) return 1.0;
    if (p == 2.0) return cost * cost;
    if (p == 0.5) return sqrt(cost);
    return pow(cost, p);
}

static double score_of(const ls_ctx *c, double gain, double cost) {
    if (c->gain_only) return gain; /* gain / 1 - 0 * cost: the same double */
    if (cost < 1.0) cost = 1.0;
    return gain / cost_pow(cost, c->cost_power) - c->lam * cost;
}

/* Distinct features of a box, at least 1. */
static double box_cost(ls_ctx *c, const int64_t *box, int64_t len) {
    int64_t k = 0;
    for (int64_t i = 0; i < len; i++)
        if (c->fcount[c->feat[box[i]]]++ == 0) k++;
    for (int64_t i = 0; i < len; i++) c->fcount[c->feat[box[i]]] = 0;
    return (double)(k > 1 ? k : 1);
}

/* acc[k L + l] (+/-)= s_l T[r, k] (k = d: 1) for the literals l0 .. l0 + m - 1, over rows
 * in order. Rows go four at a time, their s converted once; a target that is 0 on all
 * four rows is skipped (adding s * 0 leaves a sum as it is: a sum of products is never
 * -0). One body for the baseline and the AVX2 build (the same operations, lane by lane). */
DFG_ALWAYS_INLINE void accumulate_share(const uint8_t *S, const double *T, int64_t L, int64_t d,
                                        const int64_t *rows, int64_t nr, double sign, double *acc, int64_t l0,
                                        int64_t m) {
    const int64_t W = d + 1;
    double b0[DFG_LIST_CHUNK], b1[DFG_LIST_CHUNK], b2[DFG_LIST_CHUNK], b3[DFG_LIST_CHUNK];
    int64_t i = 0;
    for (; i + 4 <= nr; i += 4) {
        const uint8_t *s0 = S + rows[i] * L + l0, *s1 = S + rows[i + 1] * L + l0;
        const uint8_t *s2 = S + rows[i + 2] * L + l0, *s3 = S + rows[i + 3] * L + l0;
        const double *u0 = T + rows[i] * d, *u1 = T + rows[i + 1] * d;
        const double *u2 = T + rows[i + 2] * d, *u3 = T + rows[i + 3] * d;
        for (int64_t l = 0; l < m; l++) {
            b0[l] = (double)s0[l];
            b1[l] = (double)s1[l];
            b2[l] = (double)s2[l];
            b3[l] = (double)s3[l];
        }
        for (int64_t k = 0; k < W; k++) {
            const double t0 = k < d ? sign * u0[k] : sign, t1 = k < d ? sign * u1[k] : sign;
            const double t2 = k < d ? sign * u2[k] : sign, t3 = k < d ? sign * u3[k] : sign;
            if (t0 == 0.0 && t1 == 0.0 && t2 == 0.0 && t3 == 0.0) continue;
            double *a = acc + k * L + l0;
            for (int64_t l = 0; l < m; l++) {
                double v = a[l];
                v = v + b0[l] * t0;
                v = v + b1[l] * t1;
                v = v + b2[l] * t2;
                v = v + b3[l] * t3;
                a[l] = v;
            }
        }
    }
    for (; i < nr; i++) {
        const uint8_t *s0 = S + rows[i] * L + l0;
        const double *u0 = T + rows[i] * d;
        for (int64_t l = 0; l < m; l++) b0[l] = (double)s0[l];
        for (int64_t k = 0; k < W; k++) {
            const double t0 = k < d ? sign * u0[k] : sign;
            if (t0 == 0.0) continue;
            double *a = acc + k * L + l0;
            for (int64_t l = 0; l < m; l++) a[l] = a[l] + b0[l] * t0;
        }
    }
}

static void accumulate_share_base(const uint8_t *S, const double *T, int64_t L, int64_t d, const int64_t *rows,
                                  int64_t nr, double sign, double *acc, int64_t l0, int64_t m) {
    accumulate_share(S, T, L, d, rows, nr, sign, acc, l0, m);
}

#if DFG_X86_DISPATCH
DFG_TARGET("avx2") static void accumulate_share_avx2(const uint8_t *S, const double *T, int64_t L, int64_t d,
                                                     const int64_t *rows, int64_t nr, double sign, double *acc,
                                                     int64_t l0, int64_t m) {
    accumulate_share(S, T, L, d, rows, nr, sign, acc, l0, m);
}
#endif

void dfg_list_literal_sums(const uint8_t *S, const double *T, int64_t L, int64_t d, const int64_t *rows,
                           int64_t nr, double sign, double *acc, int64_t l0, int64_t m, int avx2) {
#if DFG_X86_DISPATCH
    if (avx2) {
        accumulate_share_avx2(S, T, L, d, rows, nr, sign, acc, l0, m);
        return;
    }
#endif
    (void)avx2;
    accumulate_share_base(S, T, L, d, rows, nr, sign, acc, l0, m);
}

/* accumulate_share over the literals of chunk ch. */
static void accumulate_chunk(const ls_ctx *c, const int64_t *rows, int64_t nr, double sign, double *acc,
                             int64_t ch) {
    const int64_t l0 = ch * LS_CHUNK, m = l0 + LS_CHUNK < c->L ? LS_CHUNK : c->L - l0;
    dfg_list_literal_sums(c->S, c->T, c->L, c->d, rows, nr, sign, acc, l0, m, c->avx2);
}

/* acc[k L + l] (+/-)= s_l T[r, k] (k = d: 1) and tot[k] likewise, over rows in order; the
 * literals shared among the threads in fixed shares, each summed by one thread. */
static void accumulate(const ls_ctx *c, const int64_t *rows, int64_t nr, int subtract, double *acc,
                       double *tot) {
    const int64_t L = c->L, d = c->d, W = c->W;
    const double sign = subtract ? -1.0 : 1.0;
    const int64_t n_chunks = (L + LS_CHUNK - 1) / LS_CHUNK;
    const int par = c->n_threads > 1 && n_chunks > 1 && (double)nr * (double)L * (double)W >= LS_PAR_WORK;
    if (par) {
        #pragma omp parallel for schedule(static) num_threads(dfg_team(c->n_threads))
        for (int64_t ch = 0; ch < n_chunks; ch++) accumulate_chunk(c, rows, nr, sign, acc, ch);
    } else { /* (not a parallel region of one thread: its start costs more than small sums) */
        for (int64_t ch = 0; ch < n_chunks; ch++) accumulate_chunk(c, rows, nr, sign, acc, ch);
    }
    for (int64_t i = 0; i < nr; i++) {
        for (int64_t k = 0; k < d; k++) tot[k] = tot[k] + sign * c->T[rows[i] * d + k];
        tot[d] = tot[d] + sign;
    }
}

/* gacc[k G + p] += s_{cols[p]} T[r, k] (k = d: 1) over rows in order, four rows at a time
 * (their s gathered and converted once; targets 0 on all four rows skipped, as in
 * accumulate_share). b: 4 G doubles of scratch. */
DFG_ALWAYS_INLINE void group_share(const ls_ctx *c, const int64_t *rows, int64_t nr, const int64_t *cols,
                                   int64_t G, double *gacc, double *b) {
    const int64_t L = c->L, d = c->d, W = c->W;
    double *b0 = b, *b1 = b + G, *b2 = b + 2 * G, *b3 = b + 3 * G;
    int64_t i = 0;
    for (; i + 4 <= nr; i += 4) {
        const uint8_t *s0 = c->S + rows[i] * L, *s1 = c->S + rows[i + 1] * L;
        const uint8_t *s2 = c->S + rows[i + 2] * L, *s3 = c->S + rows[i + 3] * L;
        const double *u0 = c->T + rows[i] * d, *u1 = c->T + rows[i + 1] * d;
        const double *u2 = c->T + rows[i + 2] * d, *u3 = c->T + rows[i + 3] * d;
        for (int64_t p = 0; p < G; p++) {
            b0[p] = (double)s0[cols[p]];
            b1[p] = (double)s1[cols[p]];
            b2[p] = (double)s2[cols[p]];
            b3[p] = (double)s3[cols[p]];
        }
        for (int64_t k = 0; k < W; k++) {
            const double t0 = k < d ? u0[k] : 1.0, t1 = k < d ? u1[k] : 1.0;
            const double t2 = k < d ? u2[k] : 1.0, t3 = k < d ? u3[k] : 1.0;
            if (t0 == 0.0 && t1 == 0.0 && t2 == 0.0 && t3 == 0.0) continue;
            double *a = gacc + k * G;
            for (int64_t p = 0; p < G; p++) {
                double v = a[p];
                v = v + b0[p] * t0;
                v = v + b1[p] * t1;
                v = v + b2[p] * t2;
                v = v + b3[p] * t3;
                a[p] = v;
            }
        }
    }
    for (; i < nr; i++) {
        const uint8_t *s0 = c->S + rows[i] * L;
        const double *u0 = c->T + rows[i] * d;
        for (int64_t p = 0; p < G; p++) b0[p] = (double)s0[cols[p]];
        for (int64_t k = 0; k < W; k++) {
            const double t0 = k < d ? u0[k] : 1.0;
            if (t0 == 0.0) continue;
            double *a = gacc + k * G;
            for (int64_t p = 0; p < G; p++) a[p] = a[p] + b0[p] * t0;
        }
    }
}

static void group_share_base(const ls_ctx *c, const int64_t *rows, int64_t nr, const int64_t *cols, int64_t G,
                             double *gacc, double *b) {
    group_share(c, rows, nr, cols, G, gacc, b);
}

#if DFG_X86_DISPATCH
DFG_TARGET("avx2") static void group_share_avx2(const ls_ctx *c, const int64_t *rows, int64_t nr,
                                                const int64_t *cols, int64_t G, double *gacc, double *b) {
    group_share(c, rows, nr, cols, G, gacc, b);
}
#endif

/* Moves the region's sums (rmask, racc, rtot) to the rows of nmask, a subset of left:
 * by the rows that joined and left, from left's sums, or anew, whichever reads fewest rows. */
static void set_region(ls_ctx *c) {
    const int64_t n = c->n, W = c->W, L = c->L;
    int64_t n_new = 0, n_add = 0, n_rem = 0, n_lrem = 0;
    for (int64_t r = 0; r < n; r++) {
        const int nm = c->nmask[r], om = c->rmask[r];
        n_new += nm;
        n_add += nm && !om;
        n_rem += om && !nm;
        n_lrem += c->lmask[r] && !nm;
    }
    if (n_add + n_rem <= n_lrem && n_add + n_rem <= n_new) {
        if (n_add + n_rem > 0) {
            int64_t na = 0, nr = 0;
            for (int64_t r = 0; r < n; r++) {
                if (c->nmask[r] && !c->rmask[r]) c->rows_a[na++] = r;
                if (c->rmask[r] && !c->nmask[r]) c->rows_b[nr++] = r;
            }
            accumulate(c, c->rows_a, na, 0, c->racc, c->rtot);
            accumulate(c, c->rows_b, nr, 1, c->racc, c->rtot);
        }
    } else if (n_lrem <= n_new) {
        int64_t nr = 0;
        memcpy(c->racc, c->lacc, (size_t)(W * L) * sizeof(double));
        memcpy(c->rtot, c->ltot, (size_t)W * sizeof(double));
        for (int64_t r = 0; r < n; r++)
            if (c->lmask[r] && !c->nmask[r]) c->rows_b[nr++] = r;
        accumulate(c, c->rows_b, nr, 1, c->racc, c->rtot);
    } else {
        int64_t na = 0;
        memset(c->racc, 0, (size_t)(W * L) * sizeof(double));
        memset(c->rtot, 0, (size_t)W * sizeof(double));
        for (int64_t r = 0; r < n; r++)
            if (c->nmask[r]) c->rows_a[na++] = r;
        accumulate(c, c->rows_a, na, 0, c->racc, c->rtot);
    }
    memcpy(c->rmask, c->nmask, (size_t)n);
}

/* The box's region in left (nmask) and the rows of left failing exactly one literal
 * (one, with the position of that literal in which). */
static void leave_one_out(ls_ctx *c, const int64_t *box, int64_t len) {
    const int64_t L = c->L;
    c->n_one = 0;
    for (int64_t r = 0; r < c->n; r++) {
        c->nmask[r] = 0;
        if (!c->lmask[r]) continue;
        const uint8_t *srow = c->S + r * L;
        int64_t fails = 0, first = -1;
        for (int64_t i = 0; i < len && fails < 2; i++) {
            if (!dfg_literal_holds(srow, box[i], L)) {
                if (fails == 0) first = i;
                fails++;
            }
        }
        if (fails == 0) {
            c->nmask[r] = 1;
        } else if (fails == 1) {
            c->one[c->n_one] = r;
            c->which[c->n_one++] = first;
        }
    }
}

/* Keeps m if it is the first move with the largest (score, -len). */
static void offer(move *best, const move *m) {
    if (!best->has || m->score > best->score || (m->score == best->score && m->len < best->len)) {
        *best = *m;
        best->has = 1;
    }
}

/* The sums (sR, *cR) of literal j over the region, from right sums acc (column l) and totals. */
static void literal_sums(const ls_ctx *c, int64_t j, const double *right, double rc,
                         const double *tot, double *sR, double *cR) {
    if (j < c->L) {
        for (int64_t k = 0; k < c->d; k++) sR[k] = right[k];
        *cR = rc;
    } else {
        for (int64_t k = 0; k < c->d; k++) sR[k] = tot[k] - right[k];
        *cR = tot[c->d] - rc;
    }
}

/* The best add move and every drop move of the box (region sums current). */
static void add_and_drop_moves(ls_ctx *c, const int64_t *box, int64_t len, move *best) {
    const int64_t L = c->L, d = c->d, W = c->W;
    int64_t named = 0;
    for (int64_t i = 0; i < len; i++)
        if (c->fcount[c->feat[box[i]]]++ == 0) named++;
    if (d == 1 && c->gain_only) {
        /* one target, a score that is the gain (the default in regression): gain_of's
         * arithmetic inline, the same doubles (a one-term sum of squares is x * x) */
        const double *sum = c->racc, *count = c->racc + L, s_all = c->rtot[0], c_all = c->rtot[1];
        const double mean = c->mL[0], cL = c->cL, min_support = c->min_support;
        for (int64_t j = 0; j < c->L2; j++) {
            const int64_t l = j < L ? j : j - L;
            const double sR = j < L ? sum[l] : s_all - sum[l];
            const double cR = j < L ? count[l] : c_all - count[l];
            double g;
            if (!(cR >= min_support && cL - cR >= 1.0))
                g = -INFINITY;
            else if (!(cR > 0.0))
                g = 0.0;
            else {
                const double v = sR - cR * mean;
                g = v * v / (cR > 1.0 ? cR : 1.0);
            }
            c->gain2[j] = c->score2[j] = g;
        }
    } else {
        for (int64_t j = 0; j < c->L2; j++) {
            const int64_t l = j < L ? j : j - L;
            double cR;
            for (int64_t k = 0; k < d; k++) c->etot[k] = c->racc[k * L + l]; /* the right sums */
            literal_sums(c, j, c->etot, c->racc[d * L + l], c->rtot, c->sR, &cR);
            const double g = gain_of(c, c->sR, cR);
            c->gain2[j] = g;
            c->score2[j] = c->gain_only ? g : score_of(c, g, (double)(named + (c->fcount[c->feat[j]] == 0)));
        }
    }
    for (int64_t i = 0; i < len; i++) c->fcount[c->feat[box[i]]] = 0;
    for (int64_t i = 0; i < len; i++) c->score2[box[i]] = -INFINITY;
    int64_t jb = 0;
    for (int64_t j = 1; j < c->L2; j++)
        if (c->score2[j] > c->score2[jb]) jb = j;
    if (c->L2 > 0 && isfinite(c->score2[jb])) {
        move m = {1, c->score2[jb], c->gain2[jb], len + 1, MOVE_ADD, -1, jb};
        offer(best, &m);
    }
    if (len > 1) { /* the rows failing only literal i join the region without it */
        memset(c->extra, 0, (size_t)(len * W) * sizeof(double));
        for (int64_t q = 0; q < c->n_one; q++) {
            double *e = c->extra + c->which[q] * W;
            const double *t = c->T + c->one[q] * d;
            for (int64_t k = 0; k < d; k++) e[k] = e[k] + t[k];
            e[d] = e[d] + 1.0;
        }
        for (int64_t i = 0; i < len; i++) {
            for (int64_t k = 0; k < d; k++) c->sR[k] = c->rtot[k] + c->extra[i * W + k];
            const double cR = c->rtot[d] + c->extra[i * W + d];
            const double g = gain_of(c, c->sR, cR);
            int64_t m_len = 0;
            for (int64_t p = 0; p < len; p++)
                if (p != i) c->box_tmp[m_len++] = box[p];
            move m = {1, score_of(c, g, box_cost(c, c->box_tmp, m_len)), g, len - 1, MOVE_DROP, i, -1};
            offer(best, &m);
        }
    }
}

/* Each literal moved to the literal of best gain in its group (region sums current). */
static void polish_moves(ls_ctx *c, const int64_t *box, int64_t len, move *best) {
    const int64_t L = c->L, d = c->d, W = c->W;
    for (int64_t i = 0; i < len; i++) {
        const int64_t j = box[i], lo = c->glo[j], hi = c->ghi[j];
        if (hi - lo < 2) continue;
        int64_t n_i = 0; /* the rows that only literal i keeps out */
        for (int64_t q = 0; q < c->n_one; q++)
            if (c->which[q] == i) c->one_i[n_i++] = c->one[q];
        for (int64_t k = 0; k < W; k++) c->etot[k] = c->rtot[k];
        for (int64_t q = 0; q < n_i; q++) {
            const double *t = c->T + c->one_i[q] * d;
            for (int64_t k = 0; k < d; k++) c->etot[k] = c->etot[k] + t[k];
            c->etot[d] = c->etot[d] + 1.0;
        }
        /* the group's right sums over the region and those rows (gacc[k G + p]) */
        const int64_t G = hi - lo;
        for (int64_t p = 0; p < G; p++) {
            const int64_t g_lit = c->gord[lo + p], l = g_lit < L ? g_lit : g_lit - L;
            c->gcol[p] = l;
            for (int64_t k = 0; k < W; k++) c->gacc[k * G + p] = c->racc[k * L + l];
        }
#if DFG_X86_DISPATCH
        if (c->avx2)
            group_share_avx2(c, c->one_i, n_i, c->gcol, G, c->gacc, c->gbuf);
        else
#endif
            group_share_base(c, c->one_i, n_i, c->gcol, G, c->gacc, c->gbuf);
        double gbest = -INFINITY;
        int64_t pbest = lo;
        for (int64_t p = lo; p < hi; p++) {
            const int64_t g_lit = c->gord[p];
            double *right = c->extra; /* W doubles of scratch */
            for (int64_t k = 0; k < W; k++) right[k] = c->gacc[k * G + (p - lo)];
            double cR;
            literal_sums(c, g_lit, right, right[d], c->etot, c->sR, &cR);
            const double g = gain_of(c, c->sR, cR);
            if (p == lo || g > gbest) {
                gbest = g;
                pbest = p;
            }
        }
        if (isfinite(gbest) && c->gord[pbest] != j) {
            memcpy(c->box_tmp, box, (size_t)len * sizeof(int64_t));
            c->box_tmp[i] = c->gord[pbest];
            move m = {1, score_of(c, gbest, box_cost(c, c->box_tmp, len)), gbest, len, MOVE_POLISH, i,
                      c->gord[pbest]};
            offer(best, &m);
        }
    }
}

static int better(const move *m, double score, double tol, int64_t len) {
    return m->has && (m->score > score + tol || (m->score >= score - tol && m->len < len));
}

/* The box after its best moves (box: box_cap entries, *len in and out). */
static int refine(ls_ctx *c, int64_t *box, int64_t *len_io, double *gain_out, double *score_out) {
    int64_t len = *len_io;
    leave_one_out(c, box, len);
    set_region(c);
    double gain = len ? gain_of(c, c->rtot, c->rtot[c->d]) : -INFINITY;
    double score = len ? score_of(c, gain, box_cost(c, box, len)) : -INFINITY;
    for (int64_t it = 0; it < c->max_moves; it++) {
        if (dfg_stop_requested(c->stop)) return DFG_EINTERRUPTED;
        if (it > 0) {
            leave_one_out(c, box, len);
            set_region(c);
        }
        move best = {0, 0.0, 0.0, 0, 0, -1, -1};
        add_and_drop_moves(c, box, len, &best);
        if (!better(&best, score, c->tol, len)) {
            best.has = 0;
            polish_moves(c, box, len, &best);
            if (!better(&best, score, c->tol, len)) break;
        }
        score = best.score;
        gain = best.gain;
        if (best.kind == MOVE_ADD) {
            if (len >= c->box_cap) return DFG_EINVAL; /* cannot happen: box_cap bounds it */
            box[len++] = best.lit;
        } else if (best.kind == MOVE_DROP) {
            memmove(box + best.pos, box + best.pos + 1, (size_t)(len - best.pos - 1) * sizeof(int64_t));
            len--;
        } else {
            box[best.pos] = best.lit;
        }
    }
    *len_io = len;
    *gain_out = gain;
    *score_out = score;
    return DFG_OK;
}

typedef struct {
    int64_t key, idx;
} keyed;

static int cmp_keyed(const void *a, const void *b) {
    const keyed *p = (const keyed *)a, *q = (const keyed *)b;
    if (p->key != q->key) return p->key < q->key ? -1 : 1;
    return (p->idx > q->idx) - (p->idx < q->idx);
}

static int cmp_int64(const void *a, const void *b) {
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* kv (its idx ascending) sorted by (key, idx): a counting sort where the keys span few
 * values (feature ids, group ids: the usual case), qsort otherwise; the same order. */
static int sort_keyed(keyed *kv, int64_t m) {
    if (m < 2) return DFG_OK;
    int64_t lo = kv[0].key, hi = kv[0].key;
    for (int64_t p = 1; p < m; p++) {
        if (kv[p].key < lo) lo = kv[p].key;
        if (kv[p].key > hi) hi = kv[p].key;
    }
    if ((double)hi - (double)lo > 4.0 * (double)m + 64.0) { /* (in double: no overflow) */
        qsort(kv, (size_t)m, sizeof(keyed), cmp_keyed);
        return DFG_OK;
    }
    const int64_t span = hi - lo + 1;
    int64_t *start = (int64_t *)calloc((size_t)span + 1, sizeof(int64_t));
    keyed *out = (keyed *)malloc((size_t)m * sizeof(keyed));
    if (!start || !out) {
        free(start);
        free(out);
        return DFG_ENOMEM;
    }
    for (int64_t p = 0; p < m; p++) start[kv[p].key - lo + 1]++;
    for (int64_t v = 0; v < span; v++) start[v + 1] += start[v];
    for (int64_t p = 0; p < m; p++) out[start[kv[p].key - lo]++] = kv[p]; /* stable: idx ascending */
    memcpy(kv, out, (size_t)m * sizeof(keyed));
    free(start);
    free(out);
    return DFG_OK;
}

/* Dense feature ids and the groups' literal lists. */
static int index_literals(ls_ctx *c, const int64_t *literal_feature, const int64_t *literal_group) {
    const int64_t L2 = c->L2;
    keyed *kv = (keyed *)malloc((size_t)(L2 > 0 ? L2 : 1) * sizeof(keyed));
    if (!kv) return DFG_ENOMEM;
    for (int64_t j = 0; j < L2; j++) {
        kv[j].key = literal_feature[j];
        kv[j].idx = j;
    }
    if (sort_keyed(kv, L2) != DFG_OK) {
        free(kv);
        return DFG_ENOMEM;
    }
    c->n_feat = 0;
    for (int64_t p = 0; p < L2; p++) {
        if (p > 0 && kv[p].key != kv[p - 1].key) c->n_feat++;
        c->feat[kv[p].idx] = c->n_feat;
    }
    if (L2 > 0) c->n_feat++;
    for (int64_t j = 0; j < L2; j++) {
        kv[j].key = literal_group[j];
        kv[j].idx = j;
    }
    if (sort_keyed(kv, L2) != DFG_OK) {
        free(kv);
        return DFG_ENOMEM;
    }
    for (int64_t p = 0; p < L2;) {
        int64_t q = p;
        while (q < L2 && kv[q].key == kv[p].key) q++;
        for (int64_t u = p; u < q; u++) {
            c->gord[u] = kv[u].idx;
            c->glo[kv[u].idx] = p;
            c->ghi[kv[u].idx] = q;
        }
        p = q;
    }
    free(kv);
    return DFG_OK;
}

int dfg_list_search_box_bound(const int64_t *cand_ptr, int64_t n_candidates, int64_t max_moves,
                              int64_t *bound) {
    if (!cand_ptr || !bound || n_candidates < 0 || max_moves < 0 || cand_ptr[0] != 0) return DFG_EINVAL;
    int64_t longest = 0;
    for (int64_t m = 0; m < n_candidates; m++) {
        if (cand_ptr[m + 1] < cand_ptr[m]) return DFG_EINVAL;
        if (cand_ptr[m + 1] - cand_ptr[m] > longest) longest = cand_ptr[m + 1] - cand_ptr[m];
    }
    if (longest > INT64_MAX - max_moves - 1) return DFG_EINVAL;
    *bound = longest + max_moves;
    return DFG_OK;
}

/* Sums of left (lmask, lacc, ltot, lcount) anew. */
static void left_sums(ls_ctx *c) {
    int64_t na = 0;
    memset(c->lacc, 0, (size_t)(c->W * c->L) * sizeof(double));
    memset(c->ltot, 0, (size_t)c->W * sizeof(double));
    for (int64_t r = 0; r < c->n; r++)
        if (c->lmask[r]) c->rows_a[na++] = r;
    accumulate(c, c->rows_a, na, 0, c->lacc, c->ltot);
    c->lcount = na;
}

/* The rows of box leave left (sums updated by the rows that left, or anew). */
static void take_rows(ls_ctx *c, const int64_t *box, int64_t len) {
    int64_t nr = 0;
    for (int64_t r = 0; r < c->n; r++) {
        if (!c->lmask[r]) continue;
        const uint8_t *srow = c->S + r * c->L;
        int64_t i = 0;
        while (i < len && dfg_literal_holds(srow, box[i], c->L)) i++;
        if (i == len) c->rows_b[nr++] = r;
    }
    for (int64_t q = 0; q < nr; q++) c->lmask[c->rows_b[q]] = 0;
    if (nr <= c->lcount - nr) {
        accumulate(c, c->rows_b, nr, 1, c->lacc, c->ltot);
        c->lcount -= nr;
    } else {
        left_sums(c);
    }
}

static int check_inputs(const uint8_t *S, const double *T, int64_t n, int64_t L, int64_t d,
                        const int64_t *literal_feature, const int64_t *literal_group,
                        const int64_t *cand_ptr, const int64_t *cand_literals, int64_t n_candidates,
                        const dfg_list_params *p, const int64_t *box_ptr, const int64_t *box_literals,
                        int64_t capacity, const int64_t *n_boxes, int n_threads) {
    if (!p || !n_boxes || !box_ptr || !cand_ptr || n < 0 || L < 0 || d < 0 || n_candidates < 0 ||
        capacity < 0 || n_threads < 1)
        return DFG_EINVAL;
    if (p->max_rules < 0 || p->max_moves < 0 || p->n_starts < 0 || !isfinite(p->cost_power) ||
        !isfinite(p->condition_price) || !isfinite(p->rel_tol) || p->rel_tol < 0.0)
        return DFG_EINVAL;
    if (L > INT64_MAX / 4 || (L > 0 && n > INT64_MAX / 8 / L) || (d > 0 && n > INT64_MAX / 8 / d) ||
        d > INT64_MAX / 8 - 1 || (L > 0 && d + 1 > INT64_MAX / 8 / L) || p->max_rules > INT64_MAX - 1)
        return DFG_EINVAL;
    if ((n * L > 0 && !S) || (n * d > 0 && !T) || (L > 0 && (!literal_feature || !literal_group)) ||
        (capacity > 0 && !box_literals))
        return DFG_EINVAL;
    uint8_t bits = 0; /* every entry 0 or 1: their OR is */
    for (int64_t i = 0; i < n * L; i++) bits |= S[i];
    if (bits > 1) return DFG_EINVAL;
    for (int64_t i = 0; i < n * d; i++)
        if (!isfinite(T[i])) return DFG_EINVAL;
    for (int64_t j = 0; j < 2 * L; j++)
        if (literal_feature[j] < 0) return DFG_EINVAL;
    int64_t bound;
    if (dfg_list_search_box_bound(cand_ptr, n_candidates, p->max_moves, &bound) != DFG_OK) return DFG_EINVAL;
    if (cand_ptr[n_candidates] > 0 && !cand_literals) return DFG_EINVAL;
    for (int64_t q = 0; q < cand_ptr[n_candidates]; q++)
        if (cand_literals[q] < 0 || cand_literals[q] >= 2 * L) return DFG_EINVAL;
    if (p->max_rules > 0 && bound > capacity / p->max_rules) return DFG_EINVAL;
    return DFG_OK;
}

static void free_ctx(ls_ctx *c) {
    free(c->feat); free(c->gord); free(c->glo); free(c->ghi);
    free(c->lmask); free(c->rmask); free(c->nmask);
    free(c->lacc); free(c->ltot); free(c->racc); free(c->rtot);
    free(c->sL); free(c->mL);
    free(c->rows_a); free(c->rows_b); free(c->one); free(c->which); free(c->one_i);
    free(c->gain2); free(c->score2); free(c->vec); free(c->sR); free(c->extra); free(c->etot);
    free(c->gacc); free(c->gbuf); free(c->gcol);
    free(c->fcount); free(c->box_tmp);
}

#define LS_ALLOC(ptr, count, type) ((ptr) = (type *)calloc((size_t)((count) > 0 ? (count) : 1), sizeof(type)))

int dfg_list_search_grow(const uint8_t *S, const double *T, int64_t n_samples, int64_t n_splits,
                         int64_t n_targets, const int64_t *literal_feature,
                         const int64_t *literal_group, const int64_t *cand_ptr,
                         const int64_t *cand_literals, int64_t n_candidates,
                         const dfg_list_params *params, int64_t *box_ptr, int64_t *box_literals,
                         int64_t capacity, int64_t *n_boxes, int n_threads,
                         const volatile int *stop) {
    int status = check_inputs(S, T, n_samples, n_splits, n_targets, literal_feature, literal_group, cand_ptr,
                              cand_literals, n_candidates, params, box_ptr, box_literals, capacity, n_boxes,
                              n_threads);
    if (status != DFG_OK) return status;
    *n_boxes = 0;
    box_ptr[0] = 0;
    const int64_t n = n_samples, L = n_splits, d = n_targets;
    if (L == 0 || n < 2 || params->max_rules == 0) return DFG_OK;

    ls_ctx ctx;
    ls_ctx *c = &ctx;
    memset(c, 0, sizeof(ls_ctx));
    c->S = S;
    c->T = T;
    c->n = n;
    c->L = L;
    c->d = d;
    c->W = d + 1;
    c->L2 = 2 * L;
    c->cost_power = params->cost_power;
    c->price = params->condition_price;
    c->min_support = (double)params->min_support;
    c->max_moves = params->max_moves;
    c->n_threads = n_threads;
    c->avx2 = dfg_cpu_use_avx2();
    c->stop = stop;
    int64_t bound;
    dfg_list_search_box_bound(cand_ptr, n_candidates, params->max_moves, &bound);
    c->box_cap = bound;
    const int64_t W = c->W, L2 = c->L2;
    int64_t *box = NULL, *best_box = NULL;
    double *cand_s = NULL, *cand_score = NULL, *cand_cost = NULL;
    uint8_t *chosen = NULL;
    int64_t *starts = NULL;
    LS_ALLOC(c->feat, L2, int64_t);
    LS_ALLOC(c->gord, L2, int64_t);
    LS_ALLOC(c->glo, L2, int64_t);
    LS_ALLOC(c->ghi, L2, int64_t);
    LS_ALLOC(c->lmask, n, uint8_t);
    LS_ALLOC(c->rmask, n, uint8_t);
    LS_ALLOC(c->nmask, n, uint8_t);
    LS_ALLOC(c->lacc, W * L, double);
    LS_ALLOC(c->racc, W * L, double);
    LS_ALLOC(c->ltot, W, double);
    LS_ALLOC(c->rtot, W, double);
    LS_ALLOC(c->sL, W, double);
    LS_ALLOC(c->mL, W, double);
    LS_ALLOC(c->rows_a, n, int64_t);
    LS_ALLOC(c->rows_b, n, int64_t);
    LS_ALLOC(c->one, n, int64_t);
    LS_ALLOC(c->which, n, int64_t);
    LS_ALLOC(c->one_i, n, int64_t);
    LS_ALLOC(c->gain2, L2, double);
    LS_ALLOC(c->score2, L2, double);
    LS_ALLOC(c->vec, W, double);
    LS_ALLOC(c->sR, W, double);
    LS_ALLOC(c->extra, (bound + 1) * W, double);
    LS_ALLOC(c->etot, W, double);
    LS_ALLOC(c->gacc, L2 * W, double);
    LS_ALLOC(c->gbuf, 4 * L2, double);
    LS_ALLOC(c->gcol, L2, int64_t);
    LS_ALLOC(c->fcount, L2, int64_t);
    LS_ALLOC(c->box_tmp, bound + 1, int64_t);
    LS_ALLOC(box, bound + 1, int64_t);
    LS_ALLOC(best_box, bound + 1, int64_t);
    LS_ALLOC(cand_s, n_candidates * W, double);
    LS_ALLOC(cand_score, n_candidates, double);
    LS_ALLOC(cand_cost, n_candidates, double);
    LS_ALLOC(chosen, n_candidates, uint8_t);
    LS_ALLOC(starts, params->n_starts + 1, int64_t);
    if (!c->feat || !c->gord || !c->glo || !c->ghi || !c->lmask || !c->rmask || !c->nmask || !c->lacc ||
        !c->racc || !c->ltot || !c->rtot || !c->sL || !c->mL || !c->rows_a || !c->rows_b || !c->one ||
        !c->which || !c->one_i || !c->gain2 || !c->score2 || !c->vec || !c->sR || !c->extra || !c->etot ||
        !c->gacc || !c->gbuf || !c->gcol ||
        !c->fcount || !c->box_tmp || !box || !best_box || !cand_s || !cand_score || !cand_cost || !chosen ||
        !starts) {
        status = DFG_ENOMEM;
        goto done;
    }
    status = index_literals(c, literal_feature, literal_group);
    if (status != DFG_OK) goto done;

    /* scale: the squared error of all rows about their mean */
    {
        double q = dfg_sumsq_np(T, n * d);
        for (int64_t k = 0; k < d; k++) c->sL[k] = 0.0;
        for (int64_t r = 0; r < n; r++)
            for (int64_t k = 0; k < d; k++) c->sL[k] = c->sL[k] + T[r * d + k];
        const double v = q - dfg_sumsq_np(c->sL, d) / (double)n;
        const double scale = 1e-300 > v ? 1e-300 : v;
        c->tol = params->rel_tol * scale;
    }
    for (int64_t m = 0; m < n_candidates; m++)
        cand_cost[m] = box_cost(c, cand_literals + cand_ptr[m], cand_ptr[m + 1] - cand_ptr[m]);
    memset(c->lmask, 1, (size_t)n);
    left_sums(c); /* the region's sums start at the empty region's (zero) */

    while (*n_boxes < params->max_rules && c->lcount >= 2) {
        if (dfg_stop_requested(stop)) {
            status = DFG_EINTERRUPTED;
            goto done;
        }
        c->cL = (double)c->lcount;
        for (int64_t k = 0; k < d; k++) c->sL[k] = c->ltot[k];
        double sq = 0.0;
        for (int64_t r = 0; r < n; r++)
            if (c->lmask[r])
                for (int64_t k = 0; k < d; k++) sq = sq + T[r * d + k] * T[r * d + k];
        const double resid = sq - dfg_sumsq_np(c->sL, d) / c->cL;
        c->lam = c->price * resid / c->cL;
        c->gain_only = c->cost_power == 0.0 && c->lam == 0.0;
        const double cl1 = c->cL > 1.0 ? c->cL : 1.0;
        for (int64_t k = 0; k < d; k++) c->mL[k] = c->sL[k] / cl1;

        /* the starts: the empty box, then the best candidates by score */
        int64_t n_st = 0;
        starts[n_st++] = -1;
        if (n_candidates > 0) {
            int64_t n_live = 0;
            memset(cand_s, 0, (size_t)(n_candidates * W) * sizeof(double));
            for (int64_t r = 0; r < n; r++) {
                if (!c->lmask[r]) continue;
                const uint8_t *srow = S + r * L;
                for (int64_t m = 0; m < n_candidates; m++) {
                    int64_t q = cand_ptr[m];
                    while (q < cand_ptr[m + 1] && dfg_literal_holds(srow, cand_literals[q], L)) q++;
                    if (q < cand_ptr[m + 1]) continue;
                    double *s = cand_s + m * W;
                    for (int64_t k = 0; k < d; k++) s[k] = s[k] + T[r * d + k];
                    s[d] = s[d] + 1.0;
                }
            }
            for (int64_t m = 0; m < n_candidates; m++) {
                chosen[m] = cand_ptr[m + 1] == cand_ptr[m]; /* empty boxes are no start */
                n_live += !chosen[m];
                cand_score[m] = score_of(c, gain_of(c, cand_s + m * W, cand_s[m * W + d]), cand_cost[m]);
            }
            for (int64_t pick = 0; pick < params->n_starts && pick < n_live; pick++) {
                int64_t mb = -1;
                for (int64_t m = 0; m < n_candidates; m++)
                    if (!chosen[m] && (mb < 0 || cand_score[m] > cand_score[mb])) mb = m;
                chosen[mb] = 1;
                if (isfinite(cand_score[mb])) starts[n_st++] = mb;
            }
        }

        int have = 0;
        int64_t best_len = 0;
        double best_score = 0.0;
        for (int64_t st = 0; st < n_st; st++) {
            int64_t len = 0;
            if (starts[st] >= 0) {
                len = cand_ptr[starts[st] + 1] - cand_ptr[starts[st]];
                memcpy(box, cand_literals + cand_ptr[starts[st]], (size_t)len * sizeof(int64_t));
            }
            double gain, score;
            status = refine(c, box, &len, &gain, &score);
            if (status != DFG_OK) goto done;
            if (len > 0 && gain > c->tol &&
                (!have || score > best_score || (score == best_score && len < best_len))) {
                have = 1;
                best_len = len;
                best_score = score;
                memcpy(best_box, box, (size_t)len * sizeof(int64_t));
            }
        }
        if (!have) break;
        qsort(best_box, (size_t)best_len, sizeof(int64_t), cmp_int64);
        const int64_t at = box_ptr[*n_boxes];
        if (best_len > capacity - at) {
            status = DFG_EINVAL; /* cannot happen: checked against the bound */
            goto done;
        }
        memcpy(box_literals + at, best_box, (size_t)best_len * sizeof(int64_t));
        box_ptr[*n_boxes + 1] = at + best_len;
        (*n_boxes)++;
        take_rows(c, best_box, best_len);
    }
done:
    free_ctx(c);
    free(box); free(best_box); free(cand_s); free(cand_score); free(cand_cost); free(chosen); free(starts);
    return status;
}
