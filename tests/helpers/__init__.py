"""Harnesses the tests share: a real kernel, a real llama-server, MCP servers, a widget's
page and comms, the front end's modules under node, sample files, crash and disk workers.

Every test imports them the one way, ``from helpers.kernel_harness import Kernel``, from
any folder: ``tests/`` is on ``sys.path`` (pytest's ``pythonpath`` in pyproject.toml; a
benchmark or a kernel started by a test puts it there itself). tests/README.md says more.
"""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
"""The tests' folder: ``data/``, ``fixtures/`` and ``mcp_servers/`` are in it."""
REPO = TESTS.parent
DATA = TESTS / "data"
