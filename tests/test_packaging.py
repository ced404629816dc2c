"""The wheel ships the prebuilt front end, and building it needs no Node once that exists."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def test_the_viewer_extension_is_installed_and_enabled():
    listing = subprocess.run(
        [str(BIN / "jupyter"), "labextension", "list"], capture_output=True, text=True, check=True
    )
    line = next(
        row for row in (listing.stdout + listing.stderr).splitlines() if "jupyter-tree-chat" in row
    )
    assert "enabled" in line and "OK" in line


def test_the_server_extension_that_reads_other_tools_files_is_enabled():
    listing = subprocess.run(
        [str(BIN / "jupyter"), "server", "extension", "list"],
        capture_output=True,
        text=True,
        check=True,
    )
    rows = [
        row for row in (listing.stdout + listing.stderr).splitlines() if "jupyter_tree_chat" in row
    ]
    assert any("jupyter_tree_chat.server" in row and "enabled" in row for row in rows), rows
    assert any("jupyter_tree_chat.server" in row and "OK" in row for row in rows), rows


def test_a_wheel_builds_without_node_and_carries_the_prebuilt_front_end(tmp_path: Path):
    no_node = tmp_path / "bin"
    no_node.mkdir()
    for name in ("npm", "node", "jlpm"):  # any attempt to run Node fails loudly
        fake = no_node / name
        fake.write_text("#!/bin/sh\necho 'Node was called' >&2\nexit 99\n")
        fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{no_node}:{BIN}:/usr/bin:/bin"}
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "-w", str(tmp_path / "dist"), str(ROOT)],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    assert "Node was called" not in built.stdout + built.stderr
    (wheel,) = (tmp_path / "dist").glob("jupyter_tree_chat-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    share = "jupyter_tree_chat-0.1.0.data/data/share/jupyter/labextensions/jupyter-tree-chat/"
    assert share + "package.json" in names and share + "install.json" in names
    assert any(n.startswith(share + "static/") and n.endswith(".js") for n in names)
    assert "jupyter_tree_chat/widget/static/widget.js" in names
    assert "jupyter_tree_chat/widget/loader.js" in names  # every widget's whole _esm
    data = "jupyter_tree_chat-0.1.0.data/data/"
    config = data + "etc/jupyter/jupyter_server_config.d/jupyter_tree_chat.json"
    assert config in names
    enabled = json.loads(zipfile.ZipFile(wheel).read(config))
    assert enabled == {"ServerApp": {"jpserver_extensions": {"jupyter_tree_chat.server": True}}}
    assert "jupyter_tree_chat/widget/static/widget.css" in names
    # no node_modules folder (a development build names its bundled chunks after their
    # modules, "vendors-node_modules_d3-zoom_...js": those are the front end, not npm's tree)
    assert not any("node_modules" in n.split("/") for n in names)
    # the Chinese catalog, where JupyterLab's server looks for it through the entry point
    assert "jupyter_tree_chat/locale/zh_CN/LC_MESSAGES/jupyter_tree_chat.json" in names
    # the kernel's catalog, compiled, where jupyter_tree_chat/i18n.py's gettext reads it
    kernel_mo = "jupyter_tree_chat/locale/zh_CN/LC_MESSAGES/jupyter_tree_chat_kernel.mo"
    shipped = ROOT / kernel_mo
    assert zipfile.ZipFile(wheel).read(kernel_mo) == shipped.read_bytes()

    (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
    listed = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "[jupyterlab.locale]\njupyter_tree_chat = jupyter_tree_chat" in listed
