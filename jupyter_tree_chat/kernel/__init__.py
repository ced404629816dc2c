"""The view that needs IPython: ``%%chat`` and ``%chat``, their options, a turn in a cell,
cell output and safe HTML, ``TreeChat`` config, the kernel's sessions, the notebook's
path and cell id.

Nothing outside this folder imports IPython. The widget plugs in through the one hook in
``sessions`` (``turn_hooks``, ``panel_hook``), never by import.
"""
