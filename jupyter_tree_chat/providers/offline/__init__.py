"""The offline teaching model: a deterministic provider that says what it was sent.

- ``provider``: ``OfflineProvider`` and the notice that it is not Claude;
- ``phrases``: what it says, in each language it speaks.

May import ``providers.base`` and the core below (``history``, ``language``, ``errors``);
no SDK, no network.
"""
