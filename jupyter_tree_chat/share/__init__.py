"""Share a tree, find a node: the session as one page, a branch as a notebook, search.

- ``find``: text on every branch (thinking and tool results too), each match with its
  short id, role, ``2/3`` place, branch and context; ``%chat find``, ``jupyter
  tree-chat find`` and the panel's search box use it.
- ``page``: the whole tree as one self-contained HTML page that opens from disk, with
  no network and no Jupyter: the viewer's own components, read-only, the records
  embedded as data and a strict Content-Security-Policy.
- ``notebook``: a branch as a notebook whose ``%%chat`` cells continue the session.

- ``files``: an export written no more readable than its session file (0600).

Pure, like the rest of the core (``files`` apart, the one writer): no Jupyter import.
The page's script is a build product of the front end (``static/page.js``, from
labextension/src/page/).

``naming`` names the files they write. May import ``history``, ``conversation`` (the
session a notebook continues), ``measures`` and the core below; never a view.
"""

from __future__ import annotations
