"""Measures of requests and answers: tokens, cost, windows, comparisons.

``models`` (the tables: context windows and prices by model), ``usage`` (the arithmetic:
how full a window is, what an answer cost), ``preflight`` (what the API would refuse,
checked before anything is stored or sent), ``compare`` (sibling answers as facts, for
``compare_frame``) and ``diff`` (what each answer says that the others do not). Pure:
no I/O, no Jupyter.
"""
