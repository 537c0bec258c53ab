# The C kernels' interface (src_c/*.h) as the Cython modules see it: every
# declaration they call, in one place, header by header. Each declaration must match
# its header; the C compiler checks the calls against the headers themselves. A stop
# flag (`const volatile int *stop`, src_c/dfg_common.h) is declared `const int *`:
# Cython has no volatile, and C converts the pointer implicitly.
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t


cdef extern from "dfg_common.h":
    int DFG_OK
    int DFG_EINVAL
    int DFG_ENOMEM
    int DFG_EINTERRUPTED

cdef extern from "dfg_config.h":
    int dfg_has_openmp() nogil
    int dfg_max_threads() nogil

cdef extern from "dfg_cpu.h":
    int dfg_cpu_has_popcnt() nogil

cdef extern from "dfg_sets.h":
    ctypedef struct dfg_sets:
        int64_t n
        const uint8_t *kind
        const int64_t *ptr
        const uint64_t *words

cdef extern from "dfg_ranks.h":
    int dfg_compute_ranks(const double *X, int64_t n_samples, int64_t n_features,
                          const int64_t *feat_ptr, const double *thresholds,
                          int32_t *ranks, int n_threads, const int *stop) nogil
    int dfg_compute_group_ranks(const double *X, int64_t n_samples, int64_t n_features,
                                int64_t n_groups, const int32_t *group_feature,
                                const int64_t *group_ptr, const double *thresholds,
                                const dfg_sets *sets, int32_t *ranks, int n_threads,
                                const int *stop) nogil

cdef extern from "dfg_bits.h":
    int dfg_pack_rows(const double *X, int64_t n_samples, int64_t n_features,
                      const int32_t *split_feature, const double *split_threshold,
                      const uint8_t *missing_right, const dfg_sets *sets, int64_t n_splits,
                      uint64_t *S, int n_threads, const int *stop) nogil

cdef extern from "dfg_cover.h":
    int dfg_first_cover(const uint8_t *cover, int64_t n_samples, int64_t n_rules, int64_t *first,
                        int n_threads) nogil

cdef extern from "dfg_list_loss.h":
    int dfg_list_loss(const uint8_t *cover, int64_t n_samples, int64_t n_columns,
                      const int64_t *order, int64_t n_rules, const double *y,
                      const int64_t *y_class, int64_t n_classes, double *loss,
                      int *all_matched) nogil
    double dfg_pairwise_sum(const double *a, int64_t n) nogil

cdef extern from "dfg_list_order.h":
    int dfg_list_order(const uint8_t *cover, int64_t n_samples, int64_t n_rules, const double *y,
                       const int64_t *y_class, int64_t n_classes, int local_search, int64_t *order,
                       const int *stop) nogil

cdef extern from "dfg_list_prune.h":
    int dfg_list_prune(const uint8_t *holds, int64_t n_samples, int64_t n_conditions,
                       const int64_t *rule_ptr, int64_t n_rules, const double *y,
                       const int64_t *y_class, int64_t n_classes, double budget, int64_t n_passes,
                       int keep_one, uint8_t *keep, uint8_t *cover, const int *stop) nogil

cdef extern from "dfg_condition_stats.h":
    int dfg_bound_neighbours(const double *X, int64_t n_samples, int64_t n_features,
                             int64_t n_bounds, const int32_t *feature, const double *value,
                             double *below, double *above, int n_threads) nogil
    int dfg_condition_counts(const double *X, int64_t n_samples, int64_t n_features,
                             int64_t n_conditions, const int32_t *feature, const double *lower,
                             const double *upper, const uint8_t *missing,
                             const uint8_t *zero_missing, double zero_threshold,
                             const dfg_sets *sets, int64_t *holds, int64_t *n_nan,
                             int n_threads) nogil
    int dfg_condition_bits(const double *X, int64_t n_samples, int64_t n_features,
                           int64_t n_conditions, const int32_t *feature, const double *lower,
                           const double *upper, const uint8_t *missing,
                           const uint8_t *zero_missing, double zero_threshold,
                           const dfg_sets *sets, uint64_t *cols, int n_threads) nogil

cdef extern from "dfg_prune.h":
    int64_t dfg_count_all(const uint64_t *cols, int64_t m, int64_t n_samples, int64_t skip) nogil
    int64_t dfg_prune_conditions(const uint64_t *cols, int64_t m, int64_t n_samples,
                                 uint8_t *keep) nogil

cdef extern from "dfg_rules.h":
    int DFG_ENAN
    ctypedef struct dfg_ruleset:
        int64_t n_rules
        const int64_t *rule_ptr
        const int32_t *feature
        const double *lower
        const double *upper
        const uint8_t *missing
        const dfg_sets *sets
    int dfg_rules_cover(const double *X, int64_t n_samples, int64_t n_features,
                        const dfg_ruleset *rules, uint8_t *covers, int n_threads) nogil
    int dfg_rules_first(const double *X, int64_t n_samples, int64_t n_features,
                        const dfg_ruleset *rules, int32_t *first, int n_threads) nogil

cdef extern from "dfg_route.h":
    ctypedef struct dfg_route_tree:
        int64_t n_items
        int64_t n_terms
        const int64_t *box
        const int64_t *then_item
        const int64_t *else_item
        const int64_t *roots
    int dfg_route(const double *X, int64_t n_samples, int64_t n_features, const dfg_ruleset *boxes,
                  const dfg_route_tree *tree, const uint8_t *cost, const int64_t *label, int64_t *items,
                  double *reads, int64_t *visits, int n_threads) nogil

cdef extern from "dfg_log.h":
    int dfg_log_kind() nogil
    void dfg_log_array_kind(int kind, const double *x, double *out, int64_t n) nogil
    void dfg_log_odds_array_kind(int kind, const double *x, double *out, int64_t n) nogil

cdef extern from "dfg_loglik.h":
    int dfg_rank_tables(const double *eta, int64_t n_components, int64_t n_splits,
                        const int64_t *feat_ptr, int64_t n_features,
                        const uint8_t *missing_right, double *table, double *base,
                        int n_threads) nogil
    int dfg_loglik_ranks(const int32_t *ranks, int64_t n_samples, int64_t n_features,
                         const int64_t *feat_ptr, const double *table, const double *base,
                         int64_t n_components, double *out, int n_threads) nogil
    int dfg_loglik_bits(const uint64_t *S, int64_t n_samples, int64_t n_splits,
                        const double *eta, int64_t n_components, double eps,
                        double *out, int n_threads) nogil

cdef extern from "dfg_estep.h":
    int dfg_lower_bound(const double *logf, const double *beta, int64_t n_samples,
                        int64_t n_components, double omega, double *colsum,
                        double *value, int n_threads) nogil
    int dfg_estep(const double *logf, int64_t n_samples, int64_t n_components, double omega,
                  int max_inner, double tol, double *beta, double *colsum, double *value,
                  int *n_inner, double *scratch, int n_threads, const int *stop) nogil

cdef extern from "dfg_model.h":
    int DFG_METHOD_FAB
    int DFG_METHOD_EM
    ctypedef struct dfg_data:
        int64_t n_samples
        int64_t n_features
        int64_t n_splits
        const int64_t *feat_ptr
        const uint8_t *missing_right
        const int32_t *ranks
        const uint64_t *bits
        int64_t n_classes
        const double *y_value
        const int32_t *y_class
    ctypedef struct dfg_params:
        int64_t n_components
        double *eta
        double *alpha
        double *mean
        double *precision
        double *gamma
    ctypedef struct dfg_options:
        int method
        int max_iter
        double tol
        double delta
        double eps
        double var_floor
        int warmup_iter
        int warmup_inner
        int max_inner
        int n_anneal
        const double *anneal_eps
        int anneal_iter
        int n_threads
        const int *live_threads  # const volatile int * in C
        const int *stop  # const volatile int * in C
        int64_t penalty_splits
    double dfg_omega(const dfg_data *data) nogil

cdef extern from "dfg_joint.h":
    int dfg_log_joint(const dfg_data *data, const dfg_params *params, double *logf,
                      int n_threads) nogil

cdef extern from "dfg_mstep.h":
    int dfg_split_stats_ranks(const int32_t *ranks, int64_t n_samples, int64_t n_features,
                              const int64_t *feat_ptr, const uint8_t *missing_right,
                              const double *beta, int64_t n_components, double *num,
                              int n_threads) nogil
    int dfg_split_stats_bits(const uint64_t *S, int64_t n_samples, int64_t n_splits,
                             const double *beta, int64_t n_components, double *num,
                             int n_threads) nogil
    int dfg_mstep(const dfg_data *data, const double *beta, const dfg_options *opt,
                  dfg_params *params) nogil

cdef extern from "dfg_fit.h":
    int dfg_fit_max_iterations(const dfg_options *opt) nogil
    int dfg_fit(const dfg_data *data, const dfg_options *opt, dfg_params *params,
                double *beta, double *lower_bound, int32_t *phase, int *n_iter) nogil

cdef extern from "dfg_assign.h":
    int dfg_map_assign(const dfg_data *data, const dfg_params *params, double eps,
                       int32_t *assign, int n_threads) nogil

cdef extern from "dfg_proximity.h":
    int dfg_tree_distance(const int32_t *leaves_a, int64_t n_a, const int32_t *leaves_bt,
                          int64_t n_b, int64_t n_trees, const float *weights, float *out,
                          int n_threads, const int *stop) nogil

cdef extern from "dfg_proxy_split.h":
    int dfg_proxy_node_score(const int64_t *rows, int64_t n_rows, int64_t n_samples,
                             const double *mean, const double *var, double var_floor,
                             double *score) nogil
    int dfg_proxy_best_split(const double *X, int64_t n_samples, int64_t n_features,
                             const int64_t *rows, int64_t n_rows,
                             const double *mean, const double *var,
                             int64_t min_leaf, double var_floor,
                             int32_t *feature, double *threshold, double *gain,
                             int64_t *n_left, int32_t *missing_right, int n_threads,
                             const int *stop) nogil
    int dfg_proxy_best_split_proba(const double *X, int64_t n_samples, int64_t n_features,
                                   const int64_t *rows, int64_t n_rows,
                                   const double *P, int64_t n_classes, int64_t min_leaf,
                                   int32_t *feature, double *threshold, double *gain,
                                   int64_t *n_left, int32_t *missing_right, int n_threads,
                                   const int *stop) nogil

cdef extern from "dfg_gate.h":
    int dfg_gate_tables(const double *w, int64_t n_components, const int64_t *feat_ptr,
                        int64_t n_features, const uint8_t *missing_right, double *table,
                        int n_threads) nogil
    int dfg_gate_log_prob(const int32_t *ranks, int64_t n_samples, int64_t n_features,
                          const int64_t *feat_ptr, const uint8_t *missing_right, const double *w,
                          int64_t n_components, double *out, int n_threads) nogil
    int dfg_gate_objective(const int32_t *ranks, int64_t n_samples, int64_t n_features,
                           const int64_t *feat_ptr, const uint8_t *missing_right,
                           const double *beta, const double *w, int64_t n_components,
                           double rho, double *value, double *grad, int n_threads,
                           const int *stop) nogil

cdef extern from "dfg_emkl.h":
    int dfg_emkl_estep(const dfg_data *data, const dfg_params *params, const double *w,
                       double *beta, double *logf, double *bound, int n_threads,
                       const int *stop) nogil
    int dfg_emkl_mstep(const dfg_data *data, const double *beta, double eps, double var_floor,
                       dfg_params *params, int n_threads) nogil
    int dfg_emkl_posterior(const dfg_data *data, const double *eta, const double *w,
                           int64_t n_components, double *out, int n_threads) nogil

cdef extern from "dfg_list_search.h":
    ctypedef struct dfg_list_params:
        int64_t max_rules
        int64_t min_support
        int64_t max_moves
        int64_t n_starts
        double rel_tol
    int dfg_list_search_box_bound(const int64_t *cand_ptr, int64_t n_candidates, int64_t max_moves,
                                  int64_t *bound) nogil
    int dfg_list_search_grow(const uint8_t *S, const double *T, int64_t n_samples, int64_t n_splits,
                             int64_t n_targets, const int64_t *literal_feature,
                             const int64_t *literal_group, const int64_t *cand_ptr,
                             const int64_t *cand_literals, int64_t n_candidates,
                             const dfg_list_params *params, int64_t *box_ptr, int64_t *box_literals,
                             int64_t capacity, int64_t *n_boxes, int n_threads,
                             const int *stop) nogil

cdef extern from "dfg_list_path.h":
    int dfg_list_path_grow(const uint8_t *S, const double *T, int64_t n_samples, int64_t n_splits,
                           int64_t n_targets, const int64_t *literal_feature, const int64_t *literal_group,
                           const int64_t *cand_ptr, const int64_t *cand_literals, int64_t n_candidates,
                           const dfg_list_params *params, int64_t *step_kind, int64_t *step_rule,
                           int64_t *step_ptr, int64_t *step_literals, int64_t capacity, int64_t *n_steps,
                           int n_threads, const int *stop) nogil

cdef extern from "dfg_tree_path.h":
    ctypedef struct dfg_tree_params:
        int64_t max_leaves
        double literal_price
        int64_t min_leaf
        int64_t max_moves
        int64_t n_starts
        double rel_tol
    ctypedef struct dfg_tree_scores:
        const uint8_t *S
        const double *y
        const int64_t *codes
        int64_t n_val
        int64_t n_classes
        const double *outputs
        int64_t n_sizes
        double *losses
        double *checks
        double *node_outputs
    int dfg_tree_path_grow(const uint8_t *S, const double *T, int64_t n_samples, int64_t n_splits,
                           int64_t n_targets, const int64_t *literal_feature, const int64_t *literal_group,
                           const int64_t *cand_ptr, const int64_t *cand_literals, int64_t n_candidates,
                           const dfg_tree_params *params, int64_t *step_leaf, int64_t *step_ptr,
                           int64_t *step_literals, int64_t capacity, int64_t *n_steps,
                           const dfg_tree_scores *scores, int n_threads, const int *stop) nogil
cdef extern from "dfg_additive_path.h":
    int dfg_additive_path_grow(const uint8_t *S, const double *T, int64_t n_samples, int64_t n_splits,
                               int64_t n_targets, int64_t max_splits, int64_t min_leaf, int64_t backfit_rounds,
                               double rel_tol, int64_t *step_term, int64_t *step_node, int64_t *step_split,
                               int64_t *n_steps, double *base, double *leaf_values, int n_threads,
                               const int *stop) nogil
    int dfg_additive_replay(const uint8_t *S, const double *T0, int64_t n, int64_t L, int64_t d,
                            const int64_t *steps, int64_t m, int64_t backfit_rounds, double *values,
                            int64_t *bad_step) nogil

cdef extern from "dfg_forest_sum.h":
    ctypedef struct dfg_forest:
        int64_t n_trees
        int64_t n_nodes
        int64_t n_values
        const int64_t *roots
        const int64_t *left
        const int64_t *right
        const int64_t *feature
        const double *threshold
        const uint8_t *missing_left
        const double *value
    int dfg_forest_sum(const float *X, int64_t n_samples, int64_t n_features, const dfg_forest *forest,
                       double *out, int n_threads, const int *stop) nogil
