"""Many answers at once: ``fanout`` (every variant of a question, or of many, concurrently;
the owning thread), ``workers`` (each answer streamed on a thread of its own), ``variants``
(the models, temperatures and samples asked), ``choices`` (samples as one request of
``n``), ``experiment`` (one question over many rows: where its questions go, its versions
and samples), ``batch`` (``--batch``: the requests sent as vendor batches, their results
written into the tree once) and ``batch_poll`` (the thread that watches pending batches).
A fan-out is an experiment of one row: one run for both.

May import ``history``, ``providers``, ``measures`` and the rest of ``conversation`` below
``session`` (``events``, ``replies``, ``settings``); the session reaches these through its
public calls (``many.workers.FanoutHost``); nothing here imports a view.
"""
