# The rule arrays as the C kernels take them (src_c/dfg_rules.h), cimported by the router
# (defrag/rules/_route.pyx), which tests the same boxes.
from libc.stdint cimport int32_t, int64_t, uint8_t

from defrag._cdefs cimport dfg_ruleset
from defrag.utils._common cimport CategorySets


cdef dfg_ruleset ruleset_view(const int64_t[::1] rule_ptr, const int32_t[::1] feature,
                              const double[::1] lower, const double[::1] upper,
                              const uint8_t[::1] missing, CategorySets sets) except *

cdef void check_rules_status(int status, str what) except *
