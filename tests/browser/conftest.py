"""Fixtures for tests that drive a real JupyterLab in headless Chromium.

- ``lab``: a JupyterLab server (session-wide) on 127.0.0.1 at a free port, rooted in a temp
  directory, with its own settings, workspaces and runtime dirs, and a ``python3``
  kernelspec that runs this interpreter (the environment under test).
- ``browser``: Debian's Chromium through Playwright (its own browser download cannot work
  here), with the flags that keep it off the network.
- ``page``: a fresh page per test; dialogs, console errors and requests are recorded in
  ``page_log``; a screenshot of the final state lands in ``test-artifacts/browser/``.

The extension under test must be installed in this environment beforehand; a test fails
(never skips) with the install steps when it is not. See ``INSTALL_STEPS``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from fakes.fake_anthropic import FakeAnthropic
from helpers.widget_page import ensure_built

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts" / "browser"
DATA = REPO / "tests" / "data"
CHROMIUM = os.environ.get("JTC_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# Ceilings only, never waits: every action and ``expect`` returns as soon as the page shows
# what it waits for. With other work on the machine (a compiler, another test run) a kernel
# round trip or a re-render can take seconds, so none assumes an idle machine; Playwright's
# own ``expect`` default (5 s) did (scripts/under_load.sh runs the suite that way).
ACTION_TIMEOUT_MS = 60_000
EXPECT_TIMEOUT_MS = 60_000
EXTENSION = "jupyter-tree-chat"
INSTALL_STEPS = (
    "install the package with its prebuilt JupyterLab extension into this environment:\n"
    "    (cd labextension && npm ci)\n"
    "    pip install -e '.[test]'     # runs the npm build; or: pip install .\n"
    "    jupyter labextension list    # must show jupyter-tree-chat enabled"
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _labextension_dirs(env: dict[str, str]) -> list[Path]:
    """Where this environment's JupyterLab looks for prebuilt extensions."""
    code = (
        "import json, jupyter_core.paths as p; print(json.dumps(p.jupyter_path('labextensions')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return [Path(p) for p in json.loads(out.stdout)]


def _fail_if_stale(installed: Path) -> None:
    """A checkout's newer build that is not installed would be tested as the old one."""
    local = REPO / "jupyter_tree_chat" / "labextension" / "package.json"
    if not local.exists() or local.parent.resolve() == installed.resolve():
        return
    built = json.loads(local.read_text()).get("jupyterlab", {}).get("_build")
    used = json.loads((installed / "package.json").read_text()).get("jupyterlab", {}).get("_build")
    if built != used:
        pytest.fail(
            f"the installed {EXTENSION} extension ({installed}) is not the one built in this "
            f"checkout ({local.parent}); reinstall it: pip install -e . (or pip install .)"
        )


@dataclass
class Lab:
    url: str
    root: Path
    log: Path
    extension_dir: Path

    def put(self, source: Path | str, name: str | None = None) -> str:
        """Copy a file into the server's root; return its path relative to the root."""
        source = Path(source)
        if not source.is_absolute():
            source = DATA / source
        target = self.root / (name or source.name)
        shutil.copyfile(source, target)
        return target.name


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeAnthropic]:
    """The fake Messages API a module's notebooks ask (the widget's bundle built first)."""
    ensure_built()
    with FakeAnthropic() as server:
        yield server


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    with running_lab(tmp_path_factory.mktemp("jupyterlab")) as server:
        yield server


@contextmanager
def running_lab(
    base: Path, settings: dict[str, dict] | None = None, log_name: str = "jupyterlab.log"
) -> Iterator[Lab]:
    """A JupyterLab server in ``base``; ``settings`` maps a plugin's settings path (e.g.
    ``@jupyterlab/translation-extension/plugin``) to the user settings it starts with."""
    root = base / "root"
    data_dir = base / "jupyter-path"
    settings_dir = base / "settings"
    for folder in (root, data_dir / "kernels" / "python3", settings_dir, base / "workspaces"):
        folder.mkdir(parents=True)
    kernel = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (environment under test)",
        "language": "python",
    }
    (data_dir / "kernels" / "python3" / "kernel.json").write_text(json.dumps(kernel))
    # no news or update checks: the network is closed and the toast covers the page
    notification = settings_dir / "@jupyterlab" / "apputils-extension"
    notification.mkdir(parents=True)
    (notification / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False})
    )
    for plugin, values in (settings or {}).items():
        path = settings_dir / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))

    env = dict(os.environ)
    env.update(
        JUPYTER_PATH=str(data_dir),
        JUPYTER_CONFIG_DIR=str(base / "config"),
        JUPYTER_RUNTIME_DIR=str(base / "runtime"),
        JUPYTER_PLATFORM_DIRS="1",
    )
    found = [
        d / EXTENSION for d in _labextension_dirs(env) if (d / EXTENSION / "package.json").exists()
    ]
    if not found:
        pytest.fail(f"the {EXTENSION} JupyterLab extension is not installed; {INSTALL_STEPS}")
    _fail_if_stale(found[0])

    port = _free_port()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    log_path = ARTIFACTS / log_name
    log = log_path.open("w")
    command = [
        sys.executable, "-m", "jupyterlab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        "--IdentityProvider.token=",
        "--ServerApp.password=",
        "--ServerApp.disable_check_xsrf=True",
        f"--ServerApp.root_dir={root}",
        f"--LabApp.user_settings_dir={settings_dir}",
        f"--LabApp.workspaces_dir={base / 'workspaces'}",
        "--LabApp.expose_app_in_browser=True",
        "--JupyterNotebookApp.expose_app_in_browser=True",  # Notebook 7 at /notebooks/
        "--allow-root",
    ]  # fmt: skip
    server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180  # a ceiling: a loaded machine starts it slowly
    try:
        while True:
            if server.poll() is not None:
                pytest.fail(f"JupyterLab exited ({server.returncode}); see {log_path}:\n"
                            + log_path.read_text()[-3000:])  # fmt: skip
            try:
                with urllib.request.urlopen(f"{url}/lab", timeout=30) as response:
                    page = response.read().decode()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not answer on {url} in 180 s; see {log_path}")
                time.sleep(0.3)
        config = re.search(r'id="jupyter-config-data"[^>]*>(.*?)</script>', page, re.S)
        federated = json.loads(config.group(1)).get("federated_extensions", []) if config else []
        if EXTENSION not in [ext.get("name") for ext in federated]:
            pytest.fail(f"JupyterLab at {url} does not load {EXTENSION}; {INSTALL_STEPS}")
        yield Lab(url=url, root=root, log=log_path, extension_dir=found[0])
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import expect, sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"no Chromium at {CHROMIUM}: apt-get install -y chromium (or set JTC_CHROMIUM)")
    expect.set_options(timeout=EXPECT_TIMEOUT_MS)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@dataclass
class PageLog:
    """What a page did that a test may want to assert on."""

    dialogs: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)


@pytest.fixture
def page_log() -> PageLog:
    return PageLog()


def _artifact_name(request: pytest.FixtureRequest) -> str:
    return re.sub(r"[^\w.-]+", "_", request.node.name)


@pytest.fixture
def page(browser, page_log: PageLog, request: pytest.FixtureRequest):
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.set_default_timeout(ACTION_TIMEOUT_MS)

    def on_dialog(dialog) -> None:
        page_log.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.on("console", lambda m: m.type == "error" and page_log.console_errors.append(m.text))
    page.on("pageerror", lambda e: page_log.page_errors.append(str(e)))
    page.on("request", lambda r: page_log.requests.append(r.url))
    yield page
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        page.screenshot(path=str(ARTIFACTS / f"{_artifact_name(request)}.png"), full_page=True)
    finally:
        context.close()


@pytest.fixture
def screenshot(page, request: pytest.FixtureRequest):
    """``screenshot("step")`` saves test-artifacts/browser/<test>-<step>.png."""

    def take(step: str) -> Path:
        path = ARTIFACTS / f"{_artifact_name(request)}-{step}.png"
        page.screenshot(path=str(path))
        return path

    return take
