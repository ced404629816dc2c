"""The Chat Completions wire: GPT, Gemini, Azure OpenAI and any compatible server.

- ``wire``: a stored path to Chat Completions messages and parameters;
- ``stream``: the one reader of a Chat Completions reply (``ChoiceReader``), chunk by chunk;
- ``provider``: ``OpenAIChatProvider``, the path streamed through the official ``openai`` SDK;
- ``batches``: ``OpenAIBatches``, many paths sent at once through OpenAI's (or Azure's)
  Batch API and read back as the stream reader reads a reply (``endpoint_batches``).

May import ``providers.base``, ``providers.sse``, ``providers.batches``, ``providers.tools``,
``providers.endpoints.capabilities`` and ``providers.anthropic.wire`` (a path is first
what the Messages API accepts), and the core below; never the router. Nothing imports
the ``openai`` package until a request needs it.
"""
