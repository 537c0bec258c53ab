#include "dfg_box_refine.h"

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

/* One side's gain: c_R |m_R - m_left|^2 for a region (sR, cR) of left, 0 for an empty one. */
static double side_gain(const dfg_refine *c, const double *sR, double cR) {
    if (!(cR > 0.0)) return 0.0;
    for (int64_t k = 0; k < c->d; k++) c->vec[k] = sR[k] - cR * c->mL[k];
    return dfg_sumsq_np(c->vec, c->d) / (cR > 1.0 ? cR : 1.0);
}

/* The gain of a region (sR, cR) inside the step's left (dfg_box_refine.h). */
static double gain_of(const dfg_refine *c, const double *sR, double cR) {
    if (!c->two_sided) {
        if (!(cR >= c->min_support && c->cL - cR >= 1.0)) return -INFINITY;
        return side_gain(c, sR, cR);
    }
    const double cB = c->cL - cR;
    if (!(cR >= c->min_support && cB >= c->min_support)) return -INFINITY;
    const double gR = side_gain(c, sR, cR);
    for (int64_t k = 0; k < c->d; k++) c->sR[c->W + k] = c->sL[k] - sR[k]; /* the rest's sums */
    return gR + side_gain(c, c->sR + c->W, cB);
}

/* A box's score from its gain and length (two-sided with a price; else the gain). */
static double score_of(const dfg_refine *c, double gain, double len) {
    if (c->gain_only) return gain;
    return gain - c->lam * (len - 1.0);
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
static void accumulate_chunk(const dfg_refine *c, const int64_t *rows, int64_t nr, double sign, double *acc,
                             int64_t ch) {
    const int64_t l0 = ch * LS_CHUNK, m = l0 + LS_CHUNK < c->L ? LS_CHUNK : c->L - l0;
    dfg_list_literal_sums(c->S, c->T, c->L, c->d, rows, nr, sign, acc, l0, m, c->avx2);
}

/* acc[k L + l] (+/-)= s_l T[r, k] (k = d: 1) and tot[k] likewise, over rows in order; the
 * literals shared among the threads in fixed shares, each summed by one thread. */
static void accumulate(const dfg_refine *c, const int64_t *rows, int64_t nr, int subtract, double *acc,
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
DFG_ALWAYS_INLINE void group_share(const dfg_refine *c, const int64_t *rows, int64_t nr, const int64_t *cols,
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

static void group_share_base(const dfg_refine *c, const int64_t *rows, int64_t nr, const int64_t *cols, int64_t G,
                             double *gacc, double *b) {
    group_share(c, rows, nr, cols, G, gacc, b);
}

#if DFG_X86_DISPATCH
DFG_TARGET("avx2") static void group_share_avx2(const dfg_refine *c, const int64_t *rows, int64_t nr,
                                                const int64_t *cols, int64_t G, double *gacc, double *b) {
    group_share(c, rows, nr, cols, G, gacc, b);
}
#endif

/* Word w of literal j's rows (past n, a negative literal's bits are set: callers mask). */
static inline uint64_t literal_word(const dfg_refine *c, int64_t j, int64_t w) {
    return j < c->L ? c->lit_bits[j * c->nw + w] : ~c->lit_bits[(j - c->L) * c->nw + w];
}

/* The rows of word w's bits x, ascending, appended to rows at *count. */
static inline void word_rows(uint64_t x, int64_t w, int64_t *rows, int64_t *count) {
    while (x) {
        rows[(*count)++] = w * 64 + (int64_t)dfg_ctz64(x);
        x &= x - 1;
    }
}

/* Moves the region's sums (rbits, racc, rtot) to the rows of nbits, a subset of left:
 * by the rows that joined and left, from left's sums, or anew, whichever reads fewest rows. */
static void set_region(dfg_refine *c) {
    const int64_t nw = c->nw, W = c->W, L = c->L;
    const uint64_t *nb = c->nbits, *rb = c->rbits, *lb = c->lbits;
    int64_t n_new = 0, n_add = 0, n_rem = 0, n_lrem = 0;
    for (int64_t w = 0; w < nw; w++) {
        n_new += dfg_popcount64(nb[w]);
        n_add += dfg_popcount64(nb[w] & ~rb[w]);
        n_rem += dfg_popcount64(rb[w] & ~nb[w]);
        n_lrem += dfg_popcount64(lb[w] & ~nb[w]);
    }
    if (n_add + n_rem <= n_lrem && n_add + n_rem <= n_new) {
        if (n_add + n_rem > 0) {
            int64_t na = 0, nr = 0;
            for (int64_t w = 0; w < nw; w++) {
                word_rows(nb[w] & ~rb[w], w, c->rows_a, &na);
                word_rows(rb[w] & ~nb[w], w, c->rows_b, &nr);
            }
            accumulate(c, c->rows_a, na, 0, c->racc, c->rtot);
            accumulate(c, c->rows_b, nr, 1, c->racc, c->rtot);
        }
    } else if (n_lrem <= n_new) {
        int64_t nr = 0;
        memcpy(c->racc, c->lacc, (size_t)(W * L) * sizeof(double));
        memcpy(c->rtot, c->ltot, (size_t)W * sizeof(double));
        for (int64_t w = 0; w < nw; w++) word_rows(lb[w] & ~nb[w], w, c->rows_b, &nr);
        accumulate(c, c->rows_b, nr, 1, c->racc, c->rtot);
    } else {
        int64_t na = 0;
        memset(c->racc, 0, (size_t)(W * L) * sizeof(double));
        memset(c->rtot, 0, (size_t)W * sizeof(double));
        for (int64_t w = 0; w < nw; w++) word_rows(nb[w], w, c->rows_a, &na);
        accumulate(c, c->rows_a, na, 0, c->racc, c->rtot);
    }
    memcpy(c->rbits, nb, (size_t)nw * sizeof(uint64_t));
}

/* The box's region in left (nbits) and the rows of left failing exactly one literal
 * (one, ascending, with the position of that literal in which), 64 rows at a time: a row
 * fails only literal i where it holds the literals before i (a prefix of ANDs) and after
 * i (a suffix) but not literal i. */
static void leave_one_out(dfg_refine *c, const int64_t *box, int64_t len) {
    uint64_t *b = c->box_words, *suffix = c->suffix_words, *e = c->one_words;
    c->n_one = 0;
    for (int64_t w = 0; w < c->nw; w++) {
        const uint64_t left = c->lbits[w];
        if (!left) {
            c->nbits[w] = 0;
            continue;
        }
        uint64_t all = left;
        for (int64_t i = 0; i < len; i++) {
            b[i] = literal_word(c, box[i], w);
            all &= b[i];
        }
        c->nbits[w] = all;
        if (len == 0) continue;
        suffix[len - 1] = ~(uint64_t)0;
        for (int64_t i = len - 1; i > 0; i--) suffix[i - 1] = suffix[i] & b[i];
        uint64_t prefix = left, any = 0;
        for (int64_t i = 0; i < len; i++) {
            e[i] = prefix & ~b[i] & suffix[i];
            prefix &= b[i];
            any |= e[i];
        }
        while (any) {
            const int bit = dfg_ctz64(any);
            int64_t i = 0;
            while (!((e[i] >> bit) & 1)) i++;
            c->one[c->n_one] = w * 64 + bit;
            c->which[c->n_one++] = i;
            any &= any - 1;
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
static void literal_sums(const dfg_refine *c, int64_t j, const double *right, double rc,
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
static void add_and_drop_moves(dfg_refine *c, const int64_t *box, int64_t len, move *best) {
    const int64_t L = c->L, d = c->d, W = c->W;
    if (d == 1 && !c->two_sided) {
        /* one target, a score that is the gain: gain_of's
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
    } else if (c->two_sided) {
        /* CART's drop of each literal added: gain_of's arithmetic inline, the same doubles */
        const double *count = c->racc + d * L, c_all = c->rtot[d], cL = c->cL, min_support = c->min_support;
        const double price = c->lam * ((double)(len + 1) - 1.0); /* score_of's, for a box of len + 1 */
        double *a = c->vec, *b = c->etot;
        for (int64_t j = 0; j < c->L2; j++) {
            const int pos = j < L;
            const int64_t l = pos ? j : j - L;
            const double cR = pos ? count[l] : c_all - count[l], cB = cL - cR;
            double g;
            if (!(cR >= min_support && cB >= min_support)) {
                g = -INFINITY;
            } else {
                for (int64_t k = 0; k < d; k++) {
                    const double right = c->racc[k * L + l], sR = pos ? right : c->rtot[k] - right;
                    a[k] = sR - cR * c->mL[k];
                    b[k] = (c->sL[k] - sR) - cB * c->mL[k];
                }
                const double gR = cR > 0.0 ? dfg_sumsq_np(a, d) / (cR > 1.0 ? cR : 1.0) : 0.0;
                const double gB = cB > 0.0 ? dfg_sumsq_np(b, d) / (cB > 1.0 ? cB : 1.0) : 0.0;
                g = gR + gB;
            }
            c->gain2[j] = g;
            c->score2[j] = c->gain_only ? g : g - price;
        }
    } else {
        for (int64_t j = 0; j < c->L2; j++) {
            const int64_t l = j < L ? j : j - L;
            double cR;
            for (int64_t k = 0; k < d; k++) c->etot[k] = c->racc[k * L + l]; /* the right sums */
            literal_sums(c, j, c->etot, c->racc[d * L + l], c->rtot, c->sR, &cR);
            const double g = gain_of(c, c->sR, cR);
            c->gain2[j] = g;
            c->score2[j] = g; /* one-sided: the score is the gain */
        }
    }
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
            move m = {1, score_of(c, g, (double)m_len), g, len - 1, MOVE_DROP, i, -1};
            offer(best, &m);
        }
    }
}

/* Each literal moved to the literal of best gain in its group (region sums current). */
static void polish_moves(dfg_refine *c, const int64_t *box, int64_t len, move *best) {
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
            move m = {1, score_of(c, gbest, (double)len), gbest, len, MOVE_POLISH, i,
                      c->gord[pbest]};
            offer(best, &m);
        }
    }
}

static int better(const move *m, double score, double tol, int64_t len) {
    return m->has && (m->score > score + tol || (m->score >= score - tol && m->len < len));
}

/* The box after its best moves (box: box_cap entries, *len in and out). */
static int refine(dfg_refine *c, int64_t *box, int64_t *len_io, double *gain_out, double *score_out) {
    int64_t len = *len_io;
    leave_one_out(c, box, len);
    set_region(c);
    double gain = len ? gain_of(c, c->rtot, c->rtot[c->d]) : -INFINITY;
    double score = len ? score_of(c, gain, (double)len) : -INFINITY;
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
static int index_literals(dfg_refine *c, const int64_t *literal_feature, const int64_t *literal_group) {
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

void dfg_box_sort(int64_t *box, int64_t len) {
    if (len > 1) qsort(box, (size_t)len, sizeof(int64_t), cmp_int64);
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

int dfg_refine_check(const uint8_t *S, const double *T, int64_t n, int64_t L, int64_t d,
                     const int64_t *literal_feature, const int64_t *literal_group, const int64_t *cand_ptr,
                     const int64_t *cand_literals, int64_t n_candidates, int64_t max_moves, int64_t *bound) {
    if (!cand_ptr || !bound || n < 0 || L < 0 || d < 0 || n_candidates < 0) return DFG_EINVAL;
    if (L > INT64_MAX / 4 || (L > 0 && n > INT64_MAX / 8 / L) || (d > 0 && n > INT64_MAX / 8 / d) ||
        d > INT64_MAX / 8 - 1 || (L > 0 && d + 1 > INT64_MAX / 8 / L))
        return DFG_EINVAL;
    if ((n * L > 0 && !S) || (n * d > 0 && !T) || (L > 0 && (!literal_feature || !literal_group)))
        return DFG_EINVAL;
    if (dfg_list_search_box_bound(cand_ptr, n_candidates, max_moves, bound) != DFG_OK) return DFG_EINVAL;
    if (cand_ptr[n_candidates] > 0 && !cand_literals) return DFG_EINVAL;
    /* the one check of values: a candidate literal indexes S's columns and the literals' bits */
    for (int64_t q = 0; q < cand_ptr[n_candidates]; q++)
        if (cand_literals[q] < 0 || cand_literals[q] >= 2 * L) return DFG_EINVAL;
    return DFG_OK;
}

/* Sums of left (lbits, lacc, ltot, lcount) anew. */
static void left_sums(dfg_refine *c) {
    int64_t na = 0;
    memset(c->lacc, 0, (size_t)(c->W * c->L) * sizeof(double));
    memset(c->ltot, 0, (size_t)c->W * sizeof(double));
    for (int64_t w = 0; w < c->nw; w++) word_rows(c->lbits[w], w, c->rows_a, &na);
    accumulate(c, c->rows_a, na, 0, c->lacc, c->ltot);
    c->lcount = na;
}

/* The bits of rows 0 .. n - 1 of word w. */
static uint64_t valid_rows(int64_t n, int64_t w) {
    const int64_t k = n - w * 64;
    return k >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << k) - 1);
}

void dfg_refine_left_all(dfg_refine *c) {
    for (int64_t w = 0; w < c->nw; w++) c->lbits[w] = valid_rows(c->n, w);
    left_sums(c); /* the region's sums stay those of rbits (none at first: zero) */
}

void dfg_refine_left_rows(dfg_refine *c, const int64_t *rows, int64_t nr, const double *acc, const double *tot) {
    memset(c->lbits, 0, (size_t)c->nw * sizeof(uint64_t));
    for (int64_t q = 0; q < nr; q++) c->lbits[rows[q] / 64] |= (uint64_t)1 << (rows[q] % 64);
    memset(c->rbits, 0, (size_t)c->nw * sizeof(uint64_t)); /* the empty region, its sums zero */
    memset(c->racc, 0, (size_t)(c->W * c->L) * sizeof(double));
    memset(c->rtot, 0, (size_t)c->W * sizeof(double));
    if (!acc) {
        left_sums(c);
        return;
    }
    memcpy(c->lacc, acc, (size_t)(c->W * c->L) * sizeof(double));
    memcpy(c->ltot, tot, (size_t)c->W * sizeof(double));
    c->lcount = nr;
}

void dfg_refine_take_rows(dfg_refine *c, const int64_t *box, int64_t len) {
    int64_t nr = 0;
    for (int64_t w = 0; w < c->nw; w++) {
        uint64_t x = c->lbits[w];
        for (int64_t i = 0; i < len && x; i++) x &= literal_word(c, box[i], w);
        word_rows(x, w, c->rows_b, &nr);
        c->lbits[w] &= ~x;
    }
    if (nr <= c->lcount - nr) {
        accumulate(c, c->rows_b, nr, 1, c->lacc, c->ltot);
        c->lcount -= nr;
    } else {
        left_sums(c);
    }
}

void dfg_refine_free(dfg_refine *c) {
    free(c->feat); free(c->gord); free(c->glo); free(c->ghi);
    free(c->cand_cost); free(c->cand_s); free(c->cand_score); free(c->chosen); free(c->starts);
    free(c->lit_bits); free(c->cand_bits); free(c->lbits); free(c->rbits); free(c->nbits);
    free(c->box_words); free(c->suffix_words); free(c->one_words);
    free(c->lacc); free(c->ltot); free(c->racc); free(c->rtot);
    free(c->sL); free(c->mL);
    free(c->rows_a); free(c->rows_b); free(c->one); free(c->which); free(c->one_i);
    free(c->gain2); free(c->score2); free(c->vec); free(c->sR); free(c->extra); free(c->etot);
    free(c->gacc); free(c->gbuf); free(c->gcol);
    free(c->box_tmp); free(c->box_work);
    memset(c, 0, sizeof(dfg_refine));
}

#define RF_ALLOC(ptr, count, type) ((ptr) = (type *)calloc((size_t)((count) > 0 ? (count) : 1), sizeof(type)))

int dfg_refine_init(dfg_refine *c, const uint8_t *S, const double *T, int64_t n, int64_t L, int64_t d,
                    const int64_t *literal_feature, const int64_t *literal_group, const int64_t *cand_ptr,
                    const int64_t *cand_literals, int64_t n_candidates, const dfg_refine_settings *settings,
                    int n_threads, const volatile int *stop) {
    memset(c, 0, sizeof(dfg_refine));
    int64_t bound;
    if (dfg_list_search_box_bound(cand_ptr, n_candidates, settings->max_moves, &bound) != DFG_OK) return DFG_EINVAL;
    /* the sizes of the arrays below (the callers check n L, n d and (d + 1) L) */
    const int64_t nw = dfg_n_words(n), W = d + 1;
    if (n < 1 || L < 1 || d < 0 || W > INT64_MAX / 8 || L > INT64_MAX / 8 / W || bound > INT64_MAX / 8 / W - 1 ||
        (n_candidates > 0 && (nw > INT64_MAX / 8 / n_candidates || W > INT64_MAX / 8 / n_candidates)) ||
        settings->n_starts > INT64_MAX - 1)
        return DFG_EINVAL;
    c->S = S;
    c->T = T;
    c->n = n;
    c->L = L;
    c->d = d;
    c->W = d + 1;
    c->L2 = 2 * L;
    c->cand_ptr = cand_ptr;
    c->cand_literals = cand_literals;
    c->n_cand = n_candidates;
    c->two_sided = settings->mode == DFG_GAIN_TWO_SIDED;
    c->price = settings->price;
    c->min_support = (double)settings->min_support;
    c->max_moves = settings->max_moves;
    c->n_starts = settings->n_starts;
    c->n_threads = n_threads;
    c->avx2 = dfg_cpu_use_avx2();
    c->stop = stop;
    c->box_cap = bound;
    const int64_t L2 = c->L2;
    RF_ALLOC(c->feat, L2, int64_t);
    RF_ALLOC(c->gord, L2, int64_t);
    RF_ALLOC(c->glo, L2, int64_t);
    RF_ALLOC(c->ghi, L2, int64_t);
    RF_ALLOC(c->cand_cost, n_candidates, double);
    RF_ALLOC(c->cand_s, n_candidates * W, double);
    RF_ALLOC(c->cand_score, n_candidates, double);
    RF_ALLOC(c->chosen, n_candidates, uint8_t);
    RF_ALLOC(c->starts, settings->n_starts + 1, int64_t);
    c->nw = nw;
    RF_ALLOC(c->lit_bits, L * c->nw, uint64_t);
    RF_ALLOC(c->cand_bits, n_candidates * c->nw, uint64_t);
    RF_ALLOC(c->lbits, c->nw, uint64_t);
    RF_ALLOC(c->rbits, c->nw, uint64_t);
    RF_ALLOC(c->nbits, c->nw, uint64_t);
    RF_ALLOC(c->box_words, bound + 1, uint64_t);
    RF_ALLOC(c->suffix_words, bound + 1, uint64_t);
    RF_ALLOC(c->one_words, bound + 1, uint64_t);
    RF_ALLOC(c->lacc, W * L, double);
    RF_ALLOC(c->racc, W * L, double);
    RF_ALLOC(c->ltot, W, double);
    RF_ALLOC(c->rtot, W, double);
    RF_ALLOC(c->sL, W, double);
    RF_ALLOC(c->mL, W, double);
    RF_ALLOC(c->rows_a, n, int64_t);
    RF_ALLOC(c->rows_b, n, int64_t);
    RF_ALLOC(c->one, n, int64_t);
    RF_ALLOC(c->which, n, int64_t);
    RF_ALLOC(c->one_i, n, int64_t);
    RF_ALLOC(c->gain2, L2, double);
    RF_ALLOC(c->score2, L2, double);
    RF_ALLOC(c->vec, W, double);
    RF_ALLOC(c->sR, 2 * W, double); /* a region's sums, then the rest's (two-sided gains) */
    RF_ALLOC(c->extra, (bound + 1) * W, double);
    RF_ALLOC(c->etot, W, double);
    RF_ALLOC(c->gacc, L2 * W, double);
    RF_ALLOC(c->gbuf, 4 * L2, double);
    RF_ALLOC(c->gcol, L2, int64_t);
    RF_ALLOC(c->box_tmp, bound + 1, int64_t);
    RF_ALLOC(c->box_work, bound + 1, int64_t);
    if (!c->feat || !c->gord || !c->glo || !c->ghi || !c->cand_cost || !c->cand_s || !c->cand_score ||
        !c->chosen || !c->starts || !c->lit_bits || !c->cand_bits || !c->lbits || !c->rbits || !c->nbits ||
        !c->box_words || !c->suffix_words || !c->one_words || !c->lacc || !c->racc ||
        !c->ltot || !c->rtot || !c->sL || !c->mL || !c->rows_a || !c->rows_b || !c->one || !c->which ||
        !c->one_i || !c->gain2 || !c->score2 || !c->vec || !c->sR || !c->extra || !c->etot || !c->gacc ||
        !c->gbuf || !c->gcol || !c->box_tmp || !c->box_work)
        return DFG_ENOMEM;
    const int status = index_literals(c, literal_feature, literal_group);
    if (status != DFG_OK) return status;

    /* scale: the squared error of all rows about their mean */
    {
        double q = dfg_sumsq_np(T, n * d);
        for (int64_t k = 0; k < d; k++) c->sL[k] = 0.0;
        for (int64_t r = 0; r < n; r++)
            for (int64_t k = 0; k < d; k++) c->sL[k] = c->sL[k] + T[r * d + k];
        const double v = q - dfg_sumsq_np(c->sL, d) / (double)n;
        const double scale = 1e-300 > v ? 1e-300 : v;
        c->tol = settings->rel_tol * scale;
    }
    for (int64_t m = 0; m < n_candidates; m++)
        c->cand_cost[m] = (double)(cand_ptr[m + 1] - cand_ptr[m]);
    /* the literals' and candidates' rows as bits, 64 rows at a time (S's rows read once) */
    for (int64_t w = 0; w < c->nw; w++) {
        const int64_t r0 = w * 64, rows = n - r0 < 64 ? n - r0 : 64;
        for (int64_t l = 0; l < L; l++) {
            const uint8_t *col = S + r0 * L + l;
            uint64_t x = 0;
            for (int64_t i = 0; i < rows; i++) x |= (uint64_t)(col[i * L] != 0) << i; /* as dfg_literal_holds */
            c->lit_bits[l * c->nw + w] = x;
        }
        for (int64_t m = 0; m < n_candidates; m++) {
            uint64_t x = valid_rows(n, w);
            for (int64_t p = cand_ptr[m]; p < cand_ptr[m + 1]; p++) x &= literal_word(c, cand_literals[p], w);
            c->cand_bits[m * c->nw + w] = x;
        }
    }
    return DFG_OK;
}

/* The step's left: its sums, mean, and (two-sided) the price of a condition. */
static void begin_step(dfg_refine *c) {
    const int64_t d = c->d;
    c->cL = (double)c->lcount;
    for (int64_t k = 0; k < d; k++) c->sL[k] = c->ltot[k];
    c->lam = 0.0;
    if (c->two_sided) { /* the one-sided score is the gain: no price to scale */
        double sq = 0.0;
        for (int64_t w = 0; w < c->nw; w++)
            for (uint64_t x = c->lbits[w]; x; x &= x - 1) {
                const int64_t r = w * 64 + (int64_t)dfg_ctz64(x);
                for (int64_t k = 0; k < d; k++) sq = sq + c->T[r * d + k] * c->T[r * d + k];
            }
        const double resid = sq - dfg_sumsq_np(c->sL, d) / c->cL;
        c->lam = c->price * resid;
    }
    c->gain_only = c->lam == 0.0;
    const double cl1 = c->cL > 1.0 ? c->cL : 1.0;
    for (int64_t k = 0; k < d; k++) c->mL[k] = c->sL[k] / cl1;
}

/* The starts: the empty box (-1), then the best candidates by score; their number. */
static int64_t pick_starts(dfg_refine *c) {
    const int64_t d = c->d, W = c->W, n_cand = c->n_cand;
    const int64_t *cand_ptr = c->cand_ptr;
    int64_t n_st = 0;
    c->starts[n_st++] = -1;
    if (n_cand == 0) return n_st;
    int64_t n_live = 0;
    memset(c->cand_s, 0, (size_t)(n_cand * W) * sizeof(double));
    for (int64_t m = 0; m < n_cand; m++) { /* each candidate's sums over its rows in left, in row order */
        double *s = c->cand_s + m * W;
        const uint64_t *cover = c->cand_bits + m * c->nw;
        for (int64_t w = 0; w < c->nw; w++)
            for (uint64_t x = cover[w] & c->lbits[w]; x; x &= x - 1) {
                const int64_t r = w * 64 + (int64_t)dfg_ctz64(x);
                for (int64_t k = 0; k < d; k++) s[k] = s[k] + c->T[r * d + k];
                s[d] = s[d] + 1.0;
            }
    }
    for (int64_t m = 0; m < n_cand; m++) {
        c->chosen[m] = cand_ptr[m + 1] == cand_ptr[m]; /* empty boxes are no start */
        n_live += !c->chosen[m];
        c->cand_score[m] = score_of(c, gain_of(c, c->cand_s + m * W, c->cand_s[m * W + d]), c->cand_cost[m]);
    }
    for (int64_t pick = 0; pick < c->n_starts && pick < n_live; pick++) {
        int64_t mb = -1;
        for (int64_t m = 0; m < n_cand; m++)
            if (!c->chosen[m] && (mb < 0 || c->cand_score[m] > c->cand_score[mb])) mb = m;
        c->chosen[mb] = 1;
        if (isfinite(c->cand_score[mb])) c->starts[n_st++] = mb;
    }
    return n_st;
}

int dfg_refine_best(dfg_refine *c, int64_t *best_box, int64_t *best_len, double *best_gain, double *best_score,
                    int *have) {
    begin_step(c);
    const int64_t n_st = pick_starts(c);
    int64_t *box = c->box_work;
    *have = 0;
    *best_len = 0;
    *best_gain = *best_score = 0.0;
    for (int64_t st = 0; st < n_st; st++) {
        int64_t len = 0;
        if (c->starts[st] >= 0) {
            const int64_t m = c->starts[st];
            len = c->cand_ptr[m + 1] - c->cand_ptr[m];
            memcpy(box, c->cand_literals + c->cand_ptr[m], (size_t)len * sizeof(int64_t));
        }
        double gain, score;
        const int status = refine(c, box, &len, &gain, &score);
        if (status != DFG_OK) return status;
        if (len > 0 && gain > c->tol &&
            (!*have || score > *best_score || (score == *best_score && len < *best_len))) {
            *have = 1;
            *best_len = len;
            *best_score = score;
            *best_gain = gain;
            memcpy(best_box, box, (size_t)len * sizeof(int64_t));
        }
    }
    return DFG_OK;
}
