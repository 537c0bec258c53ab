"""The module DefragModel lived in before defrag_model.py; kept only so that models pickled
with that layout still load (pickle looks their class up here)."""
from .defrag_model import DefragModel

__all__ = ["DefragModel"]
