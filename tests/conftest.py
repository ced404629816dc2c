"""Shared pytest fixtures. Keep each one generic and documented; one section per area."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fake_anthropic import FakeAnthropic

# -- the local fake Anthropic Messages API ---------------------------------------------


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropic]:
    """A started fake Messages API server on 127.0.0.1; ``.base_url`` for the client."""
    with FakeAnthropic() as server:
        yield server
