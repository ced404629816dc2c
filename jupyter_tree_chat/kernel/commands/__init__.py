"""The ``%chat`` line commands, one family to a module.

- ``chat``: ``Commands``, which reads a ``%chat`` line and runs it; the tree's own commands
  (tree, branches, switch, edit, retry, label, hide, text, code, ...) and ``help``;
- ``measures``: ``context`` and ``usage``;  ``sharing``: ``export``;  ``finding``: ``find``;
- ``importing``: ``import``;  ``endpoints``: ``models``;  ``mcp``: ``mcp``;
  ``language``: ``language``;  ``grading``: ``grade``, ``prefer``, ``experiment``;
  ``judging``: ``grade --rubric`` (a model as judge);  ``batches``: ``batch`` (the
  session's vendor batches, ``--batch``).

May import the core, ``providers`` and the cell's own path in ``kernel/`` (sessions,
output, turn, columns, context, options, config); the kernel imports this folder only from
``magics`` (tests/test_layers.py).
"""
