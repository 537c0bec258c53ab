"""Plots of rules (matplotlib, an optional extra: ``pip install "defrag[plot]"``).

Each function draws on a new ``Figure`` (no pyplot state; works headless) or on the
``ax`` given, and returns the figure:

- ``rules_2d(model, X, y, features=(i, j))``: the regions' boxes over a scatter of the data
  on two features (as Figures 6-7 of Hara & Hayashi, AISTATS 2018): a rule list's rules, a
  tree of rules' leaves; a sum is refused (its regions are not boxes);
- ``tradeoff(results)``: conditions printed against error, one series per method (the
  layout of their Figure 5), or a fitted model's path of candidates (any form) against
  their cross-validated error;
- ``rule_coverage(model, X)``: one bar per region, the share of X it covers (and for a
  list the share it predicts for), labelled with its prediction; for a sum, one bar per
  leaf of each part, labelled with the value it adds.
"""
import numpy as np

from .rules import RuleTree, rule_count_text
from .utils.text import printed_label, printed_name


def _matplotlib():
    try:
        from matplotlib.figure import Figure
    except ImportError:  # pragma: no cover - depends on the installation
        raise ImportError('defrag.plot needs matplotlib: pip install "defrag[plot]"') from None
    return Figure


def _figure(ax, figsize):
    if ax is not None:
        return ax.figure, ax
    fig = _matplotlib()(figsize=figsize)
    return fig, fig.subplots()


def _rules_of(model, plot, sums=True):
    """The RuleSet or RuleTree of a fitted model or the rules themselves; a sum refused
    (one line saying why) where sums is False."""
    rules = model if isinstance(model, RuleTree) else getattr(model, "rules_", None)
    if not isinstance(rules, RuleTree):
        raise TypeError(f"{plot} expected a fitted model with rules_, a RuleSet or a RuleTree; "
                        f"got {type(model).__name__}")
    if not sums and rules.form == "sum":
        raise ValueError(f"{plot} cannot draw a sum of trees: it adds one value from each part, so its "
                         "regions are not boxes; draw it with rule_coverage, or fit form='tree' or "
                         "form='list'")
    return rules


def _regions(rules):
    """(conditions, prediction, exact) of each region drawn, in reading order, and the
    prediction of the region left out (the default, or a tree's last 'else'). A rule list's
    rules; a tree's leaves, each the box of the 'then' conditions on its path (exact False
    where the path takes an 'else': the region is that box less the boxes tested before)."""
    if rules.form == "list":
        return [(r.conditions, r.prediction, True) for r in rules.rules], rules.default_prediction
    out, default = [], None
    stack = [(rules.terms[0], [], True)]
    while stack:
        item, path, exact = stack.pop()
        if hasattr(item, "conditions"):  # a box: 'then' inside it, 'else' outside
            stack.append((item.otherwise, path, False))
            stack.append((item.then, path + list(item.conditions), exact))
        elif path:
            out.append((path, item.prediction, exact))
        else:  # the rows outside every box on the root's 'else' path
            default = item.prediction
    return out, default


def _n_features(rules):
    if rules.feature_names is not None:
        return len(rules.feature_names)
    regions, _ = _regions(rules)
    return 1 + max((c.feature for conditions, _, _ in regions for c in conditions), default=0)


def _feature_index(rules, feature):
    if isinstance(feature, (int, np.integer)):
        if not 0 <= feature < _n_features(rules):
            raise ValueError(f"feature {feature} is out of range: the rules have {_n_features(rules)}")
        return int(feature)
    for names in (getattr(rules, "feature_names_in", None), rules.feature_names):
        if names is not None and str(feature) in names:
            return list(names).index(str(feature))
    raise ValueError(f"no feature named {feature!r}")


def _label(value):
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.4g}"
    return _literal(printed_label(value))


def _literal(text):
    """text as matplotlib draws it as it is: a '$' would open mathematical text."""
    return text.replace("$", r"\$")


def rule_box(rule, i, j):
    """((x_low, x_high), (y_low, y_high), exact) of a rule on features i and j: the
    interval of its numeric conditions on each (None: unbounded); exact is False when
    the rule also has conditions the box cannot show (other features, category sets)."""
    return _box(rule.conditions, i, j)


def _box(conditions, i, j):
    """((x_low, x_high), (y_low, y_high), exact) of conditions on features i and j."""
    box = {i: [None, None], j: [None, None]}
    exact = True
    for c in conditions:
        if c.feature not in box or c.is_set:
            exact = False
            continue
        lo, hi = box[c.feature]
        if c.lower is not None:
            box[c.feature][0] = c.lower if lo is None else max(lo, c.lower)
        if c.upper is not None:
            box[c.feature][1] = c.upper if hi is None else min(hi, c.upper)
    return tuple(box[i]), tuple(box[j]), exact


def _place_labels(ax, labels, taken=()):
    """Each label (text, colour, box corners in data coordinates) at the first corner of
    its box, inside it, whose text overlaps no label placed before and none of the
    extents taken (the legend's); where every corner does, below the top-left one by
    whole label heights, as far as it takes. Returns the Text artists."""
    renderer = ax.figure.canvas.get_renderer() if hasattr(ax.figure.canvas, "get_renderer") else None
    placed, texts = list(taken), []
    corners = (("left", "top", 3, -3), ("right", "top", -3, -3), ("left", "bottom", 3, 3),
               ("right", "bottom", -3, 3))
    for text, colour, (x0, x1, y0, y1) in labels:
        artist = None
        for ha, va, dx, dy in corners:
            point = (x0 if ha == "left" else x1, y1 if va == "top" else y0)
            artist = ax.annotate(text, point, xytext=(dx, dy), textcoords="offset points", va=va, ha=ha,
                                 fontsize=8, color=colour, zorder=4)
            extent = artist.get_window_extent(renderer)
            if not any(extent.overlaps(other) for other in placed):
                break
            artist.remove()
            artist = None
        if artist is None:  # every corner is taken: the first free place below the top-left one
            step = 0
            while True:
                step += 1
                artist = ax.annotate(text, (x0, y1), xytext=(3, -3 - step * 10), textcoords="offset points",
                                     va="top", ha="left", fontsize=8, color=colour, zorder=4)
                extent = artist.get_window_extent(renderer)
                if not any(extent.overlaps(other) for other in placed):
                    break
                artist.remove()
        placed.append(artist.get_window_extent(renderer))
        texts.append(artist)
    return texts


def rules_2d(model, X, y=None, features=(0, 1), ax=None, figsize=(6.4, 5.4), max_points=5000,
             random_state=0):
    """The regions' boxes on two features over a scatter of X (coloured by y, or by the
    rules' predictions when y is None): a rule list's rules (``RuleSet``), or a tree of
    rules' leaves (``RuleTree``), each the box of the conditions on its path; a sum of
    trees is refused (its regions are not boxes). A box is drawn dashed where it is not
    the region exactly: a rule with conditions on other features (or category sets) is
    projected, and a tree's leaf reached through an 'else' is its box less the boxes
    tested before. A region with no condition on either feature is not drawn (its box
    would be the whole frame): the title names those left out. Boxes are numbered in
    reading order and labelled with their predictions, no label over another or over
    the legend. Regression targets are coloured on a scale, classes by colour. Returns
    the Figure."""
    rules = _rules_of(model, "rules_2d", sums=False)
    i, j = (_feature_index(rules, f) for f in features)
    Xc = rules.encode(X)
    target = rules.predict(X) if y is None else np.asarray(y)
    if target.shape[0] != Xc.shape[0]:
        raise ValueError(f"y has {target.shape[0]} entries but X has {Xc.shape[0]} rows")
    fig, ax = _figure(ax, figsize)
    rows = np.arange(Xc.shape[0])
    if rows.size > max_points:  # a readable scatter, the same for the same random_state
        rows = np.sort(np.random.default_rng(random_state).choice(rows, max_points, replace=False))
    xs, ys = Xc[rows, i], Xc[rows, j]
    classes = rules.classes
    import matplotlib

    cmap = matplotlib.colormaps["tab10"]
    if classes is not None:
        for k, c in enumerate(classes):
            sel = target[rows] == c
            ax.scatter(xs[sel], ys[sel], s=8, alpha=0.35, color=cmap(k % 10), label=f"y = {_label(c)}",
                       linewidths=0, zorder=1)
    else:
        points = ax.scatter(xs, ys, s=8, alpha=0.5, c=target[rows].astype(float), cmap="viridis",
                            linewidths=0, zorder=1)
        fig.colorbar(points, ax=ax, label="y")
    finite = np.isfinite(xs) & np.isfinite(ys)
    if finite.any():
        pad_x = 0.03 * (np.ptp(xs[finite]) or 1.0)
        pad_y = 0.03 * (np.ptp(ys[finite]) or 1.0)
        ax.set_xlim(xs[finite].min() - pad_x, xs[finite].max() + pad_x)
        ax.set_ylim(ys[finite].min() - pad_y, ys[finite].max() + pad_y)
    x_lim, y_lim = ax.get_xlim(), ax.get_ylim()
    edge = matplotlib.colormaps["Dark2"]
    from matplotlib.patches import Rectangle

    regions, default = _regions(rules)
    labels, numbers, left_out = [], [], []
    for k, (conditions, prediction, whole) in enumerate(regions):
        (x0, x1), (y0, y1), exact = _box(conditions, i, j)
        if x0 is None and x1 is None and y0 is None and y1 is None:
            left_out.append(k + 1)  # no condition on these two features: a box would be the whole frame
            continue
        x0 = x_lim[0] if x0 is None else max(x0, x_lim[0])
        x1 = x_lim[1] if x1 is None else min(x1, x_lim[1])
        y0 = y_lim[0] if y0 is None else max(y0, y_lim[0])
        y1 = y_lim[1] if y1 is None else min(y1, y_lim[1])
        if x1 <= x0 or y1 <= y0:
            continue  # empty on these two features (or outside the data)
        colour = edge(k % 8)
        ax.add_patch(Rectangle((x0, y0), x1 - x0, y1 - y0, fill=False, edgecolor=colour, linewidth=2,
                               linestyle="-" if exact and whole else "--", zorder=3, gid=f"rule-{k + 1}"))
        labels.append((f"[{k + 1}] y = {_label(prediction)}", colour, (x0, x1, y0, y1)))
        numbers.append(k + 1)
    taken = []
    if classes is not None:  # the legend first, so that no label is placed over it
        legend = ax.legend(loc="lower right", fontsize=8, markerscale=2)
        renderer = fig.canvas.get_renderer() if hasattr(fig.canvas, "get_renderer") else None
        taken.append(legend.get_window_extent(renderer))
    for k, text in zip(numbers, _place_labels(ax, labels, taken)):
        text.set_gid(f"label-{k}")
    ax.set_xlim(x_lim)
    ax.set_ylim(y_lim)
    names = rules.feature_names or [f"x{d}" for d in range(_n_features(rules))]
    ax.set_xlabel(_literal(printed_name(names[i])))
    ax.set_ylabel(_literal(printed_name(names[j])))
    if rules.form == "list":
        title = f"{rule_count_text(len(rules.rules))} (y = {_label(default)})"
    else:
        title = f"{rules.n_regions} regions, {rules.n_conditions} conditions" + \
            ("" if default is None else f" (otherwise y = {_label(default)})")
    if left_out:
        title += (f"\nnot drawn, no condition on these two features: "
                  f"{', '.join(f'[{k}]' for k in left_out)}")
    ax.set_title(title, fontsize=10 if left_out else None)
    return fig


def _path_records(path, printed_conditions=None):
    """(series, n_conditions, validation error, chosen) of each candidate of a fitted
    model's path_ (one series per form), the candidates without a cross-validated error
    left out, the printed one (``chosen``) marked; where a list's kept restart printed its
    own list (``printed``: "restarts"), that list (printed_conditions, the model's
    n_conditions_) is a point of its own where its cross-validated error is known."""
    n = np.asarray(path["n_conditions"], dtype=float)
    error = np.asarray(path["validation_error"], dtype=float)
    forms = [str(f) for f in path["form"]]
    restarts = path.get("printed") == "restarts"  # a list: the kept restart's own list printed, not on the path
    chosen = None if restarts else path.get("chosen")
    records = [(forms[k], n[k], error[k], k == chosen) for k in range(n.size) if np.isfinite(error[k])]
    if restarts and printed_conditions is not None:
        kept = float(path.get("restarts_validation_error", np.nan))
        if np.isfinite(kept):
            records.append(("restarts", float(printed_conditions), kept, True))
    return records


def _records(results):
    """(method, n_conditions, error, False) of a mapping {method: [(n_conditions, error),
    ...]}, of records with those keys, or of a DataFrame with those columns."""
    if hasattr(results, "to_dict") and hasattr(results, "columns"):
        results = results.to_dict("records")
    if isinstance(results, dict):
        return [(str(m), float(n), float(e), False) for m, pairs in results.items() for n, e in pairs]
    out = []
    for r in results:
        try:
            out.append((str(r["method"]), float(r["n_conditions"]), float(r["error"]), False))
        except (KeyError, TypeError):
            raise ValueError("results must map a method to (n_conditions, error) pairs, or be records "
                             "with 'method', 'n_conditions' and 'error'") from None
    return out


def tradeoff(results, ax=None, figsize=(6.4, 4.4), error_label=None):
    """Conditions printed (comparisons, ``n_conditions``) against error, one marker series
    per method, on a linear axis of whole numbers.

    ``results``: a fitted model with a searched path (``path_``: its candidates against
    their cross-validated error, one series per form, the printed one circled; a rule
    list's kept restart, printed, is its own point), or the ``path_`` itself; or test errors, as a mapping {method: [(n_conditions, error), ...]}
    or records (a DataFrame) with 'method', 'n_conditions' and 'error'. ``error_label``:
    the y axis ("validation error" for a path, else "test error"). Returns the Figure."""
    path = getattr(results, "path_", results)
    from_path = isinstance(path, dict) and "n_conditions" in path and "validation_error" in path
    if from_path:
        records = _path_records(path, getattr(results, "n_conditions_", None))
        error_label = error_label or "validation error (cross-validated)"
    elif hasattr(results, "rules_"):
        raise ValueError(f"tradeoff needs a searched path (path_) and this {type(results).__name__} has "
                         "none: pass test errors, {method: [(n_conditions, error), ...]}")
    elif isinstance(results, RuleTree):
        raise TypeError("tradeoff needs a searched path: pass the fitted model (its path_), not its rules")
    else:
        records = _records(results)
        error_label = error_label or "test error"
    if not records:
        raise ValueError("the path has no cross-validated error to draw (a size set by n_regions is not "
                         "searched): fit without n_regions, or pass test errors" if from_path else "results is empty")
    fig, ax = _figure(ax, figsize)
    from matplotlib.ticker import MaxNLocator

    markers = "os^Dv<>pP*"
    methods = list(dict.fromkeys(m for m, *_ in records))
    for k, method in enumerate(methods):
        pts = sorted((n, e) for m, n, e, _ in records if m == method)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=markers[k % len(markers)],
                linestyle="-" if len(pts) > 1 else "none", label=method, alpha=0.85)
    for _, n, e, chosen in records:
        if chosen:
            ax.plot([n], [e], marker="o", markersize=14, markerfacecolor="none", markeredgecolor="black",
                    linestyle="none", label="chosen", gid="chosen")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("conditions printed")
    ax.set_ylabel(error_label)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def rule_coverage(model, X, ax=None, figsize=(6.4, 4.0)):
    """One bar per region, the share of X in it, labelled with its prediction.

    A rule list (``RuleSet``): one bar per rule and one for the default, the share of X
    the rule covers (light) and the share it predicts for, as its first match (dark). A
    tree of rules: one bar per leaf, in the printed order (each row reaches one leaf). A
    sum of trees: one bar per leaf of each part (``p1.1`` is part 1's first leaf), the
    share of X that reaches it, labelled with the value it adds. Returns the Figure."""
    rules = _rules_of(model, "rule_coverage")
    Xc = rules.encode(X)
    if rules.form != "list":
        return _leaf_coverage(rules, Xc, ax, figsize)
    n = max(Xc.shape[0], 1)
    listed = rules.rules
    cover = rules.covering(Xc).mean(axis=0) if Xc.shape[0] else np.zeros(len(listed))
    predicts = np.bincount(rules.route(Xc)[:, 0], minlength=len(listed) + 1) / n
    fig, ax = _figure(ax, figsize)
    pos = np.arange(len(listed) + 1)
    covered = np.append(cover, predicts[-1])
    ax.bar(pos, covered, color="0.8", label="covers")
    bars = ax.bar(pos, predicts, color="C0", label="predicts for (first match)")
    labels = [f"y = {_label(r.prediction)}" for r in listed] + [f"y = {_label(rules.default_prediction)}"]
    _bar_labels(ax, bars, covered, labels)
    ax.set_xticks(pos, [f"[{k + 1}]" for k in range(len(listed))] + ["otherwise"])
    ax.set_ylabel("share of the rows")
    ax.set_ylim(0, max(covered.max(), 1e-9) * 1.15)  # room for the labels
    ax.legend(fontsize=8)
    return fig


def _bar_labels(ax, bars, tops, labels):
    """Each bar's label above it, turned upright where the labels would not fit side by side."""
    upright = len(bars) > 8 or max((len(t) for t in labels), default=0) * len(bars) > 60
    for bar, top, text in zip(bars, tops, labels):
        ax.annotate(_literal(text), (bar.get_x() + bar.get_width() / 2, top), xytext=(0, 2),
                    textcoords="offset points", ha="center", va="bottom", fontsize=8,
                    rotation=90 if upright else 0, gid="bar-label")


def _sum_number(rules, value, signed=True):
    """A number of a sum as its text prints it: its decimals, or an integer of its unit."""
    decimals = getattr(rules, "decimals", None)
    if decimals is None:
        return f"{float(value):{'+' if signed else ''}.4g}"
    if decimals >= 0:
        return f"{float(value):{'+' if signed else ''}.{decimals}f}"
    return f"{int(round(float(value))):{'+' if signed else ''}d}"


def _leaf_coverage(rules, Xc, ax, figsize):
    """rule_coverage of a RuleTree: the share of the rows reaching each leaf of each term."""
    n_leaves = [len(rules.leaves(t)) for t in range(len(rules.terms))]
    route = rules.route(Xc)
    reach = np.concatenate([np.bincount(route[:, t], minlength=k) for t, k in enumerate(n_leaves)]) / \
        max(Xc.shape[0], 1)
    fig, ax = _figure(ax, figsize)
    pos, ticks, labels, colours = [], [], [], []
    summed = rules.form == "sum"
    for t in range(len(rules.terms)):
        for k, leaf in enumerate(rules.leaves(t)):
            pos.append(len(pos) + t)  # a gap between parts
            ticks.append(f"p{t + 1}.{k + 1}" if summed else f"[{k + 1}]")
            value = float(leaf.prediction) if summed else leaf.prediction
            if summed:
                labels.append(_sum_number(rules, value))
            else:  # a regression tree's value as printed; a class as its label
                labels.append("y = " + (_label(value) if rules.classes is not None else
                                        _sum_number(rules, value, signed=False)))
            colours.append(f"C{t % 10}")
    bars = ax.bar(pos, reach, color=colours)
    _bar_labels(ax, bars, reach, labels)
    ax.set_xticks(pos, ticks, rotation=90 if len(pos) > 12 else 0, fontsize=8)
    ax.set_ylabel("share of the rows")
    ax.set_ylim(0, max(float(reach.max()) if reach.size else 0.0, 1e-9) * 1.25)  # room for the labels
    if summed:
        what = "y" if rules.classes is None else f"p({printed_label(rules.classes[1])})"
        ax.set_title(_literal(f"{what} = {_sum_number(rules, rules.base, signed=False)} + one value from "
                              "each part"), fontsize=10)
        ax.set_xlabel("leaf of each part, in the printed order (p2.1: part 2's first leaf)")
    else:
        ax.set_xlabel("leaves in the printed order (each row reaches one)")
    return fig
