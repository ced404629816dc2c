"""The history: the session tree and the file it lives in (the chapter's Session).

Everything here is about what was said and where it is kept, never about asking a model:
``node`` (one message, its body decoded on first use), ``tree`` (the id index, children,
the active path and every operation the chapter names: pure, no I/O), ``loader`` (reading
a ``*.chat.jsonl`` file tolerantly, the lazy index), ``problems`` (what is wrong with a
line, in words), ``plain`` (a message's Markdown as plain words, for lists and trees),
``grade_record`` (grades and preferences: records beside the nodes they judge),
``experiment_record`` (an experiment question's ``meta.experiment``, read
and checked), ``batch_record`` (a vendor batch's plan, ids and applied results),
``uninterrupted`` (a Ctrl-C held until a record is whole) and ``store``
(the only code that writes session files: locked, durable appends beside the notebook).
Imports go node ← tree, problems ← loader ← store, uninterrupted ← store. May
import only ``errors`` and ``i18n`` of this package (and msgspec, orjson): the history
knows nothing of models, sessions or views.
"""
