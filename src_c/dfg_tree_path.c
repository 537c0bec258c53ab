#include "dfg_tree_path.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int check_inputs(const uint8_t *S, const double *T, int64_t n, int64_t L, int64_t d,
                        const int64_t *literal_feature, const int64_t *literal_group, const int64_t *cand_ptr,
                        const int64_t *cand_literals, int64_t n_candidates, const dfg_tree_params *p,
                        const int64_t *step_leaf, const int64_t *step_ptr, const int64_t *step_literals,
                        int64_t capacity, const int64_t *n_steps, int n_threads, int64_t *bound) {
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
    return DFG_OK;
}

typedef struct {
    dfg_refine search;
    int64_t n, bound, min_leaf;
    int64_t *node;  /* the leaf of each row */
    int64_t *rows;  /* scratch: a leaf's rows */
    uint8_t *has;   /* per node: its box is known and drops the loss */
    double *drop;   /* per node: its box's drop */
    int64_t *len;   /* per node: its box's length */
    int64_t *boxes; /* per node: its box (bound entries, sorted) */
} tp_ctx;

/* Node g's best box (its rows: those of node[] == g). */
static int search_leaf(tp_ctx *c, int64_t g) {
    int64_t nr = 0;
    for (int64_t r = 0; r < c->n; r++)
        if (c->node[r] == g) c->rows[nr++] = r;
    c->has[g] = 0;
    if (nr < 2 * c->min_leaf) return DFG_OK; /* no split leaves min_leaf rows on both sides */
    dfg_refine_left_rows(&c->search, c->rows, nr);
    int have;
    double score;
    int64_t *box = c->boxes + g * c->bound;
    const int status = dfg_refine_best(&c->search, box, &c->len[g], &c->drop[g], &score, &have);
    if (status != DFG_OK) return status;
    c->has[g] = (uint8_t)have;
    if (have) dfg_box_sort(box, c->len[g]);
    return DFG_OK;
}

#define TP_ALLOC(ptr, count, type) ((ptr) = (type *)calloc((size_t)((count) > 0 ? (count) : 1), sizeof(type)))

int dfg_tree_path_grow(const uint8_t *S, const double *T, int64_t n_samples, int64_t n_splits,
                       int64_t n_targets, const int64_t *literal_feature, const int64_t *literal_group,
                       const int64_t *cand_ptr, const int64_t *cand_literals, int64_t n_candidates,
                       const dfg_tree_params *params, int64_t *step_leaf, int64_t *step_ptr,
                       int64_t *step_literals, int64_t capacity, int64_t *n_steps, int n_threads,
                       const volatile int *stop) {
    int64_t bound = 0;
    int status = check_inputs(S, T, n_samples, n_splits, n_targets, literal_feature, literal_group, cand_ptr,
                              cand_literals, n_candidates, params, step_leaf, step_ptr, step_literals, capacity,
                              n_steps, n_threads, &bound);
    if (status != DFG_OK) return status;
    *n_steps = 0;
    step_ptr[0] = 0;
    const int64_t n = n_samples, L = n_splits, d = n_targets;
    if (L == 0 || n < 2 || params->max_leaves < 2) return DFG_OK;
    /* every leaf keeps a row: n - 1 steps at most */
    const int64_t max_steps = params->max_leaves - 1 < n - 1 ? params->max_leaves - 1 : n - 1;
    const int64_t n_nodes = 2 * max_steps + 1;
    if (bound > 0 && n_nodes > INT64_MAX / 8 / bound) return DFG_EINVAL;

    const dfg_refine_settings settings = {DFG_GAIN_TWO_SIDED, 0.0, params->literal_price, params->min_leaf,
                                          params->max_moves, params->n_starts, params->rel_tol};
    tp_ctx ctx;
    tp_ctx *c = &ctx;
    memset(c, 0, sizeof(tp_ctx));
    c->n = n;
    c->bound = bound;
    c->min_leaf = params->min_leaf;
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
    if (!c->node || !c->rows || !c->has || !c->drop || !c->len || !c->boxes || !live) {
        status = DFG_ENOMEM;
        goto done;
    }

    int64_t n_live = 1; /* the root, node 0: all rows (node[] starts at 0) */
    live[0] = 0;
    status = search_leaf(c, 0);
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
        for (int64_t r = 0; r < n; r++) {
            if (c->node[r] != g) continue;
            const uint8_t *srow = S + r * L;
            int64_t i = 0;
            while (i < len && dfg_literal_holds(srow, box[i], L)) i++;
            c->node[r] = i == len ? then_node : else_node;
        }
        /* the leaves stay in node id order: the new ones have the largest ids */
        memmove(live + pick, live + pick + 1, (size_t)(n_live - pick - 1) * sizeof(int64_t));
        live[n_live - 1] = then_node;
        live[n_live++] = else_node;
        if (t + 1 < max_steps) { /* a later step may split them */
            status = search_leaf(c, then_node);
            if (status == DFG_OK) status = search_leaf(c, else_node);
            if (status != DFG_OK) goto done;
        }
    }
done:
    dfg_refine_free(&c->search);
    free(c->node); free(c->rows); free(c->has); free(c->drop); free(c->len); free(c->boxes); free(live);
    return status;
}
