"""Endpoints: where each model is asked, what the server there supports, and the routing.

- ``capabilities``: what an endpoint supports, and what follows for each request;
- ``config``: what a named endpoint is, the presets, keys by name, prices;
- ``entries``: ``TreeChat.endpoints``'s entries read and checked onto the presets;
- ``probe``: whether an endpoint answers and which models it serves (``%chat models``);
- ``router``: ``Router``, one provider for every endpoint, each request to its model's.

May import ``providers.base`` and ``providers.anthropic.wire`` (capabilities), and the core
below (``measures.models``, ``errors``). The router reaches each wire's provider module by
name when an endpoint first needs it (``WIRE_MODULES``), never by import, so a wire's SDK
loads only when it is used.
"""
