"""Rules that show themselves (issue 26): a RuleSet's HTML and Markdown tables, read back as
HTML and as Markdown and checked against to_frame(); a fitted model's notebook display and
print."""
import html.parser
import re

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import (
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
)

from defrag import DefragModel, RuleSet, RuleTree
from defrag.rules import display
from defrag.rules.conditions import MISSING_MARK
from defrag.rules.ruleset import prediction_text

# names a table must escape: an HTML tag, an entity, Markdown's table bar and emphasis
NAMES = ["<b>size</b>", "R&D &amp; co", "a|b", "*x*", "plain_name"]


def _frame(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, len(NAMES))), columns=NAMES)
    signal = X.iloc[:, 0] + 0.8 * X.iloc[:, 1] - 0.5 * (X.iloc[:, 2] > 0.3)
    return X, signal.to_numpy()


@pytest.fixture(scope="module")
def fitted():
    """A classifier and a regressor whose rules name every awkward name; HistGradientBoosting
    has a direction for missing values though training had none: the listing marks them."""
    X, signal = _frame()
    out = {}
    for kind, Model, y in (("classification", HistGradientBoostingClassifier, (signal < -0.3).astype(int)),
                           ("regression", HistGradientBoostingRegressor, signal)):
        hgb = Model(max_iter=15, max_leaf_nodes=6, random_state=0).fit(X, y)
        out[kind] = (DefragModel(hgb, n_components=5, n_restarts=2, random_state=0, n_jobs=1, form="list").fit(X), X)
    return out


class _Cells(html.parser.HTMLParser):
    """The table rows of an HTML text (cells' text, entities read), its tags and paragraphs."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.rows, self.tags, self.paragraphs = [], set(), []
        self._cell = self._p = None

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = ""
        elif tag == "p":
            self._p = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.rows[-1].append(self._cell)
            self._cell = None
        elif tag == "p":
            self.paragraphs.append(self._p)
            self._p = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data
        if self._p is not None:
            self._p += data


def _parsed(text):
    parser = _Cells()
    parser.feed(text)
    parser.close()
    return parser


def _markdown_rows(text):
    """The cells of each table row of a Markdown text, escapes read."""
    rows = []
    for line in text.splitlines():
        if not line.startswith("|") or re.fullmatch(r"\|(-+:?\|)+", line):
            continue
        cells = re.split(r"(?<!\\)\|", line.strip()[1:-1])
        rows.append([re.sub(r"\\(.)", r"\1", c.strip()) for c in cells])
    return rows


def _check_against_frame(rows, rules):
    """rows (header first) hold the rule set's cells: those of to_frame() as the listing
    prints them."""
    frame = rules.to_frame()
    assert rows[0] == [name for name, _ in display.COLUMNS]
    body = rows[1:]
    assert len(body) == len(rules) == len(frame)
    probas = [c for c in frame.columns if c.startswith("proba_")]
    for i, (row, (_, f)) in enumerate(zip(body, frame.iterrows())):
        default = i == len(rules) - 1
        assert row[0] == ("*" if default else str(i + 1))
        # the conditions as the listing prints them: to_frame's text but MISSING_MARK for
        # "(or missing)" where training had no missing value
        assert row[1] == ("otherwise" if default else rules.rules[i].condition_text(mark_unseen=True))
        assert f["rule"] == ("otherwise" if default else rules.rules[i].condition_text())
        proba = np.array([f[c] for c in probas]) if probas else None
        assert row[2] == prediction_text(f["prediction"], proba)
        assert row[3] == str(int(f["support"]))  # the default's too: the points no rule takes
        assert row[4].endswith("%") and abs(float(row[4][:-1]) / 100 - f["share"]) <= 0.0005 + 1e-12
    assert frame["share"].sum() == pytest.approx(1.0)
    n = frame["support"].sum()
    np.testing.assert_allclose(frame["share"], frame["support"] / n)


@pytest.mark.parametrize("kind", ["classification", "regression"])
def test_html_table_cells_are_to_frame_and_escaped(fitted, kind):
    rules = fitted[kind][0].rules_
    if kind == "classification":  # the listing's missing-value marks are shown
        assert any(MISSING_MARK in r.condition_text(mark_unseen=True) for r in rules.rules)
    assert {c.name for r in rules.rules for c in r.conditions} & {"<b>size</b>", "R&D &amp; co"}
    text = rules._repr_html_()
    parsed = _parsed(text)
    # the names' tags and entities are text: only the table's own tags are there
    assert parsed.tags <= {"div", "p", "table", "thead", "tbody", "tr", "th", "td"}
    assert "<b>" not in text and "&amp;amp;" in text
    _check_against_frame(parsed.rows, rules)
    # the listing's note, below the table
    assert parsed.paragraphs[1:] == ([] if rules.missing_note() is None else [rules.missing_note()])
    assert "first match wins" in parsed.paragraphs[0]


@pytest.mark.parametrize("kind", ["classification", "regression"])
def test_markdown_table_rows_are_to_frame(fitted, kind):
    rules = fitted[kind][0].rules_
    text = rules.to_markdown()
    assert rules._repr_markdown_() == text
    _check_against_frame(_markdown_rows(text), rules)
    if rules.missing_note() is not None:
        assert text.splitlines()[-1] == display.markdown_cell(rules.missing_note())
    # what Markdown reads as markup is escaped ("<=" is not)
    used = {c.name for r in rules.rules for c in r.conditions}
    assert "<b>size</b>" in used and "\\<b>size\\</b>" in text
    assert ("<=" in text) == any("<=" in r.condition_text(mark_unseen=True) for r in rules.rules)
    for name in used:
        assert display.markdown_cell(name) in text


def test_markdown_cell_escapes_only_markup():
    cases = {"x <= 3": "x <= 3", "<b>": "\\<b>", "a & b": "a & b", "&amp;": "\\&amp;", "a|b": "a\\|b",
             "snake_case": "snake_case", "_x_": "\\_x\\_", "back\\slash": "back\\\\slash", "`c`": "\\`c\\`",
             "two\nlines": "two lines"}
    for text, cell in cases.items():
        assert display.markdown_cell(text) == cell


def test_shares_are_the_first_matches_on_the_training_rows(fitted):
    model, X = fitted["classification"]
    first = model.apply(X)
    counts = np.bincount(first, minlength=len(model.rules_.rules) + 1)
    np.testing.assert_allclose(model.rules_.to_frame()["share"].to_numpy(dtype=float), counts / len(X))
    # a rule set read from JSON does not know them: blank cells, no error
    back = RuleTree.from_json(model.rules_.to_json())
    rows = _markdown_rows(back.to_markdown())
    assert all(row[4] == "" for row in rows[1:]) and back.to_frame()["share"].isna().all()
    assert rows[-1][3] == "" and back.default_support is None


def test_print_starts_with_how_to_read_and_repr_stays_scikit_learn(fitted):
    model, _ = fitted["classification"]
    lines = str(model).splitlines()
    assert lines[0].startswith("How to read:") and "first match wins" in lines[0]
    assert lines[1].startswith("DefragModel: ")
    assert "\n".join(lines[2:]) == str(model.rules_)
    assert repr(model).startswith("DefragModel(") and "if " not in repr(model)
    paper = DefragModel.paper(model.estimator, n_components=3, n_restarts=1, random_state=0)
    assert str(paper) == repr(paper)  # unfitted
    X = fitted["classification"][1]
    paper.fit(X)
    assert "MAP" in str(paper).splitlines()[0]  # predict reads the paper's rules otherwise


def _check_model_html(text, model):
    rules_part = text[:text.index("</div>") + len("</div>")]  # scikit-learn's diagram may follow
    parsed = _parsed(rules_part)
    _check_against_frame(parsed.rows, model.rules_)
    assert parsed.paragraphs[0] == str(model).splitlines()[1]
    assert parsed.paragraphs[1] == str(model).splitlines()[0]


def test_fitted_model_shows_its_rules_through_its_repr_methods(fitted):
    from sklearn import config_context

    model, _ = fitted["regression"]
    bundle = model._repr_mimebundle_()
    assert bundle["text/plain"] == str(model)
    assert bundle["text/html"].startswith('<div class="defrag-rules">')
    _check_model_html(bundle["text/html"], model)
    # then scikit-learn's diagram (its ids differ from one call to the next)
    assert model._repr_html_().startswith(model._rules_html()) and bundle["text/html"].startswith(model._rules_html())
    assert "sk-top-container" in bundle["text/html"] and "sk-top-container" in model._repr_html_()
    with config_context(display="text"):  # no diagram: the rules alone
        assert "text/html" not in DefragModel(form="list")._repr_mimebundle_()
        assert model._repr_html_() == model._rules_html() == model._repr_mimebundle_()["text/html"]
    unfitted = DefragModel(model.estimator, form="list")
    assert "defrag-rules" not in unfitted._repr_mimebundle_()["text/html"]
    assert unfitted._repr_mimebundle_()["text/plain"] == repr(unfitted)


def test_notebook_display_shows_the_rules(fitted):
    formatters = pytest.importorskip("IPython.core.formatters")
    model, _ = fitted["classification"]
    shown = formatters.DisplayFormatter()
    data, _ = shown.format(model)
    assert data["text/plain"] == str(model)
    _check_model_html(data["text/html"], model)
    data, _ = shown.format(model.rules_)
    _check_against_frame(_parsed(data["text/html"]).rows, model.rules_)
    _check_against_frame(_markdown_rows(data["text/markdown"]), model.rules_)
    data, _ = shown.format(DefragModel(model.estimator, form="list"))  # unfitted: scikit-learn's display
    assert "defrag-rules" not in data["text/html"] and data["text/plain"].startswith("DefragModel(")


def test_an_interval_no_number_satisfies_prints_its_test():
    """It printed as "x1 in {}", an empty category set, though x1 > 1.79e308 holds at +inf
    (issue 45, item 9)."""
    from defrag import Condition, Rule

    top = float(np.finfo(np.float64).max)
    X = np.array([[np.inf], [top], [1.0], [4.0], [-np.inf], [np.nan]])
    cases = [(Condition(0, "x1", lower=top), f"x1 > {top!r}"),
             (Condition(0, "x1", lower=5.0, upper=3.0), "5 < x1 <= 3"),
             (Condition(0, "x1", lower=np.inf), "x1 > inf"),
             (Condition(0, "x1", lower=5.0, upper=3.0, missing=True), "x1 is missing"),
             (Condition(0, "x1", categories=[]), "x1 in {}")]
    for condition, text in cases:
        assert str(condition) == text
        # the text is the test: the rows it holds on are those predict takes
        rules = RuleSet([Rule([condition], 1.0)], 0.0, supports_missing=True)
        np.testing.assert_array_equal(rules.predict(X) == 1.0, condition.holds(X))
    assert Condition(0, "x1", lower=top).holds(X).tolist() == [True, False, False, False, False, False]
