# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The FAB / EM fit of the mixture model and the MAP assignment of prediction
(src_c/dfg_fit.h, src_c/dfg_assign.h), over a Problem: the training data as the
kernels read it (src_c/dfg_model.h)."""
import numpy as np

from libc.stdint cimport int32_t, int64_t, uint64_t

from defrag._cdefs cimport (DFG_METHOD_EM, DFG_METHOD_FAB, DFG_OK, dfg_fit,
                            dfg_fit_max_iterations, dfg_map_assign, dfg_omega)
from defrag.utils._common cimport (check_status, kernel_threads, optional_flags, stop_flag,
                                   stop_pointer)


cdef class Problem:
    """Training data for the fit kernels: ranks or packed bits, and targets.

    Holds references to the arrays so the C struct's pointers stay valid.
    """

    def __init__(self, const int64_t[::1] feat_ptr, ranks=None, bits=None, y_value=None,
                 y_class=None, int64_t n_classes=0, int64_t n_samples=-1, missing_right=None):
        cdef const int32_t[:, ::1] r
        cdef const uint64_t[:, ::1] b
        cdef const double[::1] yv
        cdef const int32_t[::1] yc
        if feat_ptr.shape[0] < 1:
            raise ValueError("Problem: feat_ptr needs at least one entry")
        self._keep = [feat_ptr, ranks, bits, y_value, y_class, missing_right]
        self.data.n_features = feat_ptr.shape[0] - 1
        self.data.n_splits = feat_ptr[feat_ptr.shape[0] - 1]
        self.data.feat_ptr = &feat_ptr[0]
        self.data.missing_right = optional_flags(missing_right, self.data.n_splits)
        self.data.ranks = NULL
        self.data.bits = NULL
        self.data.y_value = NULL
        self.data.y_class = NULL
        self.data.n_classes = n_classes
        self.data.n_samples = n_samples
        if ranks is not None:
            r = ranks
            if r.shape[0] != self.data.n_features:
                raise ValueError(f"Problem: ranks have {r.shape[0]} rows for "
                                 f"{self.data.n_features} features")
            self.data.n_samples = r.shape[1]
            if r.shape[0] * r.shape[1]:
                self.data.ranks = &r[0, 0]
            else:
                self.data.ranks = <const int32_t *>self.data.feat_ptr  # never read: no splits
        elif bits is not None:
            b = bits
            if b.shape[1] != (self.data.n_splits + 63) // 64:
                raise ValueError(f"Problem: bits have {b.shape[1]} words per row for "
                                 f"{self.data.n_splits} splits")
            self.data.n_samples = b.shape[0]
            self.data.bits = &b[0, 0] if b.shape[0] * b.shape[1] else <const uint64_t *>self.data.feat_ptr
        else:
            raise ValueError("Problem needs ranks or bits")
        if n_classes == 0 and y_value is not None:
            yv = y_value
            if yv.shape[0] != self.data.n_samples:
                raise ValueError("Problem: y_value must have one value per sample")
            self.data.y_value = &yv[0]
        elif n_classes > 0 and y_class is not None:
            yc = y_class
            if yc.shape[0] != self.data.n_samples:
                raise ValueError("Problem: y_class must have one value per sample")
            self.data.y_class = &yc[0]

    @property
    def n_samples(self):
        return int(self.data.n_samples)

    @property
    def omega(self):
        return float(dfg_omega(&self.data))


cdef dfg_params params_view(dict p, int64_t K, int64_t n_classes, int64_t n_splits) except *:
    """dfg_params pointing into the arrays of dict p (checked contiguous float64)."""
    cdef dfg_params out
    cdef double[:, ::1] eta = p["eta"]
    cdef double[::1] alpha = p["alpha"]
    cdef double[::1] mean, precision
    cdef double[:, ::1] gamma
    if eta.shape[0] < K or alpha.shape[0] < K or eta.shape[1] != n_splits:
        raise ValueError("parameter arrays do not match the problem (eta shape)")
    out.n_components = K
    out.eta = &eta[0, 0] if eta.shape[1] else &alpha[0]
    out.alpha = &alpha[0]
    out.mean = NULL
    out.precision = NULL
    out.gamma = NULL
    if n_classes == 0:
        mean = p["mean"]
        precision = p["precision"]
        if mean.shape[0] < K or precision.shape[0] < K:
            raise ValueError("parameter arrays do not match the problem (mean shape)")
        out.mean = &mean[0]
        out.precision = &precision[0]
    else:
        gamma = p["gamma"]
        if gamma.shape[0] < K or gamma.shape[1] != n_classes:
            raise ValueError("parameter arrays do not match the problem (gamma shape)")
        out.gamma = &gamma[0, 0]
    return out


cdef dfg_options fit_options(str method, int max_iter, double tol, double delta, double eps,
                             double var_floor, int n_threads, tuple inner) except *:
    """dfg_options of a run; inner = (warm-up iterations, E-step updates in the warm-up,
    E-step updates after); no annealed clamp."""
    cdef dfg_options o
    if method == "fab":
        o.method = DFG_METHOD_FAB
    elif method == "em":
        o.method = DFG_METHOD_EM
    else:
        raise ValueError(f"unknown method {method!r}")
    o.max_iter = max_iter
    o.tol = tol
    o.delta = delta
    o.eps = eps
    o.var_floor = var_floor
    o.warmup_iter, o.warmup_inner, o.max_inner = inner
    o.n_anneal = 0
    o.anneal_eps = NULL
    o.anneal_iter = 1
    o.n_threads = n_threads
    o.live_threads = NULL
    o.stop = NULL
    o.penalty_splits = 0
    return o


def fit(Problem problem, dict params, double[:, ::1] beta, str method, int max_iter,
        double tol, double delta, double eps, double var_floor, int n_threads=1,
        tuple inner=(5, 2, 20), anneal_eps=(), int anneal_iter=10, int64_t penalty_splits=0,
        int[::1] live_threads=None):
    """One FAB/EM run in place on params and beta.

    inner = (warm-up iterations, E-step updates in the warm-up, E-step updates after);
    anneal_eps: clamps of the phases before the final one (see dfg_fit.h);
    penalty_splits: L in FAB's penalty (0: the problem's number of splits);
    live_threads: a one-element int32 array read at every outer iteration, the threads
    the run may use from then on (see dfg_options.live_threads); None: n_threads.
    The run stops (KernelInterrupted) when the stop flag of the fit it works for is set
    (defrag/utils/interrupt.py).
    Returns (K, lower-bound trace, phase of each iteration)."""
    flag = stop_flag(False)  # the kernel reads it
    n_threads = kernel_threads(n_threads, live_threads is not None)
    cdef int64_t K = beta.shape[1]
    if beta.shape[0] != problem.data.n_samples:
        raise ValueError("fit: beta must have one row per sample of the problem")
    if max_iter < 1:
        raise ValueError("fit: max_iter must be at least 1")
    cdef dfg_params p = params_view(params, K, problem.data.n_classes, problem.data.n_splits)
    cdef dfg_options o = fit_options(method, max_iter, tol, delta, eps, var_floor, n_threads, inner)
    cdef double[::1] levels = np.ascontiguousarray(anneal_eps, dtype=np.float64).reshape(-1)
    o.n_anneal = levels.shape[0]
    o.anneal_eps = &levels[0] if levels.shape[0] else NULL
    o.anneal_iter = anneal_iter
    if penalty_splits < 0:
        raise ValueError("fit: penalty_splits must be >= 0")
    o.penalty_splits = penalty_splits
    if live_threads is not None:
        if live_threads.shape[0] != 1:
            raise ValueError("fit: live_threads must hold one value")
        o.live_threads = &live_threads[0]
    o.stop = stop_pointer(flag)
    cdef int cap = dfg_fit_max_iterations(&o)
    if cap < 1:
        raise ValueError("max_iter and the eps schedule give too many iterations")
    trace = np.zeros(cap, dtype=np.float64)
    phases = np.zeros(cap, dtype=np.int32)
    cdef double[::1] tr = trace
    cdef int32_t[::1] ph = phases
    cdef int n_iter = 0, status
    with nogil:
        status = dfg_fit(&problem.data, &o, &p, &beta[0, 0], &tr[0], &ph[0], &n_iter)
    check_status(status, "fit")
    return int(p.n_components), trace[:n_iter].copy(), phases[:n_iter].copy()


def map_assign(Problem problem, dict params, double eps, int n_threads=1):
    """eq. 10: argmax_k log p(s|k) + log alpha_k per sample, int32."""
    stop_flag()
    n_threads = kernel_threads(n_threads)
    cdef int64_t K = params["alpha"].shape[0]
    cdef dfg_params p = params_view(params, K, problem.data.n_classes, problem.data.n_splits)
    out = np.empty(problem.data.n_samples, dtype=np.int32)
    cdef int32_t[::1] o = out
    cdef int status = DFG_OK
    if problem.data.n_samples:
        with nogil:
            status = dfg_map_assign(&problem.data, &p, eps, &o[0], n_threads)
    check_status(status, "map_assign")
    return out
