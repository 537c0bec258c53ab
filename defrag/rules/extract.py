"""Conditions read off a fitted component (Hara & Hayashi, sec. 4-5).

A component's Bernoulli parameters eta_k say, per split, whether its region lies
on the split's right side (eta > 1 - kappa), its left side (eta < kappa) or
across it. Numeric splits ``x_d > t`` merge per feature into one interval
``lower < x_d <= upper``; categorical splits (right side: the code is in, or not
in, a set) merge into one set condition ``x_d in S`` or ``x_d not in S``, S the
intersection of the sets the region lies in minus the union of those it lies
outside. Then the conditions are pruned as in sec. 3.2 of the AISTATS 2018
paper: a bound (or the "in" / "not in" part of a set condition) is dropped when
the number of covered training points does not change (counted by popcount
over bit-packed condition columns, src_c/dfg_prune.c).
"""
import numpy as np

from ..splits import IN_SET, NOT_IN_SET, NUMERIC, ZERO_THRESHOLD
from . import _rules_eval
from .conditions import Condition, count_all, part_arrays, pruned_by_support


def components_bounds(etas, splits, kappa):
    """Per component (row of etas, K x L), the per-feature interval (lower, upper) from its
    numeric splits (eta > 1 - kappa / eta < kappa), and whether a missing value lies in its
    region (missing_ok: every split that fixes the region, eta near 0 or 1, sends missing
    values to the region's side); each K x n_features, every component at once: the splits are in feature order
    (splits.feat_ptr), so a feature's bound is one max (min) over its run of splits."""
    K, D = etas.shape[0], splits.n_features
    lower, upper = np.full((K, D), -np.inf), np.full((K, D), np.inf)
    missing_ok = np.ones((K, D), dtype=bool)
    present = np.flatnonzero(np.diff(splits.feat_ptr) > 0)  # features with splits
    if K == 0 or present.size == 0:
        return lower, upper, missing_ok
    starts = splits.feat_ptr[present]
    above, below = etas > 1.0 - kappa, etas < kappa
    numeric = splits.kind == NUMERIC
    lower[:, present] = np.maximum.reduceat(np.where(above & numeric, splits.threshold, -np.inf), starts, axis=1)
    upper[:, present] = np.minimum.reduceat(np.where(below & numeric, splits.threshold, np.inf), starts, axis=1)
    wrong_side = (above | below) & (splits.missing_right.astype(bool) != above)
    missing_ok[:, present] = ~np.logical_or.reduceat(wrong_side, starts, axis=1)
    return lower, upper, missing_ok


def component_sets(eta_k, splits, kappa):
    """Per categorical feature of one component: (codes the region lies in: the
    intersection of its splits' sets, or None; codes it lies outside: the union, or None)."""
    above = eta_k > 1.0 - kappa
    below = eta_k < kappa
    in_set, not_in_set = splits.kind == IN_SET, splits.kind == NOT_IN_SET
    inside = (above & in_set) | (below & not_in_set)
    outside = (below & in_set) | (above & not_in_set)
    sets = {}
    for l in np.flatnonzero(inside | outside):  # over the fixed splits of one component
        d, codes = int(splits.feature[l]), splits.set_of(l)
        inc, exc = sets.get(d, (None, None))
        if inside[l]:
            inc = codes if inc is None else np.intersect1d(inc, codes)
        else:
            exc = codes if exc is None else np.union1d(exc, codes)
        sets[d] = (inc, exc)
    return sets


def _unit_columns(X, units, missing, n_threads=1):
    """Bits over the samples of the prunable parts of conditions (see
    extract_rules_conditions), all from one pass over X: (n_units, ceil(N / 64)); missing:
    per unit, whether a missing value satisfies it. The parts' kernel arrays are built
    from their fields (conditions.part_arrays), without a Condition per part."""
    arrays = part_arrays([d for d, _, _ in units],
                         [float(v) if p == "lower" else -np.inf for _, p, v in units],
                         [float(v) if p == "upper" else np.inf for _, p, v in units],
                         [bool(ok) for ok in missing],
                         [v if p in ("in", "out") else None for _, p, v in units],
                         [p == "out" for _, p, _ in units])
    return _rules_eval.condition_holds(np.ascontiguousarray(X, dtype=np.float64), n_threads=n_threads,
                                       output="bits", zero_threshold=ZERO_THRESHOLD,
                                       zero_missing=np.zeros(len(units), dtype=np.uint8), **arrays)


def _prunable_units(eta_k, splits, kappa, bounds):
    """A component's prunable parts, (feature, "lower" / "upper", bound) and (feature,
    "in" / "out", codes), in feature order, and whether a missing value satisfies each
    feature's condition. bounds: its row of components_bounds."""
    lower, upper, missing_ok = bounds
    missing_ok = missing_ok & splits.supports_missing
    # A split at +inf (HistGradientBoosting's split of missing values from present ones)
    # tests only whether a value is missing: its right side is a lower bound of +inf ("x is
    # missing"), its left side an upper bound of +inf ("x is not missing"), which no finite
    # bound stands for and which a box must keep.
    at_inf = np.zeros(splits.n_features, dtype=bool)
    fixed_left = (np.asarray(eta_k) < kappa) & (splits.kind == NUMERIC) & (splits.threshold == np.inf)
    at_inf[splits.feature[fixed_left]] = True
    units = [(d, "lower", lower[d]) for d in np.flatnonzero(lower > -np.inf).tolist()]
    units += [(d, "upper", upper[d]) for d in np.flatnonzero(np.isfinite(upper) | at_inf).tolist()]
    for d, (inc, exc) in component_sets(eta_k, splits, kappa).items():
        units += [(d, part, codes) for part, codes in (("in", inc), ("out", exc)) if codes is not None]
    rank = {"lower": 0, "upper": 1, "in": 2, "out": 3}
    units.sort(key=lambda u: (u[0], rank[u[1]]))
    return units, missing_ok


def extract_rules_conditions(etas, splits, kappa, X_train, feature_names, n_threads=1):
    """The merged and pruned conditions of each component of etas and its training support:
    [(conditions, support), ...], the columns of all their parts from one pass over X_train
    (the prepared input: float64, C-contiguous, as the model reads it)."""
    etas = np.asarray(etas, dtype=np.float64).reshape(len(etas), len(splits))
    lower, upper, missing_ok = components_bounds(etas, splits, kappa)
    per_component = [_prunable_units(eta_k, splits, kappa, (lo, up, ok))
                     for eta_k, lo, up, ok in zip(etas, lower, upper, missing_ok)]
    n = X_train.shape[0]
    units = [u for us, _ in per_component for u in us]
    unit_missing = np.array([bool(ok[u[0]]) for us, ok in per_component for u in us], dtype=bool)
    # one missing flag per unit: a feature's flag differs between components
    all_cols = _unit_columns(X_train, units, unit_missing, n_threads)
    out, start = [], 0
    for units, missing_ok in per_component:
        cols = all_cols[start:start + len(units)]
        start += len(units)
        out.append(_pruned_conditions(units, missing_ok, cols, n, splits, feature_names))
    return out


def _pruned_conditions(units, missing_ok, cols, n, splits, feature_names):
    keep, support = pruned_by_support(cols, n)
    merged, columns = {}, {}
    for j, ((d, part, value), kept) in enumerate(zip(units, keep)):
        if kept:
            merged.setdefault(d, {})[part] = value
            columns.setdefault(d, []).append(j)
    conditions = []
    for d, parts in sorted(merged.items()):
        share = count_all(cols[columns[d]], n) / max(n, 1)
        common = dict(train_share=share, missing=bool(missing_ok[d]),
                      zero_missing=bool(splits.encoding.zero_missing[d]))
        if "in" in parts or "out" in parts:
            inc, exc = parts.get("in"), parts.get("out")
            codes = exc if inc is None else (inc if exc is None else np.setdiff1d(inc, exc))
            conditions.append(Condition(d, feature_names[d], categories=codes, negated=inc is None,
                                        category_names=splits.encoding.category_names(d), **common))
        else:
            # an upper bound of +inf is "not missing": a condition without bounds that a
            # missing value fails
            upper = parts.get("upper")
            conditions.append(Condition(d, feature_names[d], parts.get("lower"),
                                        None if upper == np.inf else upper, **common))
    return conditions, support
