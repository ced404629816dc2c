"""Measures of requests and answers: tokens, cost, windows, comparisons.

``models`` (the tables: context windows and prices by model), ``usage`` (the arithmetic:
how full a window is, what an answer cost), ``preflight`` (what the API would refuse,
checked before anything is stored or sent), ``compare`` (sibling answers as facts, for
``compare_frame``) and ``diff`` (what each answer says that the others do not), ``grades`` (an
experiment's grade columns and its summary per version and model). Pure:
no I/O, no Jupyter.

``budget`` (what a request keeps of a long path), ``seen`` (what a request saw, in words)
and ``sizes`` (a request's size by part) build on those. May import ``history``,
``providers`` (``seen``, ``preflight``: what a request sends) and the core below; no
session, no view.
"""
