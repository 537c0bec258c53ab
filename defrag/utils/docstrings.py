"""Parameter descriptions that many public methods share, written once (numpydoc).

A method's docstring holds a line ``{Parameters: X_coded, n_threads}`` where its
Parameters section goes; ``shared_parameters`` replaces it at import with the section
(heading, underline and each named description, indented as that line), so that the
rendered docs, ``help()`` and numpydoc's checks read a whole section. Descriptions
that one method words its own way stay in its docstring."""
import re

PARAMETERS = {
    "X_coded": ("X_coded : ndarray of shape (n_samples, n_features)",
                "The rows as the explanation reads them (``encode``)."),
    "n_threads": ("n_threads : int, default=1",
                  "The threads to use: an integer >= 1, at most the cores used."),
}

_PLACEHOLDER = re.compile(r"^( *)\{Parameters: ([A-Za-z_, ]+)\}$", re.MULTILINE)


def _section(match):
    indent, names = match.group(1), [n.strip() for n in match.group(2).split(",")]
    lines = ["Parameters", "----------"]
    for name in names:
        heading, text = PARAMETERS[name]  # (a KeyError at import names the missing entry)
        lines += [heading, "    " + text]
    return "\n".join(indent + line for line in lines)


def shared_parameters(function):
    """function with the ``{Parameters: ...}`` line of its docstring filled in (see the
    module docstring); a docstring without one, or none (``python -OO``), as it is."""
    if function.__doc__:
        function.__doc__ = _PLACEHOLDER.sub(_section, function.__doc__)
    return function

