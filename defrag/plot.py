"""Plots of rules (matplotlib, an optional extra: ``pip install "defrag[plot]"``).

Each function draws on a new ``Figure`` (no pyplot state; works headless) or on the
``ax`` given, and returns the figure:

- ``rules_2d(model, X, y, features=(i, j))``: the rules' boxes over a scatter of the data
  on two features (as Figures 6-7 of Hara & Hayashi, AISTATS 2018);
- ``tradeoff(results)``: number of rules against test error, one series per method
  (the layout of their Figure 5);
- ``rule_coverage(model, X)``: one bar per rule, the share of X it covers and the share
  it predicts for, labelled with its prediction.
"""
import numpy as np

from .rules import RuleSet, rule_count_text


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


def _rules_of(model):
    rules = model if isinstance(model, RuleSet) else getattr(model, "rules_", None)
    if not isinstance(rules, RuleSet):
        raise TypeError(f"expected a fitted model with rules_ or a RuleSet; got {type(model).__name__}")
    return rules


def _feature_index(rules, feature):
    if isinstance(feature, (int, np.integer)):
        if not 0 <= feature < rules._n_features():
            raise ValueError(f"feature {feature} is out of range: the rules have {rules._n_features()}")
        return int(feature)
    for names in (getattr(rules, "feature_names_in", None), rules.feature_names):
        if names is not None and str(feature) in names:
            return list(names).index(str(feature))
    raise ValueError(f"no feature named {feature!r}")


def _label(value):
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.4g}"
    return str(value)


def rule_box(rule, i, j):
    """((x_low, x_high), (y_low, y_high), exact) of a rule on features i and j: the
    interval of its numeric conditions on each (None: unbounded); exact is False when
    the rule also has conditions the box cannot show (other features, category sets),
    or None when a condition on i or j is a set."""
    box = {i: [None, None], j: [None, None]}
    exact = True
    for c in rule.conditions:
        if c.feature not in box or c.is_set:
            exact = False
            continue
        lo, hi = box[c.feature]
        if c.lower is not None:
            box[c.feature][0] = c.lower if lo is None else max(lo, c.lower)
        if c.upper is not None:
            box[c.feature][1] = c.upper if hi is None else min(hi, c.upper)
    return tuple(box[i]), tuple(box[j]), exact


def rules_2d(model, X, y=None, features=(0, 1), ax=None, figsize=(6.4, 5.4), max_points=5000,
             random_state=0):
    """The rules' boxes on two features over a scatter of X (coloured by y, or by the
    rules' predictions when y is None). A rule with conditions on other features (or
    with category sets) is drawn dashed: its box is the projection of its region. Boxes
    are numbered in the rules' order (the first that holds predicts). Regression targets
    are coloured on a scale; classes by colour. Returns the Figure."""
    rules = _rules_of(model)
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
            ax.scatter(xs[sel], ys[sel], s=8, alpha=0.35, color=cmap(k % 10), label=f"y = {c}",
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

    for k, rule in enumerate(rules):
        (x0, x1), (y0, y1), exact = rule_box(rule, i, j)
        x0 = x_lim[0] if x0 is None else x0
        x1 = x_lim[1] if x1 is None else x1
        y0 = y_lim[0] if y0 is None else y0
        y1 = y_lim[1] if y1 is None else y1
        if x1 <= x0 or y1 <= y0:
            continue  # empty on these two features
        colour = edge(k % 8)
        ax.add_patch(Rectangle((x0, y0), x1 - x0, y1 - y0, fill=False, edgecolor=colour, linewidth=2,
                               linestyle="-" if exact else "--", zorder=3, gid=f"rule-{k + 1}"))
        ax.annotate(f"[{k + 1}] y = {_label(rule.prediction)}",
                    (max(x0, x_lim[0]), min(y1, y_lim[1])), xytext=(3, -3), textcoords="offset points",
                    va="top", ha="left", fontsize=8, color=colour, zorder=4)
    ax.set_xlim(x_lim)
    ax.set_ylim(y_lim)
    names = rules.feature_names or [f"x{d}" for d in range(rules._n_features())]
    ax.set_xlabel(names[i])
    ax.set_ylabel(names[j])
    ax.set_title(f"{rule_count_text(len(rules))} (y = {_label(rules.default_prediction)})")
    if classes is not None:
        ax.legend(loc="lower right", fontsize=8, markerscale=2)
    return fig


def _records(results):
    """(method, n_rules, error) triples of a mapping {method: [(n_rules, error), ...]},
    records with those keys, or a DataFrame with those columns."""
    if hasattr(results, "to_dict") and hasattr(results, "columns"):
        results = results.to_dict("records")
    if isinstance(results, dict):
        return [(str(m), float(n), float(e)) for m, pairs in results.items() for n, e in pairs]
    out = []
    for r in results:
        try:
            out.append((str(r["method"]), float(r["n_rules"]), float(r["error"])))
        except (KeyError, TypeError):
            raise ValueError("results must map a method to (n_rules, error) pairs, or be records "
                             "with 'method', 'n_rules' and 'error'") from None
    return out


def tradeoff(results, ax=None, figsize=(6.4, 4.4), log_rules=True, error_label="test error"):
    """Number of rules against test error, one marker series per method (several fits
    of a method, e.g. over max_rules or data sets' folds, are its points). Returns the
    Figure."""
    records = _records(results)
    if not records:
        raise ValueError("results is empty")
    fig, ax = _figure(ax, figsize)
    markers = "os^Dv<>pP*"
    methods = list(dict.fromkeys(m for m, _, _ in records))
    for k, method in enumerate(methods):
        pts = sorted((n, e) for m, n, e in records if m == method)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=markers[k % len(markers)],
                linestyle="-" if len(pts) > 1 else "none", label=method, alpha=0.85)
    if log_rules and min(n for _, n, _ in records) > 0:
        ax.set_xscale("log")
    ax.set_xlabel("number of rules")
    ax.set_ylabel(error_label)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def rule_coverage(model, X, ax=None, figsize=(6.4, 4.0)):
    """One bar per rule and one for the default: the share of X the rule covers (light)
    and the share it predicts for, as its first match (dark), labelled with its
    prediction. Returns the Figure."""
    rules = _rules_of(model)
    Xc = rules.encode(X)
    n = max(Xc.shape[0], 1)
    cover = rules.covering(Xc).mean(axis=0) if Xc.shape[0] else np.zeros(len(rules))
    first = rules.first_match(Xc)
    predicts = np.bincount(np.where(first < 0, len(rules), first), minlength=len(rules) + 1) / n
    fig, ax = _figure(ax, figsize)
    pos = np.arange(len(rules) + 1)
    covered = np.append(cover, predicts[-1])
    ax.bar(pos, covered, color="0.8", label="covers")
    bars = ax.bar(pos, predicts, color="C0", label="predicts for (first match)")
    labels = [_label(r.prediction) for r in rules] + [_label(rules.default_prediction)]
    for bar, top, text in zip(bars, covered, labels):
        ax.annotate(f"y = {text}", (bar.get_x() + bar.get_width() / 2, top), xytext=(0, 2),
                    textcoords="offset points", ha="center", va="bottom", fontsize=8)
    ax.set_xticks(pos, [f"[{k + 1}]" for k in range(len(rules))] + ["otherwise"])
    ax.set_ylabel("share of the rows")
    ax.set_ylim(0, max(covered.max(), 1e-9) * 1.15)  # room for the labels
    ax.legend(fontsize=8)
    return fig
