#include "dfg_forest_sum.h"

#include <math.h>
#include <stdlib.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* Rows per task at most: a task's rows go down one tree after another, so each tree's nodes
   are read from memory once per task (a forest's nodes do not stay in cache from one tree
   to the next; a few thousand rows and their sums do). Tasks of at least FS_MIN_ROWS rows
   keep every thread busy below FS_ROWS rows a thread. */
#define FS_ROWS 4096
#define FS_MIN_ROWS 512

/* A node as the walk reads it: one record, so a step touches one cache line; child[0]
   where the row goes left, child[1] where it goes right (both -1 at a leaf). */
typedef struct {
    int32_t child[2];
    int32_t feature;
    int32_t missing_right;
    double threshold;
} fs_node;

/* The forest's nodes and roots copied into nodes and roots32, each value read once and
 * checked on the copy the walk reads (another thread writing the caller's arrays meanwhile
 * cannot make it read outside them): the sizes, roots from 0 increasing, a leaf's two
 * children -1, an internal node's children after it inside its tree and its feature in
 * [0, n_features). */
static int pack(const dfg_forest *f, int64_t n_features, fs_node *nodes, int32_t *roots32) {
    for (int64_t t = 0; t < f->n_trees; t++) {
        const int64_t root = f->roots[t];
        if (root < 0 || root >= f->n_nodes || (t == 0 ? root != 0 : root <= roots32[t - 1])) return DFG_EINVAL;
        roots32[t] = (int32_t)root;
    }
    for (int64_t t = 0; t < f->n_trees; t++) {
        const int64_t start = roots32[t], end = t + 1 < f->n_trees ? roots32[t + 1] : f->n_nodes;
        for (int64_t i = start; i < end; i++) {
            const int64_t l = f->left[i], r = f->right[i];
            fs_node *nd = nodes + i;
            nd->threshold = f->threshold[i];
            /* NaN goes left where missing_left says so; without it, right (the comparison) */
            nd->missing_right = f->missing_left ? f->missing_left[i] == 0 : 1;
            if (l == -1) {
                if (r != -1) return DFG_EINVAL;
                nd->child[0] = nd->child[1] = -1;
                nd->feature = 0;
                continue;
            }
            const int64_t feature = f->feature[i];
            if (l <= i || l >= end || r <= i || r >= end || feature < 0 || feature >= n_features) return DFG_EINVAL;
            nd->child[0] = (int32_t)l;
            nd->child[1] = (int32_t)r;
            nd->feature = (int32_t)feature;
        }
    }
    return DFG_OK;
}

/* Rows walked side by side: their loads overlap where one walk would wait for each. */
#define FS_LANES 8

/* The leaves of rows from..to - 1 (at most FS_LANES) in the tree at root. */
static inline void leaves_of(const fs_node *nodes, const float *X, int64_t n_features, int64_t from, int64_t to,
                             int32_t root, int32_t *leaf) {
    const int64_t m = to - from;
    int64_t active = m;
    for (int64_t j = 0; j < m; j++) leaf[j] = root;
    while (active > 0) {
        active = 0;
        for (int64_t j = 0; j < m; j++) {
            const fs_node *nd = nodes + leaf[j];
            if (nd->child[0] == -1) continue;
            const double v = (double)X[(from + j) * n_features + nd->feature];
            const int right = isnan(v) ? nd->missing_right : !(v <= nd->threshold);
            leaf[j] = nd->child[right];
            active++;
        }
    }
}

/* Rows from..to - 1: tree by tree (its nodes stay in cache over the rows), each row's sum
   still taken in tree order. */
static void sum_rows(const float *X, int64_t from, int64_t to, int64_t n_features, const dfg_forest *f,
                     const fs_node *nodes, const int32_t *roots32, double *out) {
    const int64_t d = f->n_values;
    int32_t leaf[FS_LANES];
    for (int64_t t = 0; t < f->n_trees; t++) {
        const int32_t root = roots32[t];
        for (int64_t r0 = from; r0 < to; r0 += FS_LANES) {
            const int64_t r1 = r0 + FS_LANES < to ? r0 + FS_LANES : to;
            leaves_of(nodes, X, n_features, r0, r1, root, leaf);
            for (int64_t r = r0; r < r1; r++) {
                const double *v = f->value + (int64_t)leaf[r - r0] * d;
                double *o = out + r * d;
                if (t == 0)
                    for (int64_t k = 0; k < d; k++) o[k] = v[k];
                else
                    for (int64_t k = 0; k < d; k++) o[k] += v[k];
            }
        }
    }
}

int dfg_forest_sum(const float *X, int64_t n_samples, int64_t n_features, const dfg_forest *forest,
                   double *out, int n_threads, const volatile int *stop) {
    if (n_samples < 0 || n_threads < 1 || (n_samples > 0 && (!X || !out)) ||
        (n_features > 0 && n_samples > INT64_MAX / n_features))
        return DFG_EINVAL;
    const dfg_forest *f = forest;
    /* node ids and features are kept as int32 in the walk's copy */
    if (!f || f->n_trees < 1 || f->n_nodes < f->n_trees || f->n_values < 1 || n_features < 0 ||
        n_features > INT32_MAX || f->n_nodes > INT32_MAX || !f->roots || !f->left || !f->right || !f->feature ||
        !f->threshold || !f->value || n_samples > INT64_MAX / f->n_values)
        return DFG_EINVAL;
    fs_node *nodes = (fs_node *)malloc((size_t)f->n_nodes * sizeof(fs_node));
    int32_t *roots32 = (int32_t *)malloc((size_t)f->n_trees * sizeof(int32_t));
    if (!nodes || !roots32) {
        free(nodes);
        free(roots32);
        return DFG_ENOMEM;
    }
    const int status = pack(f, n_features, nodes, roots32);
    if (status != DFG_OK) {
        free(nodes);
        free(roots32);
        return status;
    }
    const int team = dfg_team(n_threads);
    int64_t n_tasks = (n_samples + FS_ROWS - 1) / FS_ROWS;
    if (n_tasks < team && n_tasks < n_samples / FS_MIN_ROWS)
        n_tasks = team < n_samples / FS_MIN_ROWS ? team : n_samples / FS_MIN_ROWS;
    const int64_t per_task = n_tasks > 0 ? (n_samples + n_tasks - 1) / n_tasks : 0;
    int stopped = 0;
    #pragma omp parallel for schedule(dynamic, 1) num_threads(team) reduction(|:stopped) if(team > 1 && n_tasks > 1)
    for (int64_t task = 0; task < n_tasks; task++) {
        if (dfg_stop_requested(stop)) {
            stopped = 1;
            continue;
        }
        const int64_t from = task * per_task, to = from + per_task < n_samples ? from + per_task : n_samples;
        sum_rows(X, from, to, n_features, forest, nodes, roots32, out);
    }
    free(nodes);
    free(roots32);
    return stopped ? DFG_EINTERRUPTED : DFG_OK;
}
