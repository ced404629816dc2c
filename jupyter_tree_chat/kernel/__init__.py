"""The view that needs IPython: ``%%chat`` and ``%chat``.

The cell's own path lives here: ``magics`` (the two magics), ``question_mark`` (a
``%chat`` line's trailing ``?`` kept as text), ``options`` (parsing a ``%%chat`` line),
``context`` (``{name}``, ``--attach``, ``--with``), ``history`` (``Err``),
``turn`` (one session action in a cell), ``experiment_cell`` (a ``--over`` cell: one
question per row), ``display/`` (what a cell shows: output, safe HTML, columns, an
experiment's grid), ``config`` (``TreeChat``), ``sessions`` (the kernel's
sessions, shared with the widget) and ``notebook`` (the notebook's path and cell id).
The ``%chat`` command families live in ``commands/``, the built-in ``notebook`` tool
server in ``notebook_tools/``.

May import the core and ``providers``, IPython and traitlets. Nothing outside this folder
imports IPython. The widget plugs in through the one hook in ``sessions`` (``turn_hooks``,
``panel_hook``), never by import.
"""
