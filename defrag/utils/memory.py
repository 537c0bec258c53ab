"""Memory guard: estimate a fit's working set before allocating it, refuse what cannot fit.

Each estimator adds up the large arrays it is about to allocate (the rank or bit
matrix, every restart in flight with its N x K responsibilities and K x L
parameters, the proximity blocks of the prototypes) and calls ``check_memory``,
which raises ``DefragMemoryError`` (a ``MemoryError`` and a ``ValueError``) when the
estimate exceeds the limit, naming the estimate, the limit and the knobs that
reduce it. The limit is ``set_max_memory(...)`` / ``max_memory(...)`` when set, else
the environment variable ``DEFRAG_MAX_MEMORY`` (bytes, or with a K/M/G/T suffix), else
``DEFAULT_SHARE`` of the memory the operating system reports as available
(``MemAvailable`` in /proc/meminfo, bounded by the room under the process's cgroup
memory limits, v2 ``memory.max`` or v1 ``memory.limit_in_bytes``, and under its
``RLIMIT_AS`` / ``RLIMIT_DATA``), read at each check.
"""
import contextlib
import os
import re
import threading

try:
    import resource
except ImportError:  # not a Unix: no resource limits to read
    resource = None

# Share of the available memory a fit may plan to use: the estimate leaves out
# Python objects and small temporaries, and the process already holds its data.
DEFAULT_SHARE = 0.8

_state = threading.local()
_global = {"limit": None}


class DefragMemoryError(MemoryError, ValueError):
    """The working set a fit would allocate exceeds the memory limit.

    Raised before the allocation, with a message naming the estimate, the limit and the
    parameters that reduce it. It is a ``MemoryError`` and a ``ValueError``.

    See Also
    --------
    set_max_memory : Set the process-wide limit.
    max_memory : Set the limit for this thread's fits, in a ``with`` block.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> from defrag import DefragMemoryError, DefragModel, max_memory
    >>> rng = np.random.RandomState(0)
    >>> X = rng.rand(60, 3)
    >>> y = X[:, 0] + X[:, 1]
    >>> forest = RandomForestRegressor(n_estimators=5, max_depth=2, random_state=0).fit(X, y)
    >>> try:
    ...     with max_memory("1K"):
    ...         DefragModel(forest).fit(X, y)
    ... except DefragMemoryError as exc:
    ...     print(exc)
    DefragModel.fit on 60 rows, ... more than the limit of 1 KB (defrag.max_memory(...)). ...
    """


def _parse_bytes(value, what):
    if value is None:
        return None
    if isinstance(value, str):
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([kmgt]?)i?b?\s*", value.lower())
        if not m:
            raise ValueError(f"{what} must be a number of bytes or e.g. '8G'; got {value!r}")
        value = float(m.group(1)) * 1024 ** " kmgt".index(m.group(2) or " ")
    try:
        value = float(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what} must be a number of bytes, a string such as '8G', or None; "
                         f"got {value!r}") from exc
    if not value > 0:  # NaN and negative values too
        raise ValueError(f"{what} must be positive (float('inf') turns the guard off); got {value!r}")
    return value


def set_max_memory(limit):
    """Set the process-wide memory limit of defrag's fits.

    A fit whose estimated working set exceeds the limit raises ``DefragMemoryError``
    before allocating it. Without a limit set here or by ``max_memory``, the limit is the
    environment variable ``DEFRAG_MAX_MEMORY``, else a share of the memory the operating
    system reports as available when each fit starts.

    Parameters
    ----------
    limit : int, float, str or None
        Bytes (int or float), a string such as "8G" (K, M, G, T suffixes),
        ``float("inf")`` for no limit, or None for the default.

    Returns
    -------
    float or None
        The previous setting.

    See Also
    --------
    max_memory : The limit for this thread's fits, in a ``with`` block.
    DefragMemoryError : The error of a fit that would exceed the limit.

    Examples
    --------
    >>> from defrag import set_max_memory
    >>> previous = set_max_memory("8G")
    >>> set_max_memory(previous)
    8589934592.0
    """
    previous = _global["limit"]
    _global["limit"] = _parse_bytes(limit, "max_memory")
    return previous


@contextlib.contextmanager
def max_memory(limit):
    """Set the memory limit of this thread's fits within a ``with`` block.

    The limit, as in ``set_max_memory``, overrides the process-wide one until the block
    ends, when the thread's previous limit comes back.

    Parameters
    ----------
    limit : int, float, str or None
        Bytes, a string such as "8G", ``float("inf")`` for no limit, or None for the
        process-wide limit.

    Yields
    ------
    None
        The block runs under the limit.

    See Also
    --------
    set_max_memory : Set the process-wide limit.
    DefragMemoryError : The error of a fit that would exceed the limit.

    Examples
    --------
    >>> from defrag import max_memory
    >>> with max_memory("2G"):
    ...     pass  # fits here may plan at most 2 GiB
    """
    previous = getattr(_state, "limit", None)
    _state.limit = _parse_bytes(limit, "max_memory")
    try:
        yield
    finally:
        _state.limit = previous


def _proc_bytes(path, field):
    """The "FIELD: n kB" line of a /proc file, in bytes (None where it is not there)."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return float(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _meminfo_available():
    return _proc_bytes("/proc/meminfo", "MemAvailable")


# where the cgroup file systems are mounted and where this process's cgroups are named
# (module attributes: the tests point them at a fake tree)
CGROUP_ROOT = "/sys/fs/cgroup"
PROC_CGROUP = "/proc/self/cgroup"
PROC_STATUS = "/proc/self/status"


def _read_number(path):
    """The number a cgroup file holds, inf for "max" (v2's no limit), None when unreadable."""
    try:
        with open(path) as f:
            raw = f.read().strip()
    except OSError:
        return None
    if raw == "max":
        return float("inf")
    try:
        return float(raw)
    except ValueError:
        return None


def _inactive_file(stat_path):
    """The cgroup's inactive page cache (reclaimed before the OOM killer acts), 0 if unknown."""
    found = {}
    try:
        with open(stat_path) as f:
            for line in f:
                key, _, value = line.partition(" ")
                if key in ("total_inactive_file", "inactive_file"):
                    found[key] = float(value)
    except (OSError, ValueError):
        return 0.0
    return found.get("total_inactive_file", found.get("inactive_file", 0.0))


def _cgroup_dirs():
    """(directory, limit file, usage file) of this process's memory cgroups and their
    ancestors, v2 then v1: a limit anywhere up the tree applies. The path in
    /proc/self/cgroup is relative to the mount (in a container with a cgroup namespace
    it is "/"); when it is not found under the mount (no namespace), the mount's own
    files are the container's."""
    paths = {"v2": "/", "v1": "/"}
    try:
        with open(PROC_CGROUP) as f:
            for line in f:
                parts = line.rstrip("\n").split(":", 2)
                if len(parts) != 3:
                    continue
                if parts[0] == "0" and parts[1] == "":
                    paths["v2"] = parts[2] or "/"
                elif "memory" in parts[1].split(","):
                    paths["v1"] = parts[2] or "/"
    except OSError:
        pass
    out = []
    for version, mount, limit_name, usage_name in (
            ("v2", CGROUP_ROOT, "memory.max", "memory.current"),
            ("v1", os.path.join(CGROUP_ROOT, "memory"), "memory.limit_in_bytes", "memory.usage_in_bytes")):
        rel = paths[version].strip("/")
        chain = []
        while True:
            chain.append(os.path.join(mount, rel) if rel else mount)
            if not rel:
                break
            rel = os.path.dirname(rel)
        out.extend((d, limit_name, usage_name) for d in chain)
    return out


def _cgroup_room():
    """Bytes left under the tightest cgroup v2 (memory.max) or v1 (memory.limit_in_bytes)
    memory limit of this process and its ancestors, or None when there is none: the
    limit less the usage, the usage less the inactive page cache (which the kernel
    reclaims before it kills, as container runtimes count a working set)."""
    room = None
    for d, limit_name, usage_name in _cgroup_dirs():
        limit = _read_number(os.path.join(d, limit_name))
        if limit is None or limit >= 2.0 ** 60:  # absent, "max", or v1's "no limit"
            continue
        usage = _read_number(os.path.join(d, usage_name)) or 0.0
        usage = max(usage - _inactive_file(os.path.join(d, "memory.stat")), 0.0)
        left = max(limit - usage, 0.0)
        room = left if room is None else min(room, left)
    return room


def _status_bytes(field):
    return _proc_bytes(PROC_STATUS, field)


_RLIMITS = (("RLIMIT_AS", "VmSize", "address-space limit (RLIMIT_AS, ulimit -v)"),
            ("RLIMIT_DATA", "VmData", "data-segment limit (RLIMIT_DATA, ulimit -d)"))


def _rlimit_room():
    """(bytes the process may still map under its resource limits, which limit binds):
    ``ulimit -v``, RLIMIT_AS against the address space in use (VmSize); ``ulimit -d``,
    RLIMIT_DATA against VmData. (None, None) when neither is set. Past them malloc
    fails, whatever the machine has free."""
    room = which = None
    if resource is None:  # not a Unix
        return room, which
    for limit_id, field, text in _RLIMITS:
        if not hasattr(resource, limit_id):
            continue
        try:
            soft = resource.getrlimit(getattr(resource, limit_id))[0]
        except (OSError, ValueError):
            continue
        if soft == resource.RLIM_INFINITY or soft < 0:
            continue
        used = _status_bytes(field) or 0.0
        left = max(float(soft) - used, 0.0)
        if room is None or left < room:
            room, which = left, text
    return room, which


def memory_room():
    """(bytes of memory available to this process now, what bounds it); (None, ...) when
    the OS does not say. The smallest of the machine's available memory (MemAvailable),
    the room under a cgroup limit and the room under RLIMIT_AS / RLIMIT_DATA."""
    avail, source = _meminfo_available(), "the machine's available memory"
    if avail is None:
        try:
            avail = float(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
        except (AttributeError, ValueError, OSError):
            avail = None
    rlimit_room, rlimit = _rlimit_room()
    for room, what in ((_cgroup_room(), "the room under the cgroup's memory limit"),
                       (rlimit_room, f"the room under the process's {rlimit}")):
        if room is not None and (avail is None or room < avail):
            avail, source = room, what
    return avail, source


def memory_limit():
    """(limit in bytes or None for no limit, where it comes from)."""
    local = getattr(_state, "limit", None)
    if local is not None:
        return local, "defrag.max_memory(...)"
    if _global["limit"] is not None:
        return _global["limit"], "defrag.set_max_memory(...)"
    env = os.environ.get("DEFRAG_MAX_MEMORY")
    if env:
        return _parse_bytes(env, "DEFRAG_MAX_MEMORY"), "DEFRAG_MAX_MEMORY"
    avail, what = memory_room()
    if avail is None:
        return None, "no limit (the OS reports no available memory)"
    return DEFAULT_SHARE * avail, f"{DEFAULT_SHARE:.0%} of {format_bytes(avail)} available: {what}"


def describe_limit():
    """The memory limit and where it comes from, for messages."""
    limit, source = memory_limit()
    return source if limit is None else f"{format_bytes(limit)}, {source}"


def format_bytes(n):
    for unit, size in (("TB", 2.0 ** 40), ("GB", 2.0 ** 30), ("MB", 2.0 ** 20), ("KB", 2.0 ** 10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{int(n)} bytes"


def check_memory(estimate, what, knobs, parts=None):
    """DefragMemoryError when ``estimate`` (bytes) exceeds the memory limit.

    what: the operation ("DefragModel.fit"); knobs: the parameters that reduce it;
    parts: {name: bytes} of the largest items, named in the message."""
    limit, source = memory_limit()
    if limit is None or estimate <= limit:
        return
    detail = ""
    if parts:
        top = sorted(parts.items(), key=lambda kv: -kv[1])[:3]
        detail = " (" + ", ".join(f"{name} {format_bytes(b)}" for name, b in top) + ")"
    raise DefragMemoryError(
        f"{what} would need about {format_bytes(estimate)} of memory{detail}, more than the "
        f"limit of {format_bytes(limit)} ({source}). Reduce it with {knobs}, or raise the "
        "limit with defrag.set_max_memory(...) (float('inf') turns the check off)."
    )


# A classifier's y with more distinct labels than this and than the source model has
# classes is refused (check_class_count): it is nearly always a continuous target given
# to a classifier, and every estimator's per-class tables (and scikit-learn's tree
# criterion, which is O(classes) per candidate split) grow with it: at 100k labels the
# baselines' tables take terabytes or their fits hours.
MAX_CLASSES = 1000


def check_class_count(n_labels, source_classes, n_rows, what):
    """DefragMemoryError when a classification target has more than
    max(MAX_CLASSES, the source model's classes) distinct labels, with a message that
    suggests regression. n_labels: the distinct labels of y with the model's classes;
    source_classes: the model's classes (None when it does not say)."""
    n_source = 0 if source_classes is None else len(source_classes)
    bound = max(MAX_CLASSES, n_source)
    if n_labels <= bound:
        return
    model = (f"the model knows {n_source} classes" if n_source
             else "the model does not name its classes")
    raise DefragMemoryError(
        f"{what}: y has {n_labels} distinct labels among {n_rows} rows, more than "
        f"{bound} (defrag's bound on classes, MAX_CLASSES = {MAX_CLASSES}, or the model's "
        f"classes when more) and {model}; the per-class tables grow with every label. If y "
        "is a continuous target, fit a regression ensemble (and task='regression' for "
        "DefragModel); if the labels are classes, bin them or fit the ensemble on them."
    )


# ----------------------------------------------------------------------- estimates

def fit_estimate(n_samples, n_fit, n_features, n_splits, n_groups, bit_words, max_group,
                 n_components, n_classes, workers, threads, rule_list, iterations=0):
    """{part: bytes} of DefragModel.fit's large arrays (see defrag_model.py).

    n_samples rows (n_fit of them each restart is fitted on: the subsample), n_features
    columns, n_splits splits L, the s matrix as n_groups int32 ranks per row or, with
    bit_words > 0, as bit_words 64-bit words per row; max_group splits on one feature;
    K = n_components; ``workers`` restarts in flight with ``threads`` OpenMP threads each.

    Per restart (defrag/fit/restarts.py, src_c/dfg_fit.c): responsibilities beta (n_fit x K)
    and the kernel's log-likelihoods and E-step scratch (2 n_fit x K), eta (K x L) with its
    random draw, the per-component tables ((L + 2D) x K), the per-thread run buffers of
    the likelihood kernel (12 bytes x K x max_group each), and the MAP assignment's
    N x K buffer when scoring on all rows; with rule lists, the condition columns and
    the cover matrix (a byte per row, per rule and per condition, a rule having at most
    one condition per feature); and the restart's trace of the lower bound, 12 bytes an
    iteration for the most ``iterations`` it may run (max_iter and the annealing's; 10**7
    iterations: 120 MB a restart in flight)."""
    N, n, D, L, K = (int(v) for v in (n_samples, n_fit, n_features, n_splits, n_components))
    s_row = 8 * bit_words if bit_words else 4 * n_groups
    parts = {"X as float64": 8.0 * N * D, "split matrix": float(s_row) * N}
    if n < N:
        parts["subsample"] = float(s_row) * n + (8.0 * n * D if rule_list else 0.0)
    per_restart = (8.0 * K * (3 * n + 2 * L + (L + 2 * D) + max(n_classes, 2))
                   + 12.0 * K * max(max_group, 1) * threads)
    if n < N or not rule_list:  # MAP assignment on the scored rows (score after the fit)
        per_restart = max(per_restart, 8.0 * K * (n + N + 2 * L))
    if rule_list:
        # a bool column per condition (at most one condition per feature: both bounds in
        # one Condition, defrag/rules/lists.py), the cover matrix and a float64 column
        per_restart += float(n) * K * (min(L, D) + 2) + 8.0 * n
    per_restart += 12.0 * int(iterations)
    parts["restarts in flight"] = per_restart * workers
    return parts


def prototype_estimate(n_samples, n_candidates, n_trees, n_features, n_classes, euclidean,
                       supervised):
    """{part: bytes} of PrototypeExplainer.fit (defrag/prototypes/), N = n_samples points,
    c = n_candidates, T = n_trees.

    Tree distances: the model's leaf matrix (int64 from ``apply``, then its int32 copy),
    the kernel's inputs (the candidates' rows and the transposed matrix, int32) and its
    float32 c x N output. The Euclidean distance: float64 c x N products and the scaled
    copies while they are rounded to float32 (about 2.5 c x N float64 at once), and X.
    Selection: the greedy steps' float64 blocks (512 candidates x N for "sg", with the
    comparison masks; 256 x N for the submodular methods) and the per-class tables."""
    N, c, T = float(n_samples), float(n_candidates), float(n_trees)
    parts = {"selection": 8.0 * (n_classes + 4) * N + 8.0 * c
             + (512.0 * 33 if supervised else 256.0 * 24) * N}
    if euclidean:
        parts["distance matrix"] = 20.0 * c * N
        parts["X as float64"] = 8.0 * N * n_features
    else:
        parts["distance matrix"] = 4.0 * c * N
        parts["leaf matrix"] = max(12.0 * N * T, 8.0 * N * T + 4.0 * c * T)
    return parts


def proxy_estimate(n_samples, n_features, n_targets, n_members, n_threads, cv, min_leaf,
                   max_depth=None, x_copied=False):
    """{part: bytes} of ProxyTree.fit (defrag/proxy/): N = n_samples rows, D = n_features.

    X as float64 when fit had to convert it (x_copied) and the training rows of each
    cross-validation fold (cv), the reference's targets (n_targets float64 per row: mean
    and variance, or the class probabilities; and their fold copies), the member
    predictions of a bagged reference (n_members x N float64), the split search (a node's
    row stats, n_targets + 1 doubles a row, 16 bytes a row per thread for the sorted rows,
    the row index arrays of the nodes on the stack and the routing masks) and the grown
    tree (at most 2 N / min_samples_leaf nodes, and 2^(max_depth + 1) - 1, held in Python
    lists)."""
    N, D = float(n_samples), float(n_features)
    n_nodes = 2.0 * N / max(int(min_leaf), 1) + 1.0
    if max_depth is not None:
        n_nodes = min(n_nodes, 2.0 ** (min(int(max_depth), 60) + 1) - 1.0)
    parts = {"targets": 8.0 * N * n_targets * (2.0 if cv else 1.0),
             "split search": 8.0 * N * (n_targets + 1) + 16.0 * N * n_threads + 24.0 * N,
             "tree": n_nodes * (400.0 + 8.0 * n_targets)}
    if x_copied or cv:
        parts["X as float64"] = 8.0 * N * D * (float(x_copied) + float(bool(cv)))
    if n_members:
        parts["member predictions"] = 8.0 * N * n_members
    return parts


def check_memory_of(parts, what, knobs):
    """check_memory of the sum of parts ({name: bytes})."""
    check_memory(sum(parts.values()), what, knobs, parts)


# The baselines (defrag/baselines/). n rows, d features, C classes present (1 for
# regression).

def born_again_estimate(n_rows, n_features, n_classes, max_depth, min_samples_split, n_generated,
                        n_test):
    """{part: bytes} of growing one born-again tree (defrag/baselines/born_again.py) to
    max_depth on n_rows rows, n_test held-out rows scored per depth of the grid.

    A node that splits holds more than min_samples_split rows, so a level has at most
    n / (min_samples_split + 1) of them and 2**depth; every node keeps its value (C
    float64, held in the node list, stacked into the tree and copied when it is cut);
    a level's generated points (n_generated per splitting node: row indices, coded
    values and the ensemble's input); the held-out rows' leaves and predictions; the
    stump's pool (the node's rows and generated points) and the row index arrays."""
    n, d, C, D = float(n_rows), float(n_features), float(max(n_classes, 1)), int(max_depth)
    splitting = float(min(2.0 ** min(D, 60) - 1.0, D * (n // (int(min_samples_split) + 1))))
    nodes = 1.0 + 2.0 * splitting
    level = float(min(2.0 ** min(D - 1, 60), n // (int(min_samples_split) + 1)))
    return {"node values": 3.0 * 8.0 * nodes * C,
            "generated points": 4.0 * 8.0 * level * n_generated * d,
            "held-out predictions": 16.0 * float(n_test),
            "stump pools and row indices": 8.0 * (n + n_generated) * (d + 4.0) + 8.0 * 8.0 * C}


def intrees_estimate(n_rows, n_rules, n_classes, block_cells=1 << 22):
    """{part: bytes} of InTrees.fit (defrag/baselines/intrees.py): the rule cover
    (n x R bool; one alive at a time, with the learner's copy of the rows a chosen rule
    newly covers), the class counts' blocks (block_cells cells, taken in class order and
    cast to int64 by reduceat) and the per-rule class counts (R x C: int64 sums, float32
    counts and the learner's update)."""
    n, R, C = float(n_rows), float(n_rules), float(max(n_classes, 1))
    return {"rule cover": 2.0 * n * R, "class-count blocks": 9.0 * min(float(block_cells), n * R),
            "class counts": 20.0 * R * C}


def node_harvest_estimate(n_rows, n_candidates, n_nodes):
    """{part: bytes} of NodeHarvest.fit (defrag/baselines/node_harvest.py): the cover of
    every candidate node (n x P bool, with its packed patterns), the kept nodes' 0/1
    matrix and its product with the node means (n x p float64 each, with the distinct
    membership patterns: at most n rows, sorted as a copy), the SVD of those patterns
    (the n x p left factor and p x p right one) and the solver's p x p matrices."""
    n, P, p = float(n_rows), float(n_candidates), float(n_nodes)
    return {"candidate cover": 1.2 * n * P, "node matrices": 8.0 * 5.0 * n * p,
            "null space and solver": 8.0 * (n * p + 6.0 * p * p)}


def depth_two_estimate(n_rows, n_features, n_classes, max_depth):
    """{part: bytes} of DepthTwoTree.fit (defrag/baselines/depth_two.py): scikit-learn's
    float32 copy of X and its row arrays, its per-class criterion sums, the tree's
    node values (C float64 each) and their copy over all classes, with the rules'
    probabilities."""
    n, d, C = float(n_rows), float(n_features), float(max(n_classes, 1))
    nodes = min(2.0 ** (min(int(max_depth), 60) + 1) - 1.0, 2.0 * n)
    return {"X as float32 and row arrays": 4.0 * n * d + 8.0 * 3.0 * n,
            "per-class tables": 8.0 * C * (3.0 * nodes + 8.0)}
