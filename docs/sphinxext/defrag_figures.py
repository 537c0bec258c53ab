"""A sphinx-gallery image scraper for the matplotlib Figures an example keeps in variables.

defrag.plot draws on ``matplotlib.figure.Figure`` objects without pyplot (it works headless
and keeps no global state), so sphinx-gallery's matplotlib scraper, which reads pyplot's
list of figures, does not see them. This one saves every Figure found in the example's
namespace after a code block, each once (after the block that made it).
"""
_seen = {}  # example file -> ids of the Figures already saved


def scraper(block, block_vars, gallery_conf):
    from matplotlib.figure import Figure
    from sphinx_gallery.scrapers import figure_rst

    seen = _seen.setdefault(block_vars["src_file"], set())
    rst = []
    for value in list(block_vars["example_globals"].values()):
        if isinstance(value, Figure) and id(value) not in seen:
            seen.add(id(value))
            path = next(block_vars["image_path_iterator"])
            value.savefig(path, dpi=90, bbox_inches="tight")
            rst.append(figure_rst([path], gallery_conf["src_dir"]))
    return "".join(rst)
