#include "dfg_route.h"
#include "dfg_portable.h"

#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

int dfg_route_check(const dfg_route_tree *tree, int64_t n_boxes) {
    const int64_t I = tree->n_items;
    if (I < 1 || tree->n_terms < 1 || n_boxes < 0) return DFG_EINVAL;
    for (int64_t t = 0; t < tree->n_terms; t++)
        if (tree->roots[t] < 0 || tree->roots[t] >= I) return DFG_EINVAL;
    for (int64_t i = 0; i < I; i++) {
        int64_t b = tree->box[i];
        if (b < -1 || b >= n_boxes) return DFG_EINVAL;
        if (b >= 0 && (tree->then_item[i] <= i || tree->then_item[i] >= I || tree->else_item[i] <= i ||
                       tree->else_item[i] >= I))
            return DFG_EINVAL;
    }
    return DFG_OK;
}

/* Whether rule r holds on x, adding the comparisons a reader makes to *read: its
   conditions in order until the first that fails (dfg_route.h). */
static inline int rule_reading(const double *x, const dfg_ruleset *rules, const uint8_t *cost, int64_t r,
                               double *read) {
    for (int64_t c = rules->rule_ptr[r]; c < rules->rule_ptr[r + 1]; c++) {
        double v = dfg_as_compared(x[rules->feature[c]]);
        int is_set = rules->sets && rules->sets->kind[c] != DFG_KIND_NUMERIC;
        if (v != v) {
            if (rules->missing[c] != 1) { *read += 1.0; return 0; }
        } else if (!(is_set ? dfg_sets_test(rules->sets, c, v)
                            : (v > rules->lower[c]) & (v <= rules->upper[c]))) {
            *read += (is_set || v <= rules->lower[c]) ? 1.0 : (double)cost[c];
            return 0;
        }
        *read += (double)cost[c];
    }
    return 1;
}

/* The box items of a list in its order, when the tree is one (one term whose boxes are rule 0,
   1, ... in turn down the "else" branches, each "then" a leaf, the last "else" a leaf): their
   count, else -1. at (n_rules entries) gets each rule's item. */
static int64_t list_items(const dfg_route_tree *tree, int64_t n_rules, int64_t *at) {
    if (tree->n_terms != 1) return -1;
    int64_t i = tree->roots[0], r = 0;
    while (tree->box[i] >= 0) {
        if (tree->box[i] != r || r >= n_rules || tree->box[tree->then_item[i]] >= 0) return -1;
        at[r++] = i;
        i = tree->else_item[i];
    }
    return r == n_rules ? r : -1;
}

/* items of a list through dfg_rules_first (its dense boxes where they suit): 1 and *status
   set, or 0 where the tree is no list. */
static int route_list(const double *X, int64_t n_samples, int64_t n_features, const dfg_ruleset *boxes,
                      const dfg_route_tree *tree, const int64_t *label, int64_t *items, int n_threads,
                      int *status) {
    const int64_t R = boxes->n_rules;
    if (R == 0 || tree->n_terms != 1 || tree->box[tree->roots[0]] != 0) return 0; /* (a tree's walk, cheaply) */
    int64_t *at = (int64_t *)malloc((size_t)R * sizeof(int64_t));
    if (!at) {
        *status = DFG_ENOMEM;
        return 1;
    }
    if (list_items(tree, R, at) != R) {
        free(at);
        return 0;
    }
    int32_t *first = (int32_t *)malloc((size_t)(n_samples > 0 ? n_samples : 1) * sizeof(int32_t));
    if (!first) {
        free(at);
        *status = DFG_ENOMEM;
        return 1;
    }
    *status = dfg_rules_first(X, n_samples, n_features, boxes, first, n_threads);
    if (*status == DFG_OK || *status == DFG_ENAN) {
        int64_t last = at[R - 1];
        last = tree->else_item[last];  /* the default's leaf */
        for (int64_t n = 0; n < n_samples; n++) {
            const int64_t i = first[n] >= 0 ? tree->then_item[at[first[n]]] : last;
            items[n] = label ? label[i] : i;
        }
    }
    free(at); free(first);
    return 1;
}

int dfg_route(const double *X, int64_t n_samples, int64_t n_features, const dfg_ruleset *boxes,
              const dfg_route_tree *tree, const uint8_t *cost, const int64_t *label, int64_t *items,
              double *reads, int64_t *visits, int n_threads) {
    if (n_samples < 0 || n_threads < 1) return DFG_EINVAL;
    int status = dfg_ruleset_check(boxes, n_features);
    if (status == DFG_OK && reads && !cost && boxes->rule_ptr[boxes->n_rules] > 0) status = DFG_EINVAL;
    if (status == DFG_OK) status = dfg_route_check(tree, boxes->n_rules);
    if (status != DFG_OK) return status;
    /* a list read for its rows' leaves alone: the first rule that holds, tested rule by rule
       in dfg_rules.c (its dense boxes test a row's values at once where they suit) */
    if (items && !reads && !visits && route_list(X, n_samples, n_features, boxes, tree, label, items, n_threads,
                                                 &status))
        return status;
    int32_t *strict;
    int64_t n_strict;
    if (dfg_ruleset_strict_features(boxes, n_features, &strict, &n_strict) != DFG_OK) return DFG_ENOMEM;
    const int64_t T = tree->n_terms, I = tree->n_items;
    const int team = n_samples > 4096 ? dfg_team(n_threads) : 1;
    if (items && !reads && !visits) { /* predict's walk: the leaves alone */
        const int64_t *restrict box = tree->box, *restrict then_item = tree->then_item;
        const int64_t *restrict else_item = tree->else_item, *restrict roots = tree->roots;
        int nan = 0;
        #pragma omp parallel for schedule(static) num_threads(team) reduction(|:nan) if(team > 1)
        for (int64_t n = 0; n < n_samples; n++) {
            DFG_PREFETCH_ROW(X, n, n_samples, n_features);
            const double *x = X + n * n_features;
            for (int64_t s = 0; s < n_strict; s++) nan |= x[strict[s]] != x[strict[s]];
            for (int64_t t = 0; t < T; t++) {
                int64_t i = roots[t], b;
                while ((b = box[i]) >= 0) i = dfg_rule_covers(x, boxes, b) ? then_item[i] : else_item[i];
                items[n * T + t] = label ? label[i] : i;
            }
        }
        free(strict);
        return nan ? DFG_ENAN : DFG_OK;
    }
    /* one count per thread and item, added in thread order (integers: any order gives the same) */
    int64_t *counts = NULL;
    if (visits) {
        counts = (int64_t *)calloc((size_t)team * (size_t)I, sizeof(int64_t));
        if (!counts) { free(strict); return DFG_ENOMEM; }
    }
    int nan = 0;
    #pragma omp parallel num_threads(team) reduction(|:nan) if(team > 1)
    {
        int me = 0;
#ifdef _OPENMP
        me = omp_get_thread_num();
#endif
        int64_t *mine = counts ? counts + (int64_t)me * I : NULL;
        #pragma omp for schedule(static)
        for (int64_t n = 0; n < n_samples; n++) {
            DFG_PREFETCH_ROW(X, n, n_samples, n_features);
            const double *x = X + n * n_features;
            for (int64_t s = 0; s < n_strict; s++) nan |= x[strict[s]] != x[strict[s]];
            double read = 0.0;
            for (int64_t t = 0; t < T; t++) {
                int64_t i = tree->roots[t];
                if (mine) mine[i]++;
                while (tree->box[i] >= 0) {
                    int holds = reads ? rule_reading(x, boxes, cost, tree->box[i], &read)
                                      : dfg_rule_covers(x, boxes, tree->box[i]);
                    i = holds ? tree->then_item[i] : tree->else_item[i];
                    if (mine) mine[i]++;
                }
                if (items) items[n * T + t] = label ? label[i] : i;
            }
            if (reads) reads[n] = read;
        }
    }
    if (visits)
        for (int me = 0; me < team; me++)
            for (int64_t i = 0; i < I; i++) visits[i] += counts[(int64_t)me * I + i];
    free(counts);
    free(strict);
    return nan ? DFG_ENAN : DFG_OK;
}
