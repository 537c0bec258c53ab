/*
 * dfg_model.h - the defrag mixture model (Hara & Hayashi 2017, sec. 4-5) as the C
 * kernels share it: training data, parameters and run options, their check, and
 * FAB's omega.
 *
 * Model per component k: Bernoulli regions eta_k (eq. 6), weight alpha_k, and an
 * output model (eq. 8): Gaussian (mean_k, precision_k) for regression or
 * categorical gamma_k for classification.
 */
#ifndef DFG_MODEL_H
#define DFG_MODEL_H

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
    /* When not NULL, read at the start of every outer iteration of dfg_fit: the
       threads the run may use from then on (values < 1 keep n_threads). A caller
       running several fits at once hands the cores of finished ones to those still
       running. Every kernel reduces in blocks fixed by the sizes alone, so the
       result does not depend on it. */
    const volatile int *live_threads;
    /* When not NULL, the caller's stop flag (dfg_common.h): dfg_fit reads it at every
       outer iteration and between its stages, the E-step at every update, and
       returns DFG_EINTERRUPTED once it is set. */
    const volatile int *stop;
    /* FAB: the number of splits L in the penalty omega (eq. 12); 0 takes the data's
       n_splits. A fit on a selection of an ensemble's splits can keep the penalty of
       the whole ensemble, whose split count measures the model's complexity. */
    int64_t penalty_splits;
} dfg_options;

/* DFG_OK when data is usable by the fit kernels: sizes, feat_ptr's ends, one of
   ranks / bits, and the targets the task needs. */
int dfg_check_data(const dfg_data *data);

/* omega = (dim(phi) / K + L + 1) / 2 of eq. 12 for this data. */
double dfg_omega(const dfg_data *data);
/* The same with n_splits in place of L. */
double dfg_omega_splits(const dfg_data *data, int64_t n_splits);

#endif
