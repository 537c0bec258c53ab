"""What an explanation (rules/explanation.py) delivers besides its predictions: its JSON
document (rules/document.py), its exports to SQL, Python, pandas queries and tables (the
form's export module, ``_exports``: rules/export.py or rules/tree_export.py), its
Markdown and HTML displays (rules/display.py), the note on missing values below its text
and what changed against another explanation (rules/diff.py). A form gives
``_document()``, ``_from_document(d)``, ``_exports``, ``_table()`` (a list's table rows;
None where the text is displayed as it is), ``_heading()`` and ``_guide()`` (how to read
it)."""
import json

from . import diff as diffs, display, document
from .conditions import missing_value_note


class Deliverables:
    """The documents, exports and displays of an explanation (see the module docstring)."""

    _exports = None  # the form's export module

    def to_dict(self):
        """Return a JSON-ready dict that rebuilds the explanation (``from_dict``).

        Returns
        -------
        dict
            Its rules, or its nodes and leaves; exact bounds and outputs, the feature names,
            the input encoding and a schema version.
        """
        return self._document()

    @classmethod
    def from_dict(cls, d):
        """Rebuild the explanation of ``to_dict``; it predicts as the original did.

        The whole document is checked before anything is built. Documents of schema 1 (a
        rule set) and 2 (a rule tree) load.

        Parameters
        ----------
        d : dict
            The document.

        Returns
        -------
        RuleTree
            The explanation, of the form the document holds.

        Raises
        ------
        RulesDocumentError
            A ValueError naming the JSON path of a bad field.
        """
        return cls._from_document(d)

    def diff(self, other, X=None, tol=None):
        """Say what changed from this explanation to other.

        The regions kept, changed (with their threshold moves), added and removed, and on the
        rows of X the share whose prediction changed and whose region changed, and the rows
        that moved between which regions; a list's default, "otherwise", is its last region.
        ``str()``, ``_repr_html_`` and ``to_json()`` show the result.

        Parameters
        ----------
        other : RuleTree
            The other explanation (any form), over the same features.
        X : array-like of shape (n_samples, n_features), default=None
            Rows on which to count the changes.
        tol : float, default=None
            In regression, a prediction changed where it moved by more than tol; None: 1% of
            the standard deviation of this one's predictions on X (without X: of its values'
            range), stated in the result.

        Returns
        -------
        ExplanationDiff
            The changes.

        Raises
        ------
        ValueError
            Where the two read different features or predict different things.
        """
        return diffs.explanation_diff(self, other, X, tol)

    def to_json(self, indent=None):
        """Return ``to_dict`` as JSON text (strict JSON: infinite numbers as strings).

        Parameters
        ----------
        indent : int, default=None
            The indentation of ``json.dumps``.

        Returns
        -------
        str
            The JSON text.
        """
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False, ensure_ascii=False)

    @classmethod
    def from_json(cls, text):
        """Rebuild the explanation of ``to_json`` (imports neither scikit-learn nor pandas).

        Parameters
        ----------
        text : str
            The JSON text.

        Returns
        -------
        RuleTree
            The explanation, of the form the document holds.

        Raises
        ------
        RulesDocumentError
            A bad document (see ``from_dict``), text that is not JSON or nests too deep.
        """
        return cls.from_dict(document.parse(text))

    def to_sql(self, table=None, column_names=None):
        """Return one SQL expression giving ``predict``.

        A list is one ``CASE WHEN ... THEN ... ELSE ... END``; a tree nests ``CASE`` at most a
        few deep; a sum adds integers of its unit. The table holds the columns as a DataFrame
        would (missing values as NULL, categorical columns as their labels); the expression
        is NULL where ``predict`` raises.

        Parameters
        ----------
        table : str, default=None
            The table that qualifies the column names.
        column_names : list or dict, default=None
            The table's names of the columns: a list in the rules' column order, or a dict
            from the rules' names to the table's.

        Returns
        -------
        str
            The SQL expression.
        """
        return self._exports.to_sql(self, table, column_names)

    def to_python(self, name="predict"):
        """Return the source of a dependency-free Python function ``name(row)``.

        The function takes a dict or pandas Series by column name, or a sequence in column
        order, and returns ``predict``'s value for the row.

        Parameters
        ----------
        name : str, default="predict"
            The function's name.

        Returns
        -------
        str
            The Python source.
        """
        return self._exports.to_python(self, name)

    def query_strings(self, column_names=None):
        """Return pandas ``DataFrame.query`` expressions selecting the rows of each region.

        Parameters
        ----------
        column_names : list or dict, default=None
            The DataFrame's names of the columns (as ``to_sql``'s).

        Returns
        -------
        list of str, or list of list of str
            One expression per rule of a list (without its default) or per leaf of a tree;
            a sum: one list per part. Column names in backticks; missing values as
            ``x != x``.

        Notes
        -----
        Where numexpr is installed, pandas evaluates a query with it by default, and
        numexpr refuses an expression of more than about 255 operations ("bytes must be
        in range(0, 256)"): a leaf deep in a long chain of boxes reads every box above it.
        ``frame.query(q, engine="python")`` evaluates any of them.
        """
        return self._exports.query_strings(self, column_names)

    def to_frame(self, X=None, y=None):
        """Return one row per region as a pandas DataFrame.

        A list: a row per rule and a last one for the default; the columns rule text,
        n_conditions, prediction, support (training points it predicts for), weight,
        coverage (share of the training points satisfying it), share (share of the training
        points it is the first match for; None where unknown) and proba_<class>; given X,
        X_coverage, X_support and X_share; given y too, precision and error
        (classification) or error (regression: mean squared error) on those rows. A tree or
        a sum: the columns term, region, its path, prediction (a sum: the value the part
        adds), support and share of the training rows, proba_<class> (a tree in
        classification); given X, X_support and X_share; given y too (a tree), error
        (classification: the share misclassified; regression: mean squared error) on those
        rows.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), default=None
            Rows on which to count each row's support and share.
        y : array-like of shape (n_samples,), default=None
            The targets of X, for the error on those rows.

        Returns
        -------
        pandas.DataFrame
            The table.
        """
        return self._exports.to_frame(self, X, y)

    def missing_note(self):
        """Return the line printed below the text on where missing values go.

        Returns
        -------
        str or None
            The line, or None where the conditions say it all.
        """
        enc = self.encoding
        unknown_missing = () if enc is None or enc.unknown != "missing" else \
            {d for d, cats in enumerate(enc.categories) if cats is not None}
        return missing_value_note(self._conditions(), self.supports_missing, unknown_missing)

    def to_markdown(self):
        """Return the explanation in Markdown.

        Returns
        -------
        str
            A list: a table, one row per rule (number, conditions, prediction, support,
            share), the default last, then the note on missing values where the listing has
            one. A tree or a sum: its text as a code block (it reads by its indentation).
        """
        rows = self._table()
        if rows is None:
            return display.markdown_code(str(self))
        return display.markdown_table(rows, self.missing_note())

    def to_html(self, above=()):
        """Return ``to_markdown``'s table, or the text in a ``<pre>`` block, in HTML.

        Every text is escaped.

        Parameters
        ----------
        above : sequence of str, default=()
            Lines of text printed above the table or the text.

        Returns
        -------
        str
            The HTML.
        """
        rows = self._table()
        if rows is None:
            return display.html_text(str(self), above)
        return display.html_table(rows, self.missing_note(), above)

    def _repr_markdown_(self):
        return self.to_markdown()

    def _repr_html_(self):
        return self.to_html([f"{self._heading()}; {self._guide()}"])
