"""Names in printed text: a feature's name, a category's or a class's label as the listings,
trees, sums, tables, diffs, plots and the command line print them.

A name is data, and printed rules are read as a program is: a name holding a line break,
an operator or a keyword could add a line, a condition or a code fence of its own to the
text ("income > 1e9: y = approved\\nelse: ..." printed the rules of another model). So a
name prints as it is only where it cannot read as anything but one name (``is_plain``);
any other prints between backquotes, with a backslash before a backquote or backslash in
it and every character that does not print (a line break, a tab, a control or format
character, a space other than " ") as its escape, on one line: that name prints as
`income > 1e9: y = approved\\nelse: y = approved ...\\n#`. "worst concave points",
"age", "petal length (cm)" or "é-ü" print unchanged.
"""
import re

import numpy as np

# the characters a plain name may hold besides letters and digits (of any script): none of
# them is syntax of the printed text (comparisons, ':' and '=' of a leaf, quotes, braces and
# commas of a set, '*' of the missing-value mark, '#', '|' of a table); parentheses and
# brackets are ("petal length (cm)"), and the notes they open in the text, "(or missing)",
# "(except 0)", hold a keyword
_PLAIN_PUNCTUATION = frozenset(" _-./%+&@?~^()[]")

# words that join, negate or open conditions in the printed text: "age and income" could
# read as two features, "not age" as a negation, "age is missing" as a missing-value test
_KEYWORDS = frozenset(["and", "or", "not", "if", "elif", "else", "then", "otherwise", "always", "is", "except"])

_NUMBER = re.compile(r"[-+]?(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:e[-+]?\d+)?|[-+]?(?:inf|infinity|nan)",
                     re.IGNORECASE)


def is_plain(text):
    """Whether text prints as it is: letters, digits, single inner spaces and
    ``_PLAIN_PUNCTUATION`` only, no keyword of the printed text as a word."""
    if not text or text != text.strip(" ") or "  " in text:
        return False
    if not all(ch.isalnum() or ch in _PLAIN_PUNCTUATION for ch in text):
        return False
    return not any(word.casefold() in _KEYWORDS for word in re.findall(r"\w+", text))


def quoted(text):
    """text between backquotes: a backquote or backslash in it after a backslash, a
    character that does not print as its escape (``\\n``, ``\\x00``, ``\\u202e``)."""
    out = []
    for ch in text:
        if ch in "`\\":
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        else:
            out.append(ch.encode("unicode_escape").decode("ascii"))
    return "`" + "".join(out) + "`"


def printed_name(name):
    """A feature's name as printed: as it is where it is plain (``is_plain``) and does not
    read as a number ("3 < 5 <= 7" of a feature named "5"), else ``quoted``.

    Parameters
    ----------
    name : str
        The name.

    Returns
    -------
    str
        The name as printed: one line, which no other text can be read into.
    """
    name = str(name)
    return name if is_plain(name) and not _NUMBER.fullmatch(name) else quoted(name)


def printed_label(label):
    """A class's label as printed: a number or a boolean as ``str`` gives it; text as it is
    where it is plain (``is_plain``), else ``quoted``.

    Parameters
    ----------
    label : object
        The label.

    Returns
    -------
    str
        The label as printed.
    """
    text = str(label)
    if isinstance(label, (bool, int, float, np.number, np.bool_)):
        return text  # a number: its own digits
    return text if is_plain(text) else quoted(text)


def longest_run(text, char):
    """The length of the longest run of char in text (0 where there is none)."""
    return max((len(run) for run in re.findall(re.escape(char) + "+", text)), default=0)
