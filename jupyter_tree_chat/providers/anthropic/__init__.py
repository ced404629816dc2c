"""The Messages API wire: Claude, and every server that speaks ``/v1/messages``.

- ``wire``: what the API accepts of a stored path (the send-side rules, in one place);
- ``provider``: ``AnthropicProvider``, the path streamed through the official SDK;
- ``events``: a streamed reply's server-sent events, read into the project's events;
- ``batches``: Message Batches (``AnthropicBatches``), many requests sent as one batch.

May import ``providers.base``, ``providers.sse``, ``providers.batches`` (the batch contract),
``providers.tools`` (the tools' wire rules) and ``providers.endpoints.capabilities``
(what an endpoint lacks), and the core below
(``history``, ``errors``); never another wire, nor the router.
"""
