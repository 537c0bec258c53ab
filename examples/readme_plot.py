"""The README's plot: the figure of the gallery example ``plot_xor_rules_2d.py`` (the rules
of a random forest on the XOR data of the paper's Synthetic1, Figure 6 of Hara & Hayashi,
AISTATS 2018), saved as docs/rules_2d.png.

    PYTHONPATH=. python examples/readme_plot.py   # writes docs/rules_2d.png
"""
import os
import runpy

here = os.path.dirname(os.path.abspath(__file__))
fig = runpy.run_path(os.path.join(here, "plot_xor_rules_2d.py"))["fig"]
out = os.path.join(os.path.dirname(here), "docs", "rules_2d.png")
fig.savefig(out, dpi=90)
print(f"wrote {out} ({os.path.getsize(out) // 1024} KB)")
