/*
 * dfg_bits.h - bit-packed binary features (rows) and rule conditions (columns).
 *
 * Row layout (the general s matrix): S[n * n_words + l / 64] holds bit l % 64 =
 * s_l(x_n), n_words = ceil(L / 64), unused tail bits are 0. For a numeric split
 * s_l(x) = [x_{d_l} > t_l]; for a categorical split (dfg_sets.h) s_l(x) is the set
 * test of l on the category code x_{d_l}; a missing x_{d_l} gives missing_right[l].
 * Column layout (one condition over all samples): bit n of col[n / 64] is the
 * condition's truth value for sample n; unused tail bits are 0.
 */
#ifndef DFG_BITS_H
#define DFG_BITS_H

#include "dfg_common.h"
#include "dfg_sets.h"

/* Pack the N x L binary features of X (N x D row-major) into S (N x n_words); a
   missing x gives missing_right[l] (NULL: 0). sets (NULL: every split is numeric)
   holds one item per split: the kind of split l and, for a categorical one, its set.
   stop: the caller's stop flag (dfg_common.h) or NULL, read before each block of
   DFG_BLOCK rows (DFG_EINTERRUPTED). */
int dfg_pack_rows(const double *X, int64_t n_samples, int64_t n_features,
                  const int32_t *split_feature, const double *split_threshold,
                  const uint8_t *missing_right, const dfg_sets *sets, int64_t n_splits,
                  uint64_t *S, int n_threads, const volatile int *stop);

#endif
