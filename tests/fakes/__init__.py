"""The local fake servers the tests ask through the real SDKs, and their rules.

``fake_anthropic`` (the Messages API, with ``fake_rules``, ``fake_request_rules``,
``fake_cache``, ``fake_models`` and other servers' ways in ``fake_endpoints``) and
``fake_openai`` (Chat Completions, with ``fake_openai_rules``, and the Files and Batch
APIs in ``fake_openai_batches``) speak real HTTP and server-sent events and refuse what
the real APIs refuse; ``scripted_provider`` is a provider that replays scripted events;
``fake_load`` counts the requests each fake answers at once (a bound a test checks). The
``test_fake_*`` modules check the fakes themselves. Imported as
``from fakes.fake_anthropic import FakeAnthropic`` (tests/README.md).
"""
