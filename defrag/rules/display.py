"""A rule set as a table for readers, in Markdown (``RuleSet.to_markdown``, its
``_repr_markdown_``, the CLI's ``--format markdown``) and in HTML (``RuleSet._repr_html_``, a
fitted model's notebook display). The cells are the rule set's (``RuleSet.table_rows``):
these functions only write them, escaped for each format, so that every table of rules
is the same table."""
import html
import re

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
