"""Shared pytest fixtures. Keep each one generic and documented; one section per area."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_anthropic import FakeAnthropic
from kernel_harness import Kernel

# -- the local fake Anthropic Messages API ---------------------------------------------


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropic]:
    """A started fake Messages API server on 127.0.0.1; ``.base_url`` for the client."""
    with FakeAnthropic() as server:
        yield server


@pytest.fixture
def claude(tmp_path: Path, fake_anthropic: FakeAnthropic) -> Iterator[Kernel]:
    """A real kernel for a notebook in ``tmp_path``, asking ``fake_anthropic`` through the
    real SDK (a module can override ``fake_anthropic``, e.g. to stream at a set pace)."""
    env = {"ANTHROPIC_API_KEY": "sk-test-dummy", "ANTHROPIC_BASE_URL": fake_anthropic.base_url}
    with Kernel(tmp_path, env=env) as kernel:
        yield kernel
