#include "dfg_model.h"

int dfg_check_data(const dfg_data *data) {
    if (data->n_samples < 1 || data->n_features < 0 || data->n_splits < 0) return DFG_EINVAL;
    if (data->feat_ptr[0] != 0 || data->feat_ptr[data->n_features] != data->n_splits) return DFG_EINVAL;
    if (!data->ranks && !data->bits) return DFG_EINVAL;
    if (data->n_classes < 0) return DFG_EINVAL;
    if (data->n_classes == 0 && !data->y_value) return DFG_EINVAL;
    if (data->n_classes > 0 && !data->y_class) return DFG_EINVAL;
    return DFG_OK;
}

double dfg_omega_splits(const dfg_data *data, int64_t n_splits) {
    double dim_phi = data->n_classes == 0 ? 2.0 : (double)data->n_classes;
    return 0.5 * (dim_phi + (double)n_splits + 1.0);
}

double dfg_omega(const dfg_data *data) { return dfg_omega_splits(data, data->n_splits); }
