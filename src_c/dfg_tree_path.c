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
    dfg_refine_free(&c->search);
    free(c->node); free(c->rows); free(c->has); free(c->drop); free(c->len); free(c->boxes); free(live);
    free(c->slot_of); free(c->free_slots); free(c->slots); free(c->diff);
    return status;
}
