"""How each form of an explanation (rules/tree.py) prints: a list as its numbered listing
and table (what only a list has, rules/ruleset.py), a tree as indented ``if``/``elif``/
``else`` lines, a sum as its first number and one indented tree per part; the title's
counts, the heading of its repr and how to read it, said above the text."""
from ..utils.text import printed_label
from .ruleset import FIRST_MATCH, prediction_text, rule_count_text
from .tree_nodes import Leaf, Node


class Printing:
    """The text of an explanation, whatever its form (see the module docstring)."""

    def _number(self, value, signed=True):
        """A number of a sum, exactly: its decimals, or an integer of its unit."""
        sign = "+" if signed else ""
        if self.decimals >= 0:
            return f"{value:{sign}.{self.decimals}f}"
        return f"{int(round(value)):{sign}d}"

    def _leaf_text(self, leaf):
        if self.form == "sum":
            text = self._number(float(leaf.prediction))
        else:
            text = "y = " + prediction_text(leaf.prediction, leaf.proba)
        share = "" if leaf.share is None else f", {100.0 * leaf.share:.1f}%"
        return f"{text}   (support {leaf.support}{share})"

    def _lines(self, node, depth):
        pad = "    " * depth
        if isinstance(node, Leaf):
            return [pad + self._leaf_text(node)]
        lines, word = [], "if"
        while isinstance(node, Node):
            cond = " and ".join(c.text(mark_unseen=True) for c in node.conditions)
            if isinstance(node.then, Leaf):
                lines.append(f"{pad}{word} {cond}: {self._leaf_text(node.then)}")
            else:
                lines.append(f"{pad}{word} {cond}:")
                lines += self._lines(node.then, depth + 1)
            word, node = "elif", node.otherwise
        lines.append(f"{pad}else: {self._leaf_text(node)}")
        return lines

    def reading_guide(self):
        """Return how to read the text, said above it.

        Returns
        -------
        str
            The guide.
        """
        if self.form == "list":
            return FIRST_MATCH
        if self.form == "tree":
            return ("go down from the top: where every condition of an 'if' holds, take its branch, "
                    "else go on to the next 'elif' or the 'else'")
        what = self._sum_of()
        guide = (f"{what} is the first line's number plus one value from each part: in each part, the value "
                 "of the first branch whose conditions all hold")
        if self.classes is not None:
            first, second = (printed_label(c) for c in self.classes)
            guide += f"; y = {second} where {what} > 0.5, else {first}"
        return guide

    def _sum_of(self):
        """What a sum adds up, as printed: y, or the second class's probability."""
        return "y" if self.classes is None else f"p({printed_label(self.classes[1])})"

    def title(self):
        """Return the counts printed in the title: parts (a sum), regions, conditions.

        Returns
        -------
        str
            The counts.
        """
        regions = self.n_regions
        counts = (f"{regions} region{'' if regions == 1 else 's'}, {self.n_conditions} "
                  f"condition{'' if self.n_conditions == 1 else 's'}")
        if self.form == "sum":
            counts = f"{len(self.terms)} part{'' if len(self.terms) == 1 else 's'}, " + counts
        return counts

    def __str__(self):
        if self.form == "list":
            lines = self._listing()
        elif self.form == "tree":
            lines = self._lines(self.terms[0], 0)
        else:
            lines = [f"{self._sum_of()} = {self._number(self.base, signed=False)}"]
            for t, root in enumerate(self.terms, 1):
                lines.append(f"  + part {t}:")
                lines += self._lines(root, 2)
        note = self.missing_note()
        if note is not None:
            lines.append(note)
        return "\n".join(lines)

    def _table(self):
        return self.table_rows() if self.form == "list" else None  # a tree or a sum: displayed as its text

    def _heading(self):
        if self.form == "list":
            return f"RuleSet: {rule_count_text(len(self.nodes()))}"
        return f"RuleTree ({self.form}): {self.title()}"

    _guide = reading_guide
