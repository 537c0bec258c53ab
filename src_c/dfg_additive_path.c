#include "dfg_additive_path.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dfg_cpu.h"
#include "dfg_list_loss.h" /* dfg_pairwise_sum */
#include "dfg_list_search.h"

/* Multiply-adds below which a pass runs on one thread (a parallel region's start costs
 * more than small sums). */
#define AP_PAR_WORK 262144
/* Literals per thread's share of a leaf's sums (a share is summed by one thread, in row order). */
#define AP_CHUNK DFG_LIST_CHUNK

typedef struct {
    int64_t term, node, cnt; /* its term, node id and rows */
    int alive;               /* a leaf now */
    double *A;     /* W L: A[k L + l] the sum of T0[., k] over its rows with s_l = 1 (k = d: their count) */
    double *tot;   /* d: the sums of T0 over its rows */
    double *v;     /* d: its value */
    int32_t **pair; /* pair[j], slot j < this one of another term: per l the rows of both with s_l = 1
                       (NULL where no row is in both) */
    int64_t *both;  /* both[j]: the rows of both */
    double *RS;     /* d L, this step: the residual's sums over its rows with s_l = 1 */
    double *P;      /* d, this step: the residual's sums over its rows */
    double *sA;     /* d, this step: those over the then side of its best split */
    double *drop;   /* L, this step: each split's drop (-inf where a side is too small) */
    int64_t best_l; /* this step: its best split (-1: none) and the drop */
    double best_drop;
} ap_leaf;

typedef struct {
    const uint8_t *S;
    const double *T0; /* T - base */
    int64_t n, L, d, W, min_leaf;
    double tie_tol; /* drops closer than this are equal (rounding) */
    int n_threads, avx2;
    ap_leaf *leaf;     /* 2 max_splits slots: slot 2t + side holds the node step t made on that side */
    ap_leaf root;      /* all rows: a new term's root (its pair arrays unused) */
    int64_t n_slots, n_terms;
    int64_t *term_splits; /* splits per term */
    int32_t **leaf_of;    /* per term: each row's leaf (slot) */
    int64_t *order;       /* the leaves (slots) by term, then node id */
    int64_t n_order;
    int64_t *rows_then, *rows_else, *rows_group; /* scratch (n each) */
    int64_t *group_at, *group_leaf, *group_start; /* scratch (2 max_splits + 1 each) */
} ap_ctx;

#define AP_ALLOC(ptr, count, type) ((ptr) = (type *)calloc((size_t)((count) > 0 ? (count) : 1), sizeof(type)))

static double sumsq(const double *x, int64_t d) {
    double a = 0.0;
    for (int64_t k = 0; k < d; k++) a = a + x[k] * x[k];
    return a;
}

/* The counts leaves a and b (slots, a != b) share, and in *both their rows in common. */
static const int32_t *shared(const ap_ctx *c, int64_t a, int64_t b, int64_t *both) {
    const ap_leaf *hi = &c->leaf[a > b ? a : b];
    const int64_t lo = a > b ? b : a;
    *both = hi->both[lo];
    return hi->pair[lo];
}

static void free_leaf(ap_leaf *f, int64_t slot) {
    if (f->pair)
        for (int64_t j = 0; j < slot; j++) free(f->pair[j]);
    free(f->pair); free(f->both); free(f->A); free(f->tot); free(f->v);
    free(f->RS); free(f->P); free(f->sA); free(f->drop);
    memset(f, 0, sizeof(*f));
}

/* A leaf's buffers (slot: its slot, -1 for the root: no pair arrays). */
static int alloc_leaf(const ap_ctx *c, ap_leaf *f, int64_t slot) {
    const int64_t d = c->d, L = c->L;
    AP_ALLOC(f->A, c->W * L, double);
    AP_ALLOC(f->tot, d, double);
    AP_ALLOC(f->v, d, double);
    AP_ALLOC(f->RS, d * L, double);
    AP_ALLOC(f->P, d, double);
    AP_ALLOC(f->sA, d, double);
    AP_ALLOC(f->drop, c->L, double);
    if (slot >= 0) {
        AP_ALLOC(f->pair, slot, int32_t *);
        AP_ALLOC(f->both, slot, int64_t);
    }
    if (!f->A || !f->tot || !f->v || !f->RS || !f->P || !f->sA || !f->drop || (slot >= 0 && (!f->pair || !f->both)))
        return DFG_ENOMEM;
    return DFG_OK;
}

/* A and tot of a leaf over its rows (in row order); the literals shared among threads in
 * fixed shares, each summed by one thread. */
static void leaf_sums(const ap_ctx *c, const int64_t *rows, int64_t nr, ap_leaf *f) {
    const int64_t L = c->L, d = c->d, W = c->W;
    const int64_t n_chunks = (L + AP_CHUNK - 1) / AP_CHUNK;
    const int par = c->n_threads > 1 && n_chunks > 1 && (double)nr * (double)L * (double)W >= AP_PAR_WORK;
    memset(f->A, 0, (size_t)(W * L) * sizeof(double));
    if (par) {
        #pragma omp parallel for schedule(static) num_threads(dfg_team(c->n_threads))
        for (int64_t ch = 0; ch < n_chunks; ch++) {
            const int64_t l0 = ch * AP_CHUNK, m = l0 + AP_CHUNK < L ? AP_CHUNK : L - l0;
            dfg_list_literal_sums(c->S, c->T0, L, d, rows, nr, 1.0, f->A, l0, m, c->avx2);
        }
    } else {
        for (int64_t ch = 0; ch < n_chunks; ch++) {
            const int64_t l0 = ch * AP_CHUNK, m = l0 + AP_CHUNK < L ? AP_CHUNK : L - l0;
            dfg_list_literal_sums(c->S, c->T0, L, d, rows, nr, 1.0, f->A, l0, m, c->avx2);
        }
    }
    for (int64_t k = 0; k < d; k++) f->tot[k] = 0.0;
    for (int64_t i = 0; i < nr; i++)
        for (int64_t k = 0; k < d; k++) f->tot[k] = f->tot[k] + c->T0[rows[i] * d + k];
    f->cnt = nr;
}

/* The residual's sums of leaf f (slot; -1: the root, a new term's) and its best split. */
static void evaluate(const ap_ctx *c, ap_leaf *f, int64_t slot) {
    const int64_t d = c->d, L = c->L;
    f->best_l = -1;
    f->best_drop = -INFINITY;
    if (c->min_leaf > f->cnt / 2) return; /* (2 min_leaf may overflow) */
    memcpy(f->RS, f->A, (size_t)(d * L) * sizeof(double));
    memcpy(f->P, f->tot, (size_t)d * sizeof(double));
    for (int64_t i = 0; i < c->n_order; i++) { /* minus the other terms' values on its rows */
        const int64_t q = c->order[i];
        const ap_leaf *g = &c->leaf[q];
        if (slot < 0) { /* all rows: leaf q's own counts */
            const double *cnt = g->A + d * L;
            for (int64_t k = 0; k < d; k++) {
                const double vq = g->v[k];
                double *row = f->RS + k * L;
                f->P[k] = f->P[k] - vq * (double)g->cnt;
                for (int64_t l = 0; l < L; l++) row[l] = row[l] - vq * cnt[l];
            }
        } else {
            if (g->term == f->term) continue;
            int64_t b;
            const int32_t *N = shared(c, slot, q, &b);
            if (b == 0) continue; /* (subtracting v * 0 changes no sum) */
            for (int64_t k = 0; k < d; k++) {
                const double vq = g->v[k];
                double *row = f->RS + k * L;
                f->P[k] = f->P[k] - vq * (double)b;
                for (int64_t l = 0; l < L; l++) row[l] = row[l] - vq * (double)N[l];
            }
        }
    }
    const double cP = (double)f->cnt, min_leaf = (double)c->min_leaf, whole = sumsq(f->P, d) / cP;
    const double *cnt = f->A + d * L;
    double best = -INFINITY;
    for (int64_t l = 0; l < L; l++) {
        const double cA = cnt[l], cB = cP - cA;
        double drop = -INFINITY;
        if (cA >= min_leaf && cB >= min_leaf) {
            double a = 0.0, b = 0.0;
            for (int64_t k = 0; k < d; k++) {
                const double x = f->RS[k * L + l], y = f->P[k] - x;
                a = a + x * x;
                b = b + y * y;
            }
            drop = (a / cA + b / cB) - whole;
        }
        f->drop[l] = drop;
        if (drop > best) best = drop;
    }
    /* the lowest l within tie_tol of the best: rounding decides no tie (two splits that cut
     * the leaf's rows alike, sides swapped, drop the same but for rounding) */
    int64_t best_l = -1;
    if (best > -INFINITY)
        for (int64_t l = 0; l < L && best_l < 0; l++)
            if (f->drop[l] >= best - c->tie_tol) best_l = l;
    f->best_l = best_l;
    f->best_drop = best_l >= 0 ? f->drop[best_l] : -INFINITY;
    if (best_l >= 0)
        for (int64_t k = 0; k < d; k++) f->sA[k] = f->RS[k * L + best_l];
}

/* Every leaf's and the root's best split; the leaves shared among threads, each
 * evaluated by one. */
static void evaluate_all(const ap_ctx *c) {
    const int64_t items = c->n_order + 1; /* the last: the root */
    const double work = (double)items * (double)items * (double)c->L * (double)(c->d > 0 ? c->d : 1);
    ap_leaf *root = (ap_leaf *)&c->root;
    if (c->n_threads > 1 && items > 1 && work >= AP_PAR_WORK) {
        #pragma omp parallel for schedule(dynamic, 1) num_threads(dfg_team(c->n_threads))
        for (int64_t i = 0; i < items; i++) {
            if (i < c->n_order)
                evaluate(c, &c->leaf[c->order[i]], c->order[i]);
            else
                evaluate(c, root, -1);
        }
    } else {
        for (int64_t i = 0; i < c->n_order; i++) evaluate(c, &c->leaf[c->order[i]], c->order[i]);
        evaluate(c, root, -1);
    }
}

/* The leaves (slots) by term, then node id (the slots of a term grow with its node ids). */
static void sort_leaves(ap_ctx *c) {
    c->n_order = 0;
    for (int64_t t = 0; t < c->n_terms; t++)
        for (int64_t s = 0; s < c->n_slots; s++)
            if (c->leaf[s].alive && c->leaf[s].term == t) c->order[c->n_order++] = s;
}

/* Leaf f's value: the mean of R_t over its rows, the other terms' values as they are now. */
static void backfit_leaf(const ap_ctx *c, ap_leaf *f, int64_t slot) {
    const int64_t d = c->d;
    for (int64_t k = 0; k < d; k++) f->P[k] = f->tot[k];
    for (int64_t i = 0; i < c->n_order; i++) {
        const int64_t q = c->order[i];
        const ap_leaf *g = &c->leaf[q];
        if (g->term == f->term) continue;
        int64_t b;
        (void)shared(c, slot, q, &b);
        if (b == 0) continue;
        for (int64_t k = 0; k < d; k++) f->P[k] = f->P[k] - g->v[k] * (double)b;
    }
    for (int64_t k = 0; k < d; k++) f->v[k] = f->P[k] / (double)f->cnt;
}

/* N[l0 + l] += the rows' s_{l0 + l} for l < m <= AP_CHUNK (counts are exact in any order).
 * Up to 255 rows at a time are summed in bytes, eight to a 64-bit word (entries 0 or 1: no
 * byte carries into the next), then added to N. */
static void count_share(const uint8_t *S, int64_t L, const int64_t *rows, int64_t nr, int32_t *N, int64_t l0,
                        int64_t m) {
    enum { WORDS = AP_CHUNK / 8 };
    uint64_t acc[WORDS];
    uint8_t bytes[AP_CHUNK];
    const int64_t full = m / 8; /* words of eight literals; the rest byte by byte */
    for (int64_t i = 0; i < nr;) {
        const int64_t end = nr - i > 255 ? i + 255 : nr;
        memset(acc, 0, sizeof(acc));
        memset(bytes, 0, sizeof(bytes));
        for (; i < end; i++) {
            const uint8_t *s = S + rows[i] * L + l0;
            if (full == WORDS) { /* (a fixed trip count: unrolled whole) */
                for (int64_t j = 0; j < WORDS; j++) {
                    uint64_t w;
                    memcpy(&w, s + 8 * j, 8);
                    acc[j] += w;
                }
            } else {
                for (int64_t j = 0; j < full; j++) {
                    uint64_t w;
                    memcpy(&w, s + 8 * j, 8);
                    acc[j] += w;
                }
                for (int64_t l = 8 * full; l < m; l++) bytes[l] = (uint8_t)(bytes[l] + s[l]);
            }
        }
        memcpy(bytes, acc, (size_t)(8 * full)); /* the words' bytes, as they were loaded */
        for (int64_t l = 0; l < m; l++) N[l0 + l] += bytes[l];
    }
}

/* The counts leaf `small` (slot; rows: its rows in order) shares with the leaves of the
 * other terms: per other term, its rows grouped by that term's leaf (row order kept),
 * each group counted; the groups' literal shares spread over threads. */
static int count_pairs(ap_ctx *c, int64_t small, const int64_t *rows, int64_t nr) {
    ap_leaf *f = &c->leaf[small];
    const int64_t L = c->L, n_chunks = (L + AP_CHUNK - 1) / AP_CHUNK;
    int64_t *grouped = c->rows_group, *at = c->group_at;
    for (int64_t u = 0; u < c->n_terms; u++) {
        if (u == f->term) continue;
        const int32_t *where = c->leaf_of[u];
        int64_t n_groups = 0;
        for (int64_t i = 0; i < nr; i++) f->both[where[rows[i]]]++;
        int64_t start = 0;
        for (int64_t i = 0; i < c->n_order; i++) { /* u's leaves, in order: their groups' starts */
            const int64_t q = c->order[i];
            if (c->leaf[q].term != u || f->both[q] == 0) continue;
            if (!(f->pair[q] = (int32_t *)calloc((size_t)(L > 0 ? L : 1), sizeof(int32_t)))) return DFG_ENOMEM;
            at[q] = start;
            c->group_leaf[n_groups] = q;
            c->group_start[n_groups++] = start;
            start += f->both[q];
        }
        c->group_start[n_groups] = start;
        for (int64_t i = 0; i < nr; i++) grouped[at[where[rows[i]]]++] = rows[i];
        const int64_t items = n_groups * n_chunks;
        const int par = c->n_threads > 1 && items > 1 && (double)nr * (double)L >= 4.0 * AP_PAR_WORK;
        if (par) {
            #pragma omp parallel for schedule(dynamic, 1) num_threads(dfg_team(c->n_threads))
            for (int64_t it = 0; it < items; it++) {
                const int64_t g = it / n_chunks, l0 = (it % n_chunks) * AP_CHUNK;
                const int64_t s0 = c->group_start[g], m = l0 + AP_CHUNK < L ? AP_CHUNK : L - l0;
                count_share(c->S, L, grouped + s0, c->group_start[g + 1] - s0, f->pair[c->group_leaf[g]], l0, m);
            }
        } else {
            for (int64_t it = 0; it < items; it++) {
                const int64_t g = it / n_chunks, l0 = (it % n_chunks) * AP_CHUNK;
                const int64_t s0 = c->group_start[g], m = l0 + AP_CHUNK < L ? AP_CHUNK : L - l0;
                count_share(c->S, L, grouped + s0, c->group_start[g + 1] - s0, f->pair[c->group_leaf[g]], l0, m);
            }
        }
    }
    return DFG_OK;
}

/* The counts leaf `large` shares with the other terms' leaves: its parent's (slot; -1 the
 * root, whose counts with a leaf are the leaf's own) less its sibling `small`'s. */
static int subtract_pairs(ap_ctx *c, int64_t large, int64_t small, int64_t parent) {
    ap_leaf *f = &c->leaf[large];
    const ap_leaf *g = &c->leaf[small];
    const int64_t L = c->L, d = c->d;
    for (int64_t i = 0; i < c->n_order; i++) {
        const int64_t q = c->order[i];
        const ap_leaf *h = &c->leaf[q];
        if (h->term == f->term) continue;
        int64_t bp;
        const int32_t *Np = NULL;
        const double *Cp = NULL;
        if (parent < 0) {
            bp = h->cnt;
            Cp = h->A + d * L;
        } else {
            Np = shared(c, parent, q, &bp);
        }
        const int64_t b = bp - g->both[q];
        f->both[q] = b;
        if (b == 0) continue;
        int32_t *N = f->pair[q] = (int32_t *)malloc((size_t)(L > 0 ? L : 1) * sizeof(int32_t));
        if (!N) return DFG_ENOMEM;
        const int32_t *Ns = g->pair[q];
        for (int64_t l = 0; l < L; l++) {
            const int32_t p = Cp ? (int32_t)Cp[l] : Np[l];
            N[l] = Ns ? p - Ns[l] : p;
        }
    }
    return DFG_OK;
}

/* Leaf `slot` is split: its buffers and the counts the later slots share with it go. */
static void retire(ap_ctx *c, int64_t slot) {
    for (int64_t s = slot + 1; s < c->n_slots; s++) {
        ap_leaf *g = &c->leaf[s];
        if (!g->pair) continue;
        free(g->pair[slot]);
        g->pair[slot] = NULL;
        g->both[slot] = 0;
    }
    free_leaf(&c->leaf[slot], slot);
}

/* Step st: node `node` of term t (the root of a new term where parent < 0; else the leaf
 * in slot parent) split on l, its then side valued v_then, its else side v_else. */
static int split_leaf(ap_ctx *c, int64_t st, int64_t t, int64_t parent, int64_t l, const double *v_then,
                      const double *v_else) {
    const int64_t n = c->n, L = c->L, d = c->d;
    int status;
    if (parent < 0) { /* a new term */
        if (!(c->leaf_of[t] = (int32_t *)malloc((size_t)(n > 0 ? n : 1) * sizeof(int32_t)))) return DFG_ENOMEM;
        c->term_splits[t] = 0;
    }
    int32_t *where = c->leaf_of[t];
    int64_t n_then = 0, n_else = 0;
    for (int64_t r = 0; r < n; r++) {
        if (parent >= 0 && where[r] != parent) continue;
        if (c->S[r * L + l])
            c->rows_then[n_then++] = r;
        else
            c->rows_else[n_else++] = r;
    }
    const int64_t s_then = 2 * st, s_else = 2 * st + 1, k = c->term_splits[t];
    c->n_slots = 2 * st + 2;
    ap_leaf *ft = &c->leaf[s_then], *fe = &c->leaf[s_else];
    if ((status = alloc_leaf(c, ft, s_then)) != DFG_OK) return status;
    if ((status = alloc_leaf(c, fe, s_else)) != DFG_OK) return status;
    ft->term = fe->term = t;
    ft->node = 2 * k + 1;
    fe->node = 2 * k + 2;
    memcpy(ft->v, v_then, (size_t)d * sizeof(double));
    memcpy(fe->v, v_else, (size_t)d * sizeof(double));
    c->term_splits[t] = k + 1;
    if (parent < 0) c->n_terms = t + 1;
    /* the smaller side summed over its rows, the larger one's sums its parent's less those
     * (the counts exact; the sums of T0 to rounding) */
    const int then_small = n_then <= n_else;
    const int64_t small = then_small ? s_then : s_else, large = then_small ? s_else : s_then;
    {
        ap_leaf *fs = &c->leaf[small], *fl = &c->leaf[large];
        const ap_leaf *fp = parent < 0 ? &c->root : &c->leaf[parent];
        leaf_sums(c, then_small ? c->rows_then : c->rows_else, then_small ? n_then : n_else, fs);
        for (int64_t i = 0; i < c->W * L; i++) fl->A[i] = fp->A[i] - fs->A[i];
        for (int64_t j = 0; j < d; j++) fl->tot[j] = fp->tot[j] - fs->tot[j];
        fl->cnt = fp->cnt - fs->cnt;
    }
    status = count_pairs(c, small, then_small ? c->rows_then : c->rows_else, then_small ? n_then : n_else);
    if (status != DFG_OK) return status;
    if ((status = subtract_pairs(c, large, small, parent)) != DFG_OK) return status;
    for (int64_t i = 0; i < n_then; i++) where[c->rows_then[i]] = (int32_t)s_then;
    for (int64_t i = 0; i < n_else; i++) where[c->rows_else[i]] = (int32_t)s_else;
    ft->alive = fe->alive = 1;
    if (parent >= 0) retire(c, parent);
    sort_leaves(c);
    return DFG_OK;
}

static int check_inputs(const uint8_t *S, const double *T, int64_t n, int64_t L, int64_t d, int64_t max_splits,
                        int64_t min_leaf, int64_t backfit_rounds, double rel_tol, const int64_t *step_term,
                        const int64_t *step_node, const int64_t *step_split, const int64_t *n_steps,
                        const double *base, const double *leaf_values, int n_threads) {
    if (!n_steps || n < 0 || L < 0 || d < 0 || max_splits < 0 || min_leaf < 1 || backfit_rounds < 0 ||
        !isfinite(rel_tol) || rel_tol < 0.0 || n_threads < 1)
        return DFG_EINVAL;
    if (n > INT32_MAX || max_splits > INT32_MAX / 2 || L > INT64_MAX / 8 - 1 || d > INT64_MAX / 8 - 1 ||
        (L > 0 && n > INT64_MAX / 8 / L) || (d > 0 && n > INT64_MAX / 8 / d) ||
        (L > 0 && d + 1 > INT64_MAX / 8 / L) || (d > 0 && 2 * max_splits > INT64_MAX / 8 / d))
        return DFG_EINVAL;
    if ((n * L > 0 && !S) || (n * d > 0 && !T) || (d > 0 && !base) ||
        (max_splits > 0 && (!step_term || !step_node || !step_split)) || (max_splits * d > 0 && !leaf_values))
        return DFG_EINVAL;
    /* S's values (0 or 1) and T's (finite) are the caller's check: a split's side is read as
       S != 0, and no value indexes memory */
    return DFG_OK;
}

int dfg_additive_path_grow(const uint8_t *S, const double *T, int64_t n_samples, int64_t n_splits,
                           int64_t n_targets, int64_t max_splits, int64_t min_leaf, int64_t backfit_rounds,
                           double rel_tol, int64_t *step_term, int64_t *step_node, int64_t *step_split,
                           int64_t *n_steps, double *base, double *leaf_values, int n_threads,
                           const volatile int *stop) {
    int status = check_inputs(S, T, n_samples, n_splits, n_targets, max_splits, min_leaf, backfit_rounds, rel_tol,
                              step_term, step_node, step_split, n_steps, base, leaf_values, n_threads);
    if (status != DFG_OK) return status;
    const int64_t n = n_samples, L = n_splits, d = n_targets;
    *n_steps = 0;
    for (int64_t i = 0; i < 2 * max_splits * d; i++) leaf_values[i] = NAN;
    if (n == 0) {
        for (int64_t k = 0; k < d; k++) base[k] = NAN; /* the mean of no rows */
        return DFG_OK;
    }
    for (int64_t k = 0; k < d; k++) base[k] = 0.0;
    for (int64_t r = 0; r < n; r++)
        for (int64_t k = 0; k < d; k++) base[k] = base[k] + T[r * d + k];
    for (int64_t k = 0; k < d; k++) base[k] = base[k] / (double)n;
    if (L == 0 || min_leaf > n / 2 || max_splits == 0) return DFG_OK;

    ap_ctx ctx;
    memset(&ctx, 0, sizeof(ctx));
    ap_ctx *c = &ctx;
    c->S = S;
    c->n = n;
    c->L = L;
    c->d = d;
    c->W = d + 1;
    c->min_leaf = min_leaf;
    c->n_threads = dfg_team(n_threads);
    c->avx2 = dfg_cpu_use_avx2();
    double *T0 = NULL, *v_then = NULL, *v_else = NULL;
    int64_t *all_rows = NULL;
    AP_ALLOC(T0, n * d, double);
    AP_ALLOC(v_then, d, double);
    AP_ALLOC(v_else, d, double);
    AP_ALLOC(all_rows, n, int64_t);
    AP_ALLOC(c->leaf, 2 * max_splits, ap_leaf);
    AP_ALLOC(c->term_splits, max_splits, int64_t);
    AP_ALLOC(c->leaf_of, max_splits, int32_t *);
    AP_ALLOC(c->order, 2 * max_splits, int64_t);
    AP_ALLOC(c->rows_then, n, int64_t);
    AP_ALLOC(c->rows_else, n, int64_t);
    AP_ALLOC(c->rows_group, n, int64_t);
    AP_ALLOC(c->group_at, 2 * max_splits + 1, int64_t);
    AP_ALLOC(c->group_leaf, 2 * max_splits + 1, int64_t);
    AP_ALLOC(c->group_start, 2 * max_splits + 1, int64_t);
    if (!T0 || !v_then || !v_else || !all_rows || !c->leaf || !c->term_splits || !c->leaf_of || !c->order ||
        !c->rows_then || !c->rows_else || !c->rows_group || !c->group_at || !c->group_leaf || !c->group_start ||
        alloc_leaf(c, &c->root, -1) != DFG_OK) {
        status = DFG_ENOMEM;
        goto done;
    }
    c->T0 = T0;
    double sse = 0.0;
    for (int64_t r = 0; r < n; r++)
        for (int64_t k = 0; k < d; k++) {
            const double e = T[r * d + k] - base[k];
            T0[r * d + k] = e;
            sse = sse + e * e;
        }
    const double tol = rel_tol * (sse > 1e-300 ? sse : 1e-300);
    c->tie_tol = tol;
    for (int64_t r = 0; r < n; r++) all_rows[r] = r;
    leaf_sums(c, all_rows, n, &c->root);

    for (int64_t st = 0; st < max_splits; st++) {
        if (dfg_stop_requested(stop)) {
            status = DFG_EINTERRUPTED;
            goto done;
        }
        evaluate_all(c);
        /* the largest drop, and the first candidate within tie_tol of it (rounding) */
        const ap_leaf *root = &c->root;
        const double root_drop = root->best_l >= 0 ? root->best_drop + sumsq(root->P, d) / (double)n : -INFINITY;
        double best = root_drop;
        for (int64_t i = 0; i < c->n_order; i++)
            if (c->leaf[c->order[i]].best_drop > best) best = c->leaf[c->order[i]].best_drop;
        if (!(best > tol)) break;
        int64_t choice = -1; /* -1: a new term; else the leaf's slot */
        for (int64_t i = 0; i < c->n_order; i++)
            if (c->leaf[c->order[i]].best_drop >= best - c->tie_tol) {
                choice = c->order[i];
                break;
            }
        const ap_leaf *f = choice == -1 ? root : &c->leaf[choice];
        const int64_t l = f->best_l, t = choice == -1 ? c->n_terms : f->term, node = choice == -1 ? 0 : f->node;
        const double cA = f->A[d * L + l], cB = (double)f->cnt - cA;
        for (int64_t k = 0; k < d; k++) {
            v_then[k] = f->sA[k] / cA;
            v_else[k] = (f->P[k] - f->sA[k]) / cB;
        }
        step_term[st] = t;
        step_node[st] = node;
        step_split[st] = l;
        if ((status = split_leaf(c, st, t, choice, l, v_then, v_else)) != DFG_OK) goto done;
        *n_steps = st + 1;
        for (int64_t round = 0; round < backfit_rounds; round++) {
            if (dfg_stop_requested(stop)) {
                status = DFG_EINTERRUPTED;
                goto done;
            }
            for (int64_t i = 0; i < c->n_order; i++) /* by term, each term's leaves after the terms before */
                backfit_leaf(c, &c->leaf[c->order[i]], c->order[i]);
        }
    }
    for (int64_t s = 0; s < c->n_slots; s++)
        if (c->leaf[s].alive) memcpy(leaf_values + s * d, c->leaf[s].v, (size_t)d * sizeof(double));
done:
    if (c->leaf)
        for (int64_t s = 0; s < 2 * max_splits; s++) free_leaf(&c->leaf[s], s);
    if (c->leaf_of)
        for (int64_t t = 0; t < max_splits; t++) free(c->leaf_of[t]);
    free_leaf(&c->root, -1);
    free(c->leaf); free(c->term_splits); free(c->leaf_of); free(c->order); free(c->rows_then); free(c->rows_else);
    free(c->rows_group); free(c->group_at); free(c->group_leaf); free(c->group_start);
    free(T0); free(v_then); free(v_else); free(all_rows);
    return status;
}

/* The mean of R[rows] (m rows of d columns) into out, as NumPy's R[mask].mean(axis=0) rounds
 * it: one column pairwise (dfg_pairwise_sum, after NumPy's 0 start), several row by row. */
static void replay_mean(const double *R, int64_t d, const int64_t *rows, int64_t m, double *col, double *out) {
    if (d == 1) {
        for (int64_t i = 0; i < m; i++) col[i] = R[rows[i]];
        out[0] = (0.0 + dfg_pairwise_sum(col, m)) / (double)m;
        return;
    }
    for (int64_t k = 0; k < d; k++) out[k] = 0.0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t k = 0; k < d; k++) out[k] += R[rows[i] * d + k];
    for (int64_t k = 0; k < d; k++) out[k] /= (double)m;
}

int dfg_additive_replay(const uint8_t *S, const double *T0, int64_t n, int64_t L, int64_t d, const int64_t *steps,
                        int64_t m, int64_t backfit_rounds, double *values, int64_t *bad_step) {
    if (n < 1 || L < 1 || d < 1 || m < 0 || backfit_rounds < 0 || m > INT32_MAX / 2 || !bad_step ||
        n > INT64_MAX / 8 / (m + 1) / d || (m > 0 && (!S || !T0 || !steps || !values)))
        return DFG_EINVAL;
    *bad_step = -1;
    const int64_t N = 2 * m + 1; /* node ids of a term: below 2 (its splits) + 1 */
    int64_t *leaf = calloc((size_t)(n * (m + 1)), sizeof(int64_t));       /* per term: each row's node */
    double *fitted = calloc((size_t)(n * d * (m + 1)), sizeof(double));   /* per term: each row's value */
    double *total = calloc((size_t)(n * d), sizeof(double)), *R = malloc((size_t)(n * d) * sizeof(double));
    double *value = calloc((size_t)((m + 1) * N * d), sizeof(double));   /* per term and node */
    uint8_t *is_leaf = calloc((size_t)((m + 1) * N), sizeof(uint8_t));
    int64_t *n_split = calloc((size_t)(m + 1), sizeof(int64_t)), *rows = malloc((size_t)n * sizeof(int64_t));
    double *col = malloc((size_t)n * sizeof(double));
    int status = DFG_OK;
    if (!leaf || !fitted || !total || !R || !value || !is_leaf || !n_split || !rows || !col) {
        status = DFG_ENOMEM;
        goto done;
    }
    int64_t n_terms = 0, at = 0;
    for (int64_t i = 0; i < m; i++) { /* over the steps, each replayed as additive_value_path's */
        const int64_t term = steps[3 * i], node = steps[3 * i + 1], split = steps[3 * i + 2];
        if (term < 0 || term > n_terms || node < 0 || node >= N || split < 0 || split >= L ||
            (term < n_terms && !is_leaf[term * N + node]) || (term == n_terms && node != 0)) {
            status = DFG_EINVAL;
            goto done;
        }
        if (term == n_terms) is_leaf[N * n_terms++] = 1; /* a new term: its root a leaf of value 0 */
        int64_t *lf = leaf + term * n;
        const int64_t k = n_split[term], then_node = 2 * k + 1, else_node = 2 * k + 2;
        int64_t n_then = 0, n_else = 0;
        for (int64_t r = 0; r < n; r++)
            if (lf[r] == node) {
                if (S[r * L + split]) n_then++;
                else n_else++;
            }
        if (n_then == 0 || n_else == 0) {
            *bad_step = i;
            goto done;
        }
        for (int64_t r = 0; r < n; r++)
            if (lf[r] == node) lf[r] = S[r * L + split] ? then_node : else_node;
        n_split[term] = k + 1;
        is_leaf[term * N + node] = 0;
        is_leaf[term * N + then_node] = is_leaf[term * N + else_node] = 1;
        /* the new leaves' values, then backfit_rounds rounds over every term's leaves */
        for (int64_t round = -1; round < backfit_rounds; round++) {
            for (int64_t t = round < 0 ? term : 0; t < (round < 0 ? term + 1 : n_terms); t++) {
                const int64_t *lt = leaf + t * n;
                double *ft = fitted + t * n * d, *vt = value + t * N * d;
                for (int64_t j = 0; j < n * d; j++) R[j] = T0[j] - (total[j] - ft[j]);
                for (int64_t v = 0; v < 2 * n_split[t] + 1; v++) {
                    if (!is_leaf[t * N + v] || (round < 0 && v != then_node && v != else_node)) continue;
                    int64_t nr = 0;
                    for (int64_t r = 0; r < n; r++)
                        if (lt[r] == v) rows[nr++] = r;
                    replay_mean(R, d, rows, nr, col, vt + v * d);
                }
                for (int64_t r = 0; r < n; r++)
                    for (int64_t c = 0; c < d; c++) {
                        const double new = vt[lt[r] * d + c];
                        total[r * d + c] = (total[r * d + c] - ft[r * d + c]) + new;
                        ft[r * d + c] = new;
                    }
            }
        }
        for (int64_t t = 0; t < n_terms; t++) /* the model of i + 1 steps: each term's leaves in node order */
            for (int64_t v = 0; v < 2 * n_split[t] + 1; v++)
                if (is_leaf[t * N + v]) {
                    memcpy(values + at, value + (t * N + v) * d, (size_t)d * sizeof(double));
                    at += d;
                }
    }
done:
    free(leaf); free(fitted); free(total); free(R); free(value); free(is_leaf); free(n_split); free(rows); free(col);
    return status;
}
