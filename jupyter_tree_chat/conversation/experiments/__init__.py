"""Experiments: one question over many rows, its versions and samples (``experiment``).

A fan-out is an experiment of one row (``conversation.fanout`` runs both). May import
``history``, ``providers``, ``measures`` and the rest of ``conversation``; nothing here
imports a view.
"""
