# The fit's training data and parameter views, cimported by the testing module's
# single-step entry points (defrag/_testing.pyx).
from libc.stdint cimport int64_t

from defrag._cdefs cimport dfg_data, dfg_options, dfg_params


cdef class Problem:
    cdef dfg_data data
    cdef object _keep


cdef dfg_params params_view(dict p, int64_t K, int64_t n_classes, int64_t n_splits) except *

cdef dfg_options fit_options(str method, int max_iter, double tol, double delta, double eps,
                             double var_floor, int n_threads, tuple inner) except *
