#include "dfg_list_path.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dfg_cpu.h"

/* Multiply-adds below which a region's split sums run on one thread. */
#define LP_PAR_WORK 262144
/* Literals per thread's share of the split sums (a share is summed by one thread, in row order). */
#define LP_CHUNK DFG_LIST_CHUNK

typedef struct {
    const uint8_t *S;
    const double *T;
    int64_t n, L, d, W; /* W = d + 1: the count last */
    int n_threads;
    int avx2;     /* the AVX2 build of the sums runs */
    double *acc;  /* acc[k L + l]: sum of T[., k] (k = d: 1) over a region's rows with s_l = 1 */
    double *tot;  /* the region's sums (W) */
    double *rest; /* scratch (W) */
    double *sl;   /* scratch (W) */
} lp_ctx;

static int box_holds(const uint8_t *srow, const int64_t *box, int64_t len, int64_t L) {
    for (int64_t i = 0; i < len; i++)
        if (!dfg_literal_holds(srow, box[i], L)) return 0;
    return 1;
}

static int cmp_int64(const void *a, const void *b) {
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* CART's drop of the squared error when a region (s_all, c_all) splits into (s, c) and the
 * rest; -inf where a side is empty. */
static double split_drop(lp_ctx *c, const double *s, double cs, const double *s_all, double c_all) {
    if (!(cs > 0.0 && cs < c_all)) return -INFINITY;
    for (int64_t k = 0; k < c->d; k++) c->rest[k] = s_all[k] - s[k];
    const double a = dfg_sumsq_np(s, c->d) / (cs > 1.0 ? cs : 1.0);
    const double b = dfg_sumsq_np(c->rest, c->d) / (c_all - cs > 1.0 ? c_all - cs : 1.0);
    return a + b - dfg_sumsq_np(s_all, c->d) / c_all;
}

/* acc over the rows (in row order) for the literals of chunk ch. */
static void region_chunk(lp_ctx *c, const int64_t *rows, int64_t nr, int64_t ch) {
    const int64_t l0 = ch * LP_CHUNK, m = l0 + LP_CHUNK < c->L ? LP_CHUNK : c->L - l0;
    dfg_list_literal_sums(c->S, c->T, c->L, c->d, rows, nr, 1.0, c->acc, l0, m, c->avx2);
}

/* acc and tot over the rows (in row order); the literals shared among threads in fixed
 * shares, each summed by one thread. */
static void region_sums(lp_ctx *c, const int64_t *rows, int64_t nr) {
    const int64_t L = c->L, d = c->d, W = c->W;
    const int64_t n_chunks = (L + LP_CHUNK - 1) / LP_CHUNK;
    const int par = c->n_threads > 1 && n_chunks > 1 && (double)nr * (double)L * (double)W >= LP_PAR_WORK;
    memset(c->acc, 0, (size_t)(W * L) * sizeof(double));
    if (par) {
        #pragma omp parallel for schedule(static) num_threads(dfg_team(c->n_threads))
        for (int64_t ch = 0; ch < n_chunks; ch++) region_chunk(c, rows, nr, ch);
    } else { /* (not a parallel region of one thread: its start costs more than small sums) */
        for (int64_t ch = 0; ch < n_chunks; ch++) region_chunk(c, rows, nr, ch);
    }
    memset(c->tot, 0, (size_t)W * sizeof(double));
    for (int64_t i = 0; i < nr; i++) {
        for (int64_t k = 0; k < d; k++) c->tot[k] = c->tot[k] + c->T[rows[i] * d + k];
        c->tot[d] = c->tot[d] + 1.0;
    }
}

/* The best single-literal split of a region (rows): its drop (-inf where none splits it)
 * and split l < L in *lit, the rows with s_l = 1 in *count; with at least 2 rows, the
 * region's sums are left in c->tot. */
static double best_split(lp_ctx *c, const int64_t *rows, int64_t nr, int64_t *lit, int64_t *count) {
    *lit = -1;
    *count = 0;
    if (nr < 2) return -INFINITY;
    region_sums(c, rows, nr);
    double best = -INFINITY;
    for (int64_t l = 0; l < c->L; l++) {
        for (int64_t k = 0; k < c->d; k++) c->sl[k] = c->acc[k * c->L + l];
        const double cl = c->acc[c->d * c->L + l];
        const double drop = split_drop(c, c->sl, cl, c->tot, c->tot[c->d]);
        if (drop > best) {
            best = drop;
            *lit = l;
            *count = (int64_t)cl;
        }
    }
    return best;
}

/* The rows of region g, in order. */
static int64_t rows_of(const int64_t *region, int64_t n, int64_t g, int64_t *rows) {
    int64_t nr = 0;
    for (int64_t r = 0; r < n; r++)
        if (region[r] == g) rows[nr++] = r;
    return nr;
}

static int check_inputs(const uint8_t *S, const double *T, int64_t n, int64_t L, int64_t d,
                        const int64_t *cand_ptr, int64_t n_candidates, const dfg_list_params *p,
                        const int64_t *step_kind, const int64_t *step_rule, const int64_t *step_ptr,
                        const int64_t *step_literals, int64_t capacity, const int64_t *n_steps,
                        int64_t *bound) {
    if (!p || !n_steps || !step_ptr || !cand_ptr || n < 0 || L < 0 || d < 0 || capacity < 0 ||
        n_candidates < 0 || p->max_rules < 0)
        return DFG_EINVAL;
    if (p->max_rules > 0 && (!step_kind || !step_rule)) return DFG_EINVAL;
    if (L > INT64_MAX / 4 || (L > 0 && n > INT64_MAX / 8 / L) || (d > 0 && n > INT64_MAX / 8 / d) ||
        d > INT64_MAX / 8 - 1 || (L > 0 && d + 1 > INT64_MAX / 8 / L) || p->max_rules > INT64_MAX / 8)
        return DFG_EINVAL;
    /* S's and T's values are the caller's check (dfg_refine_check) */
    if ((n * L > 0 && !S) || (n * d > 0 && !T) || (capacity > 0 && !step_literals)) return DFG_EINVAL;
    /* the literals and candidate boxes: dfg_list_search_grow checks them on every call */
    if (dfg_list_search_box_bound(cand_ptr, n_candidates, p->max_moves, bound) != DFG_OK) return DFG_EINVAL;
    if (*bound > INT64_MAX / 8 - p->max_rules) return DFG_EINVAL;
    const int64_t longest = *bound + p->max_rules; /* a split adds one literal to a box */
    if (p->max_rules > 0 && longest > capacity / p->max_rules) return DFG_EINVAL;
    return DFG_OK;
}

#define LP_ALLOC(ptr, count, type) ((ptr) = (type *)calloc((size_t)((count) > 0 ? (count) : 1), sizeof(type)))

int dfg_list_path_grow(const uint8_t *S, const double *T, int64_t n_samples, int64_t n_splits,
                       int64_t n_targets, const int64_t *literal_feature, const int64_t *literal_group,
                       const int64_t *cand_ptr, const int64_t *cand_literals, int64_t n_candidates,
                       const dfg_list_params *params, int64_t *step_kind, int64_t *step_rule,
                       int64_t *step_ptr, int64_t *step_literals, int64_t capacity, int64_t *n_steps,
                       int n_threads, const volatile int *stop) {
    int64_t bound = 0;
    int status = check_inputs(S, T, n_samples, n_splits, n_targets, cand_ptr, n_candidates, params, step_kind,
                              step_rule, step_ptr, step_literals, capacity, n_steps, &bound);
    if (status != DFG_OK) return status;
    if (n_threads < 1) return DFG_EINVAL;
    *n_steps = 0;
    step_ptr[0] = 0;
    const int64_t n = n_samples, L = n_splits, d = n_targets, W = d + 1, max_rules = params->max_rules;
    if (L == 0 || n < 2 || max_rules == 0) return DFG_OK;

    lp_ctx ctx = {S, T, n, L, d, W, n_threads, dfg_cpu_use_avx2(), NULL, NULL, NULL, NULL};
    lp_ctx *c = &ctx;
    dfg_list_params one = *params;
    one.max_rules = 1;
    const int64_t longest = bound + max_rules;
    int64_t *region = NULL, *rows = NULL, *rule_step = NULL, *split_lit = NULL, *append_box = NULL;
    int64_t *box_ptr = NULL, *box_lits = NULL;
    double *split_gain = NULL, *s_in = NULL;
    uint8_t *split_known = NULL, *S_left = NULL;
    double *T_left = NULL;
    LP_ALLOC(c->acc, W * L, double);
    LP_ALLOC(c->tot, W, double);
    LP_ALLOC(c->rest, W, double);
    LP_ALLOC(c->sl, W, double);
    LP_ALLOC(s_in, W, double);
    LP_ALLOC(region, n, int64_t);
    LP_ALLOC(rows, n, int64_t);
    LP_ALLOC(rule_step, max_rules, int64_t);
    LP_ALLOC(split_lit, max_rules, int64_t);
    LP_ALLOC(split_gain, max_rules, double);
    LP_ALLOC(split_known, max_rules, uint8_t);
    LP_ALLOC(append_box, longest, int64_t);
    LP_ALLOC(box_ptr, 2, int64_t);
    LP_ALLOC(box_lits, bound, int64_t);
    LP_ALLOC(S_left, n * L, uint8_t);
    LP_ALLOC(T_left, n * d, double);
    if (!c->acc || !c->tot || !c->rest || !c->sl || !s_in || !region || !rows || !rule_step || !split_lit ||
        !split_gain || !split_known || !append_box || !box_ptr || !box_lits || !S_left || !T_left) {
        status = DFG_ENOMEM;
        goto done;
    }

    /* the tolerance: rel_tol times the squared error of all rows about their mean */
    double tol;
    {
        for (int64_t k = 0; k < d; k++) c->sl[k] = 0.0;
        for (int64_t r = 0; r < n; r++)
            for (int64_t k = 0; k < d; k++) c->sl[k] = c->sl[k] + T[r * d + k];
        double sse = 0.0;
        for (int64_t r = 0; r < n; r++)
            for (int64_t k = 0; k < d; k++) {
                const double e = T[r * d + k] - c->sl[k] / (double)n;
                sse = sse + e * e;
            }
        tol = params->rel_tol * (sse > 1e-300 ? sse : 1e-300);
    }

    int64_t n_rules = 0, append_len = 0;
    int append_known = 0;
    double append_gain = -INFINITY;
    while (n_rules < max_rules) {
        if (dfg_stop_requested(stop)) {
            status = DFG_EINTERRUPTED;
            goto done;
        }
        if (!append_known) { /* the default's next rule */
            const int64_t nl = rows_of(region, n, n_rules, rows);
            append_gain = -INFINITY;
            append_len = 0;
            if (nl >= 2) {
                for (int64_t i = 0; i < nl; i++) {
                    memcpy(S_left + i * L, S + rows[i] * L, (size_t)L);
                    if (d > 0) memcpy(T_left + i * d, T + rows[i] * d, (size_t)d * sizeof(double));
                }
                int64_t nb = 0;
                status = dfg_list_search_grow(S_left, T_left, nl, L, d, literal_feature, literal_group, cand_ptr,
                                              cand_literals, n_candidates, &one, box_ptr, box_lits, bound, &nb,
                                              n_threads, stop);
                if (status != DFG_OK) goto done;
                /* CART's split of the default's region (its sums, c->tot, serve the box too) */
                int64_t l, count;
                const double drop = best_split(c, rows, nl, &l, &count);
                if (nb == 1) {
                    append_len = box_ptr[1];
                    memcpy(append_box, box_lits, (size_t)append_len * sizeof(int64_t));
                    double cin = 0.0;
                    for (int64_t k = 0; k < d; k++) s_in[k] = 0.0;
                    for (int64_t i = 0; i < nl; i++) {
                        if (!box_holds(S_left + i * L, append_box, append_len, L)) continue;
                        for (int64_t k = 0; k < d; k++) s_in[k] = s_in[k] + T_left[i * d + k];
                        cin += 1.0;
                    }
                    append_gain = split_drop(c, s_in, cin, c->tot, (double)nl);
                }
                if (drop > append_gain) { /* the split where it drops the loss more */
                    append_gain = drop;
                    append_len = 1;
                    append_box[0] = 2 * count > nl ? l + L : l;
                }
            }
            append_known = 1;
        }
        for (int64_t i = 0; i < n_rules; i++) { /* each rule's best split */
            if (split_known[i]) continue;
            const int64_t nr = rows_of(region, n, i, rows);
            int64_t count;
            split_gain[i] = best_split(c, rows, nr, &split_lit[i], &count);
            split_known[i] = 1;
        }
        double best = tol;
        int64_t move = -2; /* -1: append; i >= 0: split rule i */
        if (append_gain > best) {
            best = append_gain;
            move = -1;
        }
        for (int64_t i = 0; i < n_rules; i++)
            if (split_gain[i] > best) {
                best = split_gain[i];
                move = i;
            }
        if (move == -2) break;

        const int64_t t = *n_steps, at = step_ptr[t];
        int64_t *box = step_literals + at, len;
        if (move == -1) {
            len = append_len;
            memcpy(box, append_box, (size_t)len * sizeof(int64_t));
        } else {
            const int64_t src = rule_step[move];
            len = step_ptr[src + 1] - step_ptr[src];
            memmove(box, step_literals + step_ptr[src], (size_t)len * sizeof(int64_t));
            box[len++] = split_lit[move];
        }
        if (len > capacity - at || len > longest) { /* cannot happen: checked against the bound */
            status = DFG_EINVAL;
            goto done;
        }
        qsort(box, (size_t)len, sizeof(int64_t), cmp_int64);
        step_ptr[t + 1] = at + len;
        step_kind[t] = move == -1 ? DFG_STEP_APPEND : DFG_STEP_SPLIT;
        step_rule[t] = move == -1 ? n_rules : move;
        if (move == -1) { /* the default's rows in the box are the new rule's */
            for (int64_t r = 0; r < n; r++)
                if (region[r] == n_rules && !box_holds(S + r * L, box, len, L)) region[r] = n_rules + 1;
            rule_step[n_rules] = t;
            split_known[n_rules] = 0;
            append_known = 0;
        } else { /* rule `move`'s rows on the literal's side are the new rule's (at move) */
            const int64_t i = move, l = split_lit[i];
            for (int64_t r = 0; r < n; r++) {
                if (region[r] > i)
                    region[r]++;
                else if (region[r] == i && !S[r * L + l])
                    region[r] = i + 1;
            }
            memmove(rule_step + i + 1, rule_step + i, (size_t)(n_rules - i) * sizeof(int64_t));
            memmove(split_gain + i + 1, split_gain + i, (size_t)(n_rules - i) * sizeof(double));
            memmove(split_lit + i + 1, split_lit + i, (size_t)(n_rules - i) * sizeof(int64_t));
            memmove(split_known + i + 1, split_known + i, (size_t)(n_rules - i));
            rule_step[i] = t;
            split_known[i] = split_known[i + 1] = 0;
        }
        n_rules++;
        (*n_steps)++;
    }
done:
    free(c->acc); free(c->tot); free(c->rest); free(c->sl); free(s_in);
    free(region); free(rows); free(rule_step); free(split_lit); free(split_gain); free(split_known);
    free(append_box); free(box_ptr); free(box_lits); free(S_left); free(T_left);
    return status;
}
