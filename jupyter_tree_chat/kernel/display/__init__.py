"""What a cell shows: ``output`` (a turn's streamed Markdown, its footer and notices),
``safe_html`` (Markdown to HTML with nothing active in it: model output is untrusted),
``columns`` (a fan-out's answers side by side), ``experiment_view`` (an experiment's
progress bar, then its compact grid), ``batch_view`` (a ``--batch`` cell's bar, live
after the cell has ended).

May import the core and ``providers``, IPython's display; never ``kernel.commands`` or
another view. The cell's path (``turn``, ``experiment_cell``) calls these.
"""
