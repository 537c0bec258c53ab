"""An explanation as readers see it in Markdown (``to_markdown``, ``_repr_markdown_``, the
CLI's ``--format markdown``) and in HTML (``_repr_html_``, a fitted model's notebook
display): a rule list as a table whose cells are the rule set's (``table_rows``, a list's),
so that every table of rules is the same table; a tree or a sum as its text, which reads
by its indentation. These functions only write them, escaped for each format."""
import html
import re

from ..utils.text import longest_run

# (header, alignment) of the table's columns
COLUMNS = (("#", "right"), ("if", "left"), ("then", "left"), ("support", "right"), ("first match", "right"))

# Markdown reads these as markup (emphasis, code, tables, escapes) wherever they stand
_MARKDOWN_ALWAYS = re.compile(r"([\\`*|])")
# and these only where they open one: an HTML tag or comment, an entity, emphasis with _
_MARKDOWN_OPENING = re.compile(r"<(?=[A-Za-z/!?])|&(?=#?\w+;)|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


def markdown_cell(text):
    """text as one Markdown table cell that renders as text (a backslash before what
    Markdown would read as markup; "x <= 3" stays as it is)."""
    text = " ".join(str(text).split())  # a cell is one line
    text = _MARKDOWN_ALWAYS.sub(r"\\\1", text)
    return _MARKDOWN_OPENING.sub(lambda m: "\\" + m.group(0), text)


def markdown_table(rows, note=None):
    """The Markdown table of rows (tuples of cell texts in COLUMNS' order), and the note
    below it as a paragraph of its own."""
    align = {"left": "---", "right": "--:"}
    lines = ["| " + " | ".join(name for name, _ in COLUMNS) + " |",
             "|" + "|".join(align[a] for _, a in COLUMNS) + "|"]
    lines += ["| " + " | ".join(markdown_cell(c) for c in row) + " |" for row in rows]
    if note:
        lines += ["", markdown_cell(note)]
    return "\n".join(lines)


def html_table(rows, note=None, above=()):
    """The HTML table of rows (as markdown_table's), under the lines above and over the
    note (texts); every text is escaped."""
    def cells(tag, texts):
        return "".join(f'<{tag} style="text-align: {a}">{html.escape(str(t))}</{tag}>'
                       for t, (_, a) in zip(texts, COLUMNS))

    parts = ['<div class="defrag-rules">']
    parts += [f"<p>{html.escape(line)}</p>" for line in above]
    parts.append("<table>")
    parts.append(f"<thead><tr>{cells('th', [name for name, _ in COLUMNS])}</tr></thead>")
    parts.append("<tbody>" + "".join(f"<tr>{cells('td', row)}</tr>" for row in rows) + "</tbody>")
    parts.append("</table>")
    if note:
        parts.append(f"<p>{html.escape(note)}</p>")
    parts.append("</div>")
    return "\n".join(parts)


def markdown_code(text):
    """text as a Markdown code block: a fence longer than any run of backquotes in the text,
    which then cannot close it (CommonMark); names cannot start a line of their own
    (utils/text.py)."""
    fence = "`" * max(3, longest_run(text, "`") + 1)
    return f"{fence}\n{text}\n{fence}"


def html_text(text, above=()):
    """text in an HTML ``<pre>`` block under the lines above; every text is escaped."""
    parts = ['<div class="defrag-rules">']
    parts += [f"<p>{html.escape(line)}</p>" for line in above]
    parts.append(f"<pre>{html.escape(text)}</pre></div>")
    return "\n".join(parts)
