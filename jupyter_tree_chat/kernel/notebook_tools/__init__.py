"""The built-in ``notebook`` tool server: the model looks at the notebook it lives in.

A cell offers it like an MCP server (``%%chat --tools notebook:*`` or
``notebook:variables``); its tools are answered here, in the kernel, because they read
IPython's namespace and history:

- ``looking``: ``variables`` (names, types, sizes: never values), ``describe(name)`` (one
  value as ``{name}`` would send it) and ``cells(last=N)`` (the cells as run);
- ``running``: ``run(code)``, only where the user allowed it (``--allow-run``,
  ``TreeChat.allow_run``), stopped by ``TreeChat.tool_timeout`` or Ctrl-C;
- ``inserting``: ``insert(code)``, a new cell proposed below the asking cell, not run;
- ``keys``: any endpoint's key found in a result is redacted before it leaves the kernel;
- ``server``: ``NotebookTools``, the ``BuiltinServer`` the kernel's ``Toolbox`` asks.
"""

from __future__ import annotations

from .server import NOTEBOOK, NotebookTools

__all__ = ["NOTEBOOK", "NotebookTools"]
