"""The conversation: a session tree bound to a model, and the user actions on it.

``session`` (``Session``: the single owner of state; ask, edit, retry, switch, compact),
``events`` (what a session announces and what an action returns), ``fanout`` (many
answers to one question at once), ``cellrule`` (what running a ``%%chat`` cell does to
the tree). Views use these; nothing here imports a view.
"""
