"""The README is a landing page that a fresh clone can follow (issue 26.1): short, with the
two set-up commands CI reads, and no path that leads outside the repository."""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _readme():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        return f.read()


def test_the_readme_is_a_landing_page_of_at_most_150_lines():
    assert len(_readme().splitlines()) <= 150


def test_the_two_set_up_commands_are_there_exactly():
    lines = [line for line in _readme().splitlines() if line.startswith("pip install ")]
    assert lines == ['pip install . && python -m defrag demo', 'pip install ".[test]" && pytest']


def test_every_path_the_readme_names_is_in_the_repository():
    text = _readme()
    assert "../" not in text and "shared/" not in text
    targets = re.findall(r"\]\(([^)#]+)\)", text)  # Markdown links and images
    local = [t for t in targets if "://" not in t]
    assert local, "the README links the documentation's sources"
    for target in local:
        assert os.path.exists(os.path.join(ROOT, target)), target
    # paths written as code: docs/..., tools/..., benchmarks/..., tests/..., src_c/...
    for path in re.findall(r"`((?:docs|tools|benchmarks|tests|src_c|defrag)/[^`* ]*)`", text):
        if "*" in path or path.endswith("_build/html/index.html"):
            continue
        assert os.path.exists(os.path.join(ROOT, path.rstrip("/"))), path
