/*
 * dfg_assign.h - prediction's component per sample: the first step of the
 * two-step MAP (eq. 10), from the binary features alone.
 */
#ifndef DFG_ASSIGN_H
#define DFG_ASSIGN_H

#include "dfg_model.h"

/*
 * Two-step MAP, first step (eq. 10): assign[n] = argmax_k log p(s_n | k) + log alpha_k
 * (lowest k on ties). Uses data->ranks or data->bits; y is not read.
 */
int dfg_map_assign(const dfg_data *data, const dfg_params *params, double eps,
                   int32_t *assign, int n_threads);

#endif
