/*
 * dfg_fit.h - one FAB (Algorithm 1) or EM (App. A) run of the defrag mixture
 * model (Hara & Hayashi 2017, sec. 4-5), and the two-step MAP assignment
 * (eq. 10) used for prediction.
 *
 * Model per component k: Bernoulli regions eta_k (eq. 6), weight alpha_k, and an
 * output model (eq. 8): Gaussian (mean_k, precision_k) for regression or
 * categorical gamma_k for classification.
 */
#ifndef DFG_FIT_H
#define DFG_FIT_H

#include "dfg_common.h"

#define DFG_METHOD_FAB 0
#define DFG_METHOD_EM 1

/* Training data. Exactly one of ranks / bits is used (ranks when non-NULL). */
typedef struct {
    int64_t n_samples;
    int64_t n_features;
    int64_t n_splits;
    const int64_t *feat_ptr;   /* n_features + 1, splits sorted by (feature, threshold) */
    const uint8_t *missing_right; /* n_splits flags: a missing value goes right (NULL: none) */
    const int32_t *ranks;      /* n_features x n_samples thermometer ranks, or NULL */
    const uint64_t *bits;      /* n_samples x ceil(n_splits / 64) packed s, or NULL */
    int64_t n_classes;         /* 0: regression (y_value); >= 1: classification (y_class) */
    const double *y_value;
    const int32_t *y_class;
} dfg_data;

/* Parameters of K components, arrays sized for K_max, first K rows in use. */
typedef struct {
    int64_t n_components;
    double *eta;        /* K_max x n_splits, in [eps, 1 - eps] */
    double *alpha;      /* K_max */
    double *mean;       /* K_max (regression) */
    double *precision;  /* K_max (regression) */
    double *gamma;      /* K_max x n_classes (classification) */
} dfg_params;

typedef struct {
    int method;        /* DFG_METHOD_FAB or DFG_METHOD_EM */
    int max_iter;      /* outer iterations */
    double tol;        /* relative tolerance on the lower bound */
    double delta;      /* FAB truncation: drop k when mean_n beta_nk < delta */
    double eps;        /* eta, gamma clamp */
    double var_floor;  /* smallest variance of a regression component */
    int warmup_iter;   /* FAB: outer iterations whose E-step makes at most warmup_inner updates */
    int warmup_inner;
    int max_inner;     /* FAB: E-step updates per outer iteration after the warm-up */
    /* Annealed clamp: before the final phase (clamp eps, at most max_iter
       iterations) the run goes through n_anneal phases clamping eta and gamma at
       anneal_eps[0], anneal_eps[1], ... (decreasing, each >= eps), each for at most
       anneal_iter iterations or until the bound converges. */
    int n_anneal;
    const double *anneal_eps;
    int anneal_iter;
    int n_threads;
} dfg_options;

/* omega = (dim(phi) / K + L + 1) / 2 of eq. 12 for this data. */
double dfg_omega(const dfg_data *data);

/* logf (out, N x K) = log p(y | k) + log p(s | k) + log alpha_k (eq. 9). */
int dfg_log_joint(const dfg_data *data, const dfg_params *params, double *logf, int n_threads);

/* M-step (eq. 14 / 39-41): params from beta (N x K, K = params->n_components). */
int dfg_mstep(const dfg_data *data, const double *beta, const dfg_options *opt,
              dfg_params *params);

/* Bound evaluations a run can make: n_anneal * anneal_iter + max_iter + 1 (-1 if too many). */
int dfg_fit_max_iterations(const dfg_options *opt);

/*
 * One run. In: params (initial, K_max components) and beta (N x K_max initial
 * responsibilities). Out: params and beta compacted to the K surviving
 * components; lower_bound[t] the bound (eq. 12, or eq. 16 for EM) at the start
 * of outer iteration t < *n_iter, phase[t] its phase (0 .. n_anneal, n_anneal
 * being the final one). Within a phase the bound never decreases (App. C);
 * both arrays must hold dfg_fit_max_iterations(opt) values.
 */
int dfg_fit(const dfg_data *data, const dfg_options *opt, dfg_params *params,
            double *beta, double *lower_bound, int32_t *phase, int *n_iter);

/*
 * Two-step MAP, first step (eq. 10): assign[n] = argmax_k log p(s_n | k) + log alpha_k
 * (lowest k on ties). Uses data->ranks or data->bits; y is not read.
 */
int dfg_map_assign(const dfg_data *data, const dfg_params *params, double eps,
                   int32_t *assign, int n_threads);

#endif
