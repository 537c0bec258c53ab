#include "dfg_tree_path.h"
#include "dfg_list_loss.h" /* dfg_pairwise_sum */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TP_ALLOC(ptr, count, type) ((ptr) = (type *)calloc((size_t)((count) > 0 ? (count) : 1), sizeof(type)))

/* The validation rows' arrays (L splits, d targets), where given. */
static int check_scores(const dfg_tree_scores *v, int64_t L, int64_t d) {
    if (!v) return DFG_OK;
    const int64_t m = v->n_val;
    if (m < 0 || v->n_sizes < 1 || v->n_classes < 0 || (v->n_classes > 0 && v->n_classes != d) ||
        (v->n_classes == 0 && d < 1) || (L > 0 && m > INT64_MAX / 8 / L) || (m > 0 && v->n_sizes > INT64_MAX / 8 / m))
        return DFG_EINVAL;
    if (m == 0) return DFG_OK;
    /* the values (S_val 0 or 1, y finite, codes in range) are the caller's check: a code is
       compared, never an index */
    if ((L > 0 && !v->S) || !v->losses || !v->checks || (v->n_classes == 0 ? !v->y : !v->codes)) return DFG_EINVAL;
    return DFG_OK;
}

static int check_inputs(const uint8_t *S, const double *T, int64_t n, int64_t L, int64_t d,
                        const int64_t *literal_feature, const int64_t *literal_group, const int64_t *cand_ptr,
                        const int64_t *cand_literals, int64_t n_candidates, const dfg_tree_params *p,
                        const int64_t *step_leaf, const int64_t *step_ptr, const int64_t *step_literals,
                        int64_t capacity, const int64_t *n_steps, const dfg_tree_scores *scores, int n_threads,
                        int64_t *bound) {
    if (!p || !n_steps || !step_ptr || capacity < 0 || n_threads < 1) return DFG_EINVAL;
    if (p->max_leaves < 1 || p->min_leaf < 1 || p->max_moves < 0 || p->n_starts < 0 ||
        !isfinite(p->literal_price) || p->literal_price < 0.0 || !isfinite(p->rel_tol) || p->rel_tol < 0.0 ||
        p->max_leaves > INT64_MAX / 8 || n > INT64_MAX / 8)
        return DFG_EINVAL;
    if ((p->max_leaves > 1 && !step_leaf) || (capacity > 0 && !step_literals)) return DFG_EINVAL;
    if (dfg_refine_check(S, T, n, L, d, literal_feature, literal_group, cand_ptr, cand_literals, n_candidates,
                         p->max_moves, bound) != DFG_OK)
        return DFG_EINVAL;
    if (p->max_leaves > 1 && *bound > capacity / (p->max_leaves - 1)) return DFG_EINVAL;
    return check_scores(scores, L, d);
}

/* ---------------------------------------------------------------- validation scores */

typedef struct {
    const dfg_tree_scores *v;
    const uint8_t *S;
    const double *T;
    int64_t n, L, d;
    int64_t *vnode;    /* the leaf of each validation row */
    int64_t *cnt;      /* per literal of a box: the split leaf's training rows where it holds */
    int64_t *order;    /* a box's literals as read */
    double *all_mean;  /* d: the mean of all training rows (a child without rows takes it) */
    double *then_out;  /* d: the outputs of a step's children */
    double *else_out;
    double *col;       /* n: a child's targets, gathered for the pairwise sum */
    int64_t *rows;     /* n: a child's training rows */
} ts_ctx;

static void ts_free(ts_ctx *s) {
    free(s->vnode); free(s->cnt); free(s->order); free(s->all_mean); free(s->then_out); free(s->else_out);
    free(s->col); free(s->rows);
}

/* Node g's output (out, d) from node[] (the training rows' nodes), as a child's. */
static void ts_child_output(ts_ctx *s, const int64_t *node, int64_t g, double *out) {
    const int64_t n = s->n, d = s->d;
    int64_t nr = 0;
    for (int64_t r = 0; r < n; r++)
        if (node[r] == g) s->rows[nr++] = r;
    if (nr == 0) {
        memcpy(out, s->all_mean, (size_t)d * sizeof(double));
        return;
    }
    if (d == 1) { /* NumPy sums one column pairwise */
        for (int64_t i = 0; i < nr; i++) s->col[i] = s->T[s->rows[i]];
        out[0] = dfg_pairwise_sum(s->col, nr) / (double)nr;
        return;
    }
    for (int64_t k = 0; k < d; k++) out[k] = 0.0;
    for (int64_t i = 0; i < nr; i++) {
        const double *trow = s->T + s->rows[i] * d;
        for (int64_t k = 0; k < d; k++) out[k] += trow[k];
    }
    for (int64_t k = 0; k < d; k++) out[k] /= (double)nr;
}

/* The loss of a validation row v in a leaf of output out. */
static double ts_loss(const ts_ctx *s, const double *out, int64_t v) {
    if (s->v->n_classes == 0) {
        const double e = out[0] - s->v->y[v];
        return e * e;
    }
    int64_t best = 0; /* the first largest, as np.argmax */
    for (int64_t k = 1; k < s->v->n_classes; k++)
        if (out[k] > out[best]) best = k;
    return best == s->v->codes[v] ? 0.0 : 1.0;
}

/* Sets up the scores: the root's row (every validation row in leaf 0, no comparison) and
 * the mean of all training rows; its buffers freed by ts_free, either way. */
static int ts_init(ts_ctx *s, const dfg_tree_scores *v, const uint8_t *S, const double *T, int64_t n, int64_t L,
                   int64_t d, int64_t bound) {
    memset(s, 0, sizeof(ts_ctx));
    s->v = v;
    s->S = S;
    s->T = v->outputs ? v->outputs : T; /* what a leaf's output is the mean of */
    T = s->T;
    s->n = n;
    s->L = L;
    s->d = d;
    const int64_t m = v->n_val;
    TP_ALLOC(s->vnode, m, int64_t);
    TP_ALLOC(s->cnt, bound, int64_t);
    TP_ALLOC(s->order, bound, int64_t);
    TP_ALLOC(s->all_mean, d, double);
    TP_ALLOC(s->then_out, d, double);
    TP_ALLOC(s->else_out, d, double);
    TP_ALLOC(s->col, n, double);
    TP_ALLOC(s->rows, n, int64_t);
    if (!s->vnode || !s->cnt || !s->order || !s->all_mean || !s->then_out || !s->else_out || !s->col || !s->rows)
        return DFG_ENOMEM;
    /* the root's output: its rows' sums one row at a time (the reference's np.add.at), 0
       without rows; all rows' mean as a child's (NumPy's reduction) */
    double *out = s->then_out;
    for (int64_t k = 0; k < d; k++) out[k] = 0.0;
    for (int64_t r = 0; r < n; r++)
        for (int64_t k = 0; k < d; k++) out[k] += T[r * d + k];
    for (int64_t k = 0; k < d; k++) out[k] = n > 0 ? out[k] / (double)n : 0.0;
    memcpy(s->all_mean, out, (size_t)d * sizeof(double));
    if (d == 1 && n > 0) s->all_mean[0] = dfg_pairwise_sum(T, n) / (double)n;
    if (v->node_outputs) memcpy(v->node_outputs, s->all_mean, (size_t)d * sizeof(double));
    for (int64_t i = 0; i < m; i++) {
        v->losses[i] = ts_loss(s, out, i);
        v->checks[i] = 0.0;
    }
    return DFG_OK;
}

/* Row t + 1 of the scores (where within n_sizes): step t split leaf g by box (len literals)
 * into then_node and else_node, node[] the training rows' nodes after it. */
static void ts_step(ts_ctx *s, const int64_t *node, int64_t t, int64_t g, const int64_t *box, int64_t len,
                    int64_t then_node, int64_t else_node) {
    const dfg_tree_scores *v = s->v;
    const int64_t m = v->n_val, L = s->L, d = s->d;
    const int scored = t + 1 < v->n_sizes;
    if (!scored && !v->node_outputs) return;
    ts_child_output(s, node, then_node, s->then_out);
    ts_child_output(s, node, else_node, s->else_out);
    if (v->node_outputs) {
        memcpy(v->node_outputs + then_node * d, s->then_out, (size_t)d * sizeof(double));
        memcpy(v->node_outputs + else_node * d, s->else_out, (size_t)d * sizeof(double));
    }
    if (!scored) return;
    /* as printed: the literal the leaf's training rows hold least often first */
    for (int64_t i = 0; i < len; i++) s->cnt[i] = 0;
    for (int64_t r = 0; r < s->n; r++) {
        if (node[r] != then_node && node[r] != else_node) continue;
        const uint8_t *srow = s->S + r * L;
        for (int64_t i = 0; i < len; i++) s->cnt[i] += dfg_literal_holds(srow, box[i], L);
    }
    for (int64_t i = 0; i < len; i++) { /* stable insertion sort by count */
        int64_t j = i;
        while (j > 0 && s->cnt[s->order[j - 1]] > s->cnt[i]) {
            s->order[j] = s->order[j - 1];
            j--;
        }
        s->order[j] = i;
    }
    const double *loss0 = v->losses + t * m, *check0 = v->checks + t * m;
    double *loss1 = v->losses + (t + 1) * m, *check1 = v->checks + (t + 1) * m;
    if (m > 0) {
        memcpy(loss1, loss0, (size_t)m * sizeof(double));
        memcpy(check1, check0, (size_t)m * sizeof(double));
    }
    for (int64_t q = 0; q < m; q++) {
        if (s->vnode[q] != g) continue;
        const uint8_t *srow = v->S + q * L;
        int64_t i = 0;
        while (i < len && dfg_literal_holds(srow, box[s->order[i]], L)) i++;
        const int holds = i == len;
        check1[q] += (double)(holds ? len : i + 1);
        s->vnode[q] = holds ? then_node : else_node;
        loss1[q] = ts_loss(s, holds ? s->then_out : s->else_out, q);
    }
}

/* Rows from..n_sizes - 1 repeat row from - 1. */
static void ts_repeat(const dfg_tree_scores *v, int64_t from) {
    const int64_t m = v->n_val;
    if (m == 0) return;
    for (int64_t k = from; k < v->n_sizes; k++) {
        memcpy(v->losses + k * m, v->losses + (k - 1) * m, (size_t)m * sizeof(double));
        memcpy(v->checks + k * m, v->checks + (k - 1) * m, (size_t)m * sizeof(double));
    }
}

/* Bytes of leaves' kept sums at most (a leaf whose sums find no room is split by summing
 * both children anew). */
#define TP_SUMS_BYTES ((int64_t)1 << 28)

typedef struct {
    dfg_refine search;
    int64_t n, bound, min_leaf, W, L;
    int64_t *node;  /* the leaf of each row */
    int64_t *rows;  /* scratch: a leaf's rows */
    uint8_t *has;   /* per node: its box is known and drops the loss */
    double *drop;   /* per node: its box's drop */
    int64_t *len;   /* per node: its box's length */
    int64_t *boxes; /* per node: its box (bound entries, sorted) */
    /* a leaf's sums (its literals' W L, then its W totals), kept where it has a box for its
       children's: the larger child's are the leaf's less the smaller child's */
    int64_t slot_size, n_free;
    double *slots, *diff;
    int64_t *free_slots, *slot_of; /* slot_of per node: -1 where none */
} tp_ctx;

/* Left is node g's rows (their number in *nr), its sums from sums (W L, then W) or anew. */
static void set_leaf(tp_ctx *c, int64_t g, const double *sums, int64_t *nr) {
    *nr = 0;
    for (int64_t r = 0; r < c->n; r++)
        if (c->node[r] == g) c->rows[(*nr)++] = r;
    dfg_refine_left_rows(&c->search, c->rows, *nr, sums, sums ? sums + c->W * c->L : NULL);
}

/* Node g's best box, left being its nr rows; its sums kept where it has one and room. */
static int search_leaf(tp_ctx *c, int64_t g, int64_t nr) {
    c->has[g] = 0;
    c->slot_of[g] = -1;
    if (nr < 2 * c->min_leaf) return DFG_OK; /* no split leaves min_leaf rows on both sides */
    int have;
    double score;
    int64_t *box = c->boxes + g * c->bound;
    const int status = dfg_refine_best(&c->search, box, &c->len[g], &c->drop[g], &score, &have);
    if (status != DFG_OK) return status;
    c->has[g] = (uint8_t)have;
    if (!have) return DFG_OK;
    dfg_box_sort(box, c->len[g]);
    if (c->n_free > 0) {
        const int64_t slot = c->free_slots[--c->n_free], WL = c->W * c->L;
        double *kept = c->slots + slot * c->slot_size;
        memcpy(kept, c->search.lacc, (size_t)WL * sizeof(double));
        memcpy(kept + WL, c->search.ltot, (size_t)c->W * sizeof(double));
        c->slot_of[g] = slot;
    }
    return DFG_OK;
}

/* The best boxes of leaf g's children a and b (na, nb rows): the smaller's sums anew (a on
 * a tie), the larger's the leaf's less those where g kept its sums. */
static int search_children(tp_ctx *c, int64_t g, int64_t a, int64_t na, int64_t b, int64_t nb) {
    const int64_t small = na <= nb ? a : b, large = na <= nb ? b : a;
    int64_t n_small, n_large;
    set_leaf(c, small, NULL, &n_small);
    const double *large_sums = NULL;
    const int64_t slot = c->slot_of[g];
    if (slot >= 0) {
        const int64_t WL = c->W * c->L;
        const double *kept = c->slots + slot * c->slot_size;
        for (int64_t i = 0; i < WL; i++) c->diff[i] = kept[i] - c->search.lacc[i];
        for (int64_t k = 0; k < c->W; k++) c->diff[WL + k] = kept[WL + k] - c->search.ltot[k];
        large_sums = c->diff;
        c->free_slots[c->n_free++] = slot;
        c->slot_of[g] = -1;
    }
    int status = search_leaf(c, small, n_small);
    if (status != DFG_OK) return status;
    set_leaf(c, large, large_sums, &n_large);
    return search_leaf(c, large, n_large);
}

int dfg_tree_path_grow(const uint8_t *S, const double *T, int64_t n_samples, int64_t n_splits,
                       int64_t n_targets, const int64_t *literal_feature, const int64_t *literal_group,
                       const int64_t *cand_ptr, const int64_t *cand_literals, int64_t n_candidates,
                       const dfg_tree_params *params, int64_t *step_leaf, int64_t *step_ptr,
                       int64_t *step_literals, int64_t capacity, int64_t *n_steps,
                       const dfg_tree_scores *scores, int n_threads, const volatile int *stop) {
    int64_t bound = 0;
    int status = check_inputs(S, T, n_samples, n_splits, n_targets, literal_feature, literal_group, cand_ptr,
                              cand_literals, n_candidates, params, step_leaf, step_ptr, step_literals, capacity,
                              n_steps, scores, n_threads, &bound);
    if (status != DFG_OK) return status;
    *n_steps = 0;
    step_ptr[0] = 0;
    const int64_t n = n_samples, L = n_splits, d = n_targets;
    ts_ctx score_ctx;
    ts_ctx *sc = NULL; /* the validation rows' scores, where asked for */
    if (scores) {
        sc = &score_ctx;
        status = ts_init(sc, scores, S, T, n, L, d, bound);
        if (status != DFG_OK) {
            ts_free(sc);
            return status;
        }
    }
    /* every leaf keeps a row: n - 1 steps at most */
    const int64_t max_steps = params->max_leaves - 1 < n - 1 ? params->max_leaves - 1 : n - 1;
    const int64_t n_nodes = 2 * max_steps + 1;
    if (L == 0 || n < 2 || params->max_leaves < 2 || (bound > 0 && n_nodes > INT64_MAX / 8 / bound)) {
        status = L == 0 || n < 2 || params->max_leaves < 2 ? DFG_OK : DFG_EINVAL;
        if (sc) {
            if (status == DFG_OK) ts_repeat(scores, 1);
            ts_free(sc);
        }
        return status;
    }

    const dfg_refine_settings settings = {DFG_GAIN_TWO_SIDED, params->literal_price, params->min_leaf,
                                          params->max_moves, params->n_starts, params->rel_tol};
    tp_ctx ctx;
    tp_ctx *c = &ctx;
    memset(c, 0, sizeof(tp_ctx));
    c->n = n;
    c->bound = bound;
    c->min_leaf = params->min_leaf;
    c->W = d + 1;
    c->L = L;
    c->slot_size = c->W * L + c->W; /* within range: dfg_refine_check bounds (d + 1) L */
    /* as many slots as leaves may keep sums at once (the leaves, at most max_steps + 1), within
       TP_SUMS_BYTES: which leaves keep theirs depends on the growth so far, not on max_leaves */
    int64_t n_slots = TP_SUMS_BYTES / 8 / c->slot_size;
    if (n_slots > max_steps + 1) n_slots = max_steps + 1;
    int64_t *live = NULL; /* the leaves, by node id */
    status = dfg_refine_init(&c->search, S, T, n, L, d, literal_feature, literal_group, cand_ptr, cand_literals,
                             n_candidates, &settings, n_threads, stop);
    if (status != DFG_OK) goto done;
    TP_ALLOC(c->node, n, int64_t);
    TP_ALLOC(c->rows, n, int64_t);
    TP_ALLOC(c->has, n_nodes, uint8_t);
    TP_ALLOC(c->drop, n_nodes, double);
    TP_ALLOC(c->len, n_nodes, int64_t);
    TP_ALLOC(c->boxes, n_nodes * bound, int64_t);
    TP_ALLOC(live, max_steps + 1, int64_t);
    TP_ALLOC(c->slot_of, n_nodes, int64_t);
    TP_ALLOC(c->free_slots, n_slots, int64_t);
    TP_ALLOC(c->slots, n_slots * c->slot_size, double);
    TP_ALLOC(c->diff, c->slot_size, double);
    if (!c->node || !c->rows || !c->has || !c->drop || !c->len || !c->boxes || !live || !c->slot_of ||
        !c->free_slots || !c->slots || !c->diff) {
        status = DFG_ENOMEM;
        goto done;
    }

    for (int64_t i = 0; i < n_slots; i++) c->free_slots[i] = n_slots - 1 - i; /* slot 0 first */
    c->n_free = n_slots;
    int64_t n_live = 1, n_root; /* the root, node 0: all rows (node[] starts at 0) */
    live[0] = 0;
    set_leaf(c, 0, NULL, &n_root);
    status = search_leaf(c, 0, n_root);
    if (status != DFG_OK) goto done;
    for (int64_t t = 0; t < max_steps; t++) {
        if (dfg_stop_requested(stop)) {
            status = DFG_EINTERRUPTED;
            goto done;
        }
        int64_t pick = -1; /* the position in live of the leaf to split */
        for (int64_t i = 0; i < n_live; i++) {
            const int64_t g = live[i];
            if (c->has[g] && (pick < 0 || c->drop[g] > c->drop[live[pick]])) pick = i;
        }
        if (pick < 0) break;
        const int64_t g = live[pick], len = c->len[g], at = step_ptr[t];
        const int64_t *box = c->boxes + g * bound;
        if (len > capacity - at) { /* cannot happen: checked against the bound */
            status = DFG_EINVAL;
            goto done;
        }
        memcpy(step_literals + at, box, (size_t)len * sizeof(int64_t));
        step_ptr[t + 1] = at + len;
        step_leaf[t] = g;
        (*n_steps)++;
        const int64_t then_node = 2 * t + 1, else_node = 2 * t + 2;
        int64_t n_then = 0, n_else = 0;
        for (int64_t r = 0; r < n; r++) {
            if (c->node[r] != g) continue;
            const uint8_t *srow = S + r * L;
            int64_t i = 0;
            while (i < len && dfg_literal_holds(srow, box[i], L)) i++;
            if (i == len) {
                c->node[r] = then_node;
                n_then++;
            } else {
                c->node[r] = else_node;
                n_else++;
            }
        }
        if (sc) ts_step(sc, c->node, t, g, box, len, then_node, else_node);
        /* the leaves stay in node id order: the new ones have the largest ids */
        memmove(live + pick, live + pick + 1, (size_t)(n_live - pick - 1) * sizeof(int64_t));
        live[n_live - 1] = then_node;
        live[n_live++] = else_node;
        if (t + 1 < max_steps) { /* a later step may split them */
            status = search_children(c, g, then_node, n_then, else_node, n_else);
            if (status != DFG_OK) goto done;
        }
    }
done:
    if (sc) {
        if (status == DFG_OK) ts_repeat(scores, *n_steps + 1);
        ts_free(sc);
    }
    dfg_refine_free(&c->search);
    free(c->node); free(c->rows); free(c->has); free(c->drop); free(c->len); free(c->boxes); free(live);
    free(c->slot_of); free(c->free_slots); free(c->slots); free(c->diff);
    return status;
}
