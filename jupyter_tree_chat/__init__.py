"""jupyter-tree-chat: a branching chat assistant that lives in Jupyter.

The layers import in one direction: ``tree`` (pure) ← ``store`` (files) ←
``providers`` (models) ← ``session`` (state and actions) ← views (magic, widget, CLI).
"""

from __future__ import annotations

from .tree import Node, SessionTree

__version__ = "0.1.0"
__all__ = ["Node", "SessionTree", "__version__"]
