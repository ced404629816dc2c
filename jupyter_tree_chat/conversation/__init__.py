"""The conversation: a session tree bound to a model, and the user actions on it.

``session`` (``Session``: the single owner of state, and the tree's own actions: switch,
fork before a tool use, compact, label, hide; the notebook-native rule), ``asking`` (ask,
edit, retry and the reply loop), ``host`` (its state, events, requests and writes: what the
actions, fan-outs and budgets build on), ``events`` (what a session announces and what an
action returns), ``many/`` (many answers at once: fan-outs and experiments over rows),
``grading`` (grades and preferences by hand or by a function), ``judging`` (a model as
judge, its requests on a side branch),
``cellrule`` (what running a ``%%chat`` cell does to the tree), ``replies`` (what a turn
asks and gets), ``budgeting`` (what a request keeps of a long path), ``settings``
(``ChatSettings``). May import ``history``, ``providers``, ``measures`` and the core
below; views use these, and nothing here imports a view.
"""
