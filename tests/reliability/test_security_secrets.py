"""The API key never lands in a session file, a notebook, an output or a log.

Notebooks and ``*.chat.jsonl`` files get committed, shared and published; logs get
pasted into issues. A key that leaks into any of them is a key that leaks. So every
test here sets a recognisable sentinel key, makes sessions fail in every way the
reliability tests know (HTTP 401/429/529/500, drops before and during text and tool
JSON, error events, malformed events, an unreachable server, a deleted file), with all
logging at DEBUG (the SDK's own ``ANTHROPIC_LOG=debug`` too), and then searches every
byte produced: session files, log files, cell outputs, a saved notebook, error
messages and their chained tracebacks, and the pages a user shares: the session exported
as HTML, Markdown and a notebook, with sessions on every kind of endpoint (Anthropic's
API, an Anthropic-shaped hosted endpoint, a local one, OpenAI, Azure, Gemini).

It also checks that session files are created readable by their owner only (0600),
whatever the umask, since a transcript can hold private data even without a key.
"""

from __future__ import annotations

import json
import logging
import os
import stat
import traceback
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from fakes.fake_anthropic import FakeAnthropic
from helpers.kernel_harness import Kernel
from test_reliability_provider import FAULTS, QUESTION, SENTINEL_KEY

from jupyter_tree_chat.conversation.events import Notice
from jupyter_tree_chat.conversation.session import Session
from jupyter_tree_chat.history.store import FileStore
from jupyter_tree_chat.providers.anthropic.provider import AnthropicProvider

#: pieces of the key that must not appear either (a key cut in half still leaks)
KEY_PIECES = [SENTINEL_KEY, SENTINEL_KEY[:24], SENTINEL_KEY[-24:], "SENTINEL-9f8e7d6c5b4a"]


def assert_no_key(where: str, data: str | bytes) -> None:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    for piece in KEY_PIECES:
        assert piece not in text, f"the API key (or part of it) leaked into {where}"


def assert_no_key_in_tree(folder: Path) -> int:
    """Search every file under ``folder``; returns how many files were searched."""
    count = 0
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            assert_no_key(str(path), path.read_bytes())
            count += 1
    return count


def exported_pages(kernel: Kernel, folder: Path, conversation: str) -> list[Path]:
    """The session as each page a user shares (``%chat export html|md|ipynb FILE``), each
    checked to hold the conversation (so searching it means something)."""
    pages = []
    for kind in ("html", "md", "ipynb"):
        page = folder / f"shared.{kind}"
        kernel.run(f"%chat export {kind} {page}").check()
        assert conversation in page.read_text(encoding="utf-8"), f"{kind}: {conversation!r}"
        pages.append(page)
    return pages


def assert_no_key_in_pages(pages: list[Path], *keys: str) -> None:
    for page in pages:
        data = page.read_text(encoding="utf-8")
        assert_no_key(str(page), data)
        for key in keys:
            assert key not in data and key[-20:] not in data, f"a key leaked into {page}"


@pytest.fixture
def debug_log(tmp_path: Path) -> Iterator[Path]:
    """Every logger at DEBUG into a file (including anthropic, httpx, httpcore)."""
    log_path = tmp_path / "debug.log"
    handler = logging.FileHandler(log_path)
    handler.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    loggers = [logging.getLogger(n) for n in ("anthropic", "httpx", "httpcore")]
    old = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.DEBUG)
    try:
        yield log_path
    finally:
        root.removeHandler(handler)
        handler.close()
        root.setLevel(old_level)
        for lg, level in zip(loggers, old, strict=True):
            lg.setLevel(level)


def debug_logging(log_file: Path) -> str:
    """A cell that logs everything at DEBUG into ``log_file`` (the SDK and HTTP too)."""
    return (
        "import logging\n"
        f"h = logging.FileHandler({str(log_file)!r})\n"
        "logging.getLogger().addHandler(h)\n"
        "logging.getLogger().setLevel(logging.DEBUG)\n"
        "for n in ('anthropic', 'httpx', 'httpcore', 'jupyter_tree_chat'):\n"
        "    logging.getLogger(n).setLevel(logging.DEBUG)\n"
    )


def key_was_sent(headers: dict[str, str]) -> bool:
    """The SDK sends the key as ``x-api-key`` or ``authorization: Bearer`` by version."""
    return SENTINEL_KEY in (headers.get("x-api-key"), headers.get("authorization", "")[7:])


def explain(error: BaseException | None) -> str:
    """Everything a user could see of an error: its text, repr and full chained traceback."""
    if error is None:
        return ""
    return f"{error}\n{error!r}\n" + "".join(traceback.format_exception(error))


def test_no_key_anywhere_after_every_provider_fault(tmp_path: Path, debug_log: Path) -> None:
    """All provider faults (and a 401, and an unreachable server), logged at DEBUG."""
    seen: list[str] = []
    searched = 0
    for number, fault in enumerate(FAULTS):
        folder = tmp_path / f"fault{number}"
        folder.mkdir()
        with FakeAnthropic() as server:
            provider = AnthropicProvider(api_key=SENTINEL_KEY, base_url=server.base_url)
            session = Session.open(folder / "nb.chat.jsonl", provider)
            session.subscribe(lambda e: seen.append(e.message) if isinstance(e, Notice) else None)
            fault.script(server)
            turn = session.ask(QUESTION)
            seen.append(explain(turn.error))
            seen.append(repr(provider))
            assert key_was_sent(server.requests[0].headers)  # the key really was in play
        searched += assert_no_key_in_tree(folder)

    with FakeAnthropic(api_key="a-different-key") as server:  # 401: the key is refused
        provider = AnthropicProvider(api_key=SENTINEL_KEY, base_url=server.base_url)
        turn = Session.open(tmp_path / "auth.chat.jsonl", provider).ask(QUESTION)
        assert turn.error is not None and turn.error.kind == "authentication_failed"
        seen.append(explain(turn.error))
        closed_url = server.base_url
    # the server is gone: connection refused, retried by the SDK, then ConnectionFailed
    provider = AnthropicProvider(api_key=SENTINEL_KEY, base_url=closed_url, max_retries=0)
    turn = Session.open(tmp_path / "down.chat.jsonl", provider).ask(QUESTION)
    assert turn.error is not None and turn.error.kind == "connection_failed"
    seen.append(explain(turn.error))

    # the file is deleted mid-session while the provider also fails
    with FakeAnthropic() as server:
        provider = AnthropicProvider(api_key=SENTINEL_KEY, base_url=server.base_url)
        path = tmp_path / "gone.chat.jsonl"
        session = Session.open(path, provider)
        session.subscribe(lambda e: seen.append(e.message) if isinstance(e, Notice) else None)
        session.ask(QUESTION)
        path.unlink()
        server.enqueue("partial answer that is cut", drop_after=5)
        turn = session.ask("again")
        seen.append(explain(turn.error))

    for number, text in enumerate(seen):
        assert_no_key(f"message/error #{number}", text)
    assert debug_log.stat().st_size > 0, "the DEBUG log caught nothing: the test is blind"
    searched += assert_no_key_in_tree(tmp_path)
    print(f"\nSECURITY secrets session-level: faults={len(FAULTS) + 3} files={searched}")


@pytest.mark.kernel
def test_no_key_in_cell_outputs_saved_notebook_or_kernel_log(tmp_path: Path) -> None:
    """Real kernel, key in the environment, faults in cells; search everything."""
    with FakeAnthropic() as server:
        env = {
            "ANTHROPIC_API_KEY": SENTINEL_KEY,
            "ANTHROPIC_BASE_URL": server.base_url,
            "ANTHROPIC_LOG": "debug",
        }
        cells = []
        with Kernel(tmp_path, env=env) as kernel:
            log_file = tmp_path / "kernel-debug.log"
            kernel.run(debug_logging(log_file)).check()
            runs = []
            for number, fault in enumerate(FAULTS):
                fault.script(server)
                runs.append(kernel.chat(f"question {number}", f"c{number:07d}"))
            server.enqueue_error(401)
            runs.append(kernel.chat("auth fails", "cauth001"))
            assert (
                "refused" in runs[-1].visible_text
                or "401" in runs[-1].visible_text
                or ("key" in runs[-1].visible_text)
            ), runs[-1].visible_text
            saved = kernel.session_file().read_bytes()
            assert saved.count(b'"role":"user"') >= len(FAULTS)  # the faults were recorded
            pages = exported_pages(kernel, tmp_path, "auth fails")
            (tmp_path / "before-delete.chat.jsonl").write_bytes(saved)
            kernel.session_file().unlink()
            runs.append(kernel.chat("file gone", "cgone001"))
            for cmd in ("%chat tree", "%chat branches", "%chat sessions", "%chat model"):
                runs.append(kernel.run(cmd))
            runs.append(kernel.run("%config TreeChat"))
            # the user may look at the provider object itself
            runs.append(kernel.run("import jupyter_tree_chat as j; print(repr(j))"))
            for run in runs:
                for message in run.messages:
                    assert_no_key("an iopub message", json.dumps(message["content"], default=str))
                cells.append(run)
            assert key_was_sent(server.requests[-1].headers)

    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    for run in cells:
        cell = nbformat.v4.new_code_cell("%%chat ...")
        cell.outputs = [nbformat.from_dict(o) for o in run.outputs]
        for output in cell.outputs:
            output.pop("transient", None)
        notebook.cells.append(cell)
    nbformat.write(notebook, tmp_path / "analysis.ipynb")
    assert log_file.stat().st_size > 0, "the kernel's DEBUG log caught nothing"
    assert_no_key_in_pages(pages)
    searched = assert_no_key_in_tree(tmp_path)
    print(f"\nSECURITY secrets kernel-level: cells={len(cells)} files={searched}")


# -- file modes ----------------------------------------------------------------------------


@pytest.mark.parametrize("umask", [0o000, 0o022, 0o002])
def test_session_files_are_created_owner_only(tmp_path: Path, umask: int) -> None:
    """0600 even under a permissive umask: a transcript is private."""
    old = os.umask(umask)
    try:
        path = tmp_path / f"u{umask:o}.chat.jsonl"
        store = FileStore(path)
        store.load()
        store.append([{"type": "leaf", "id": "x"}], durable=True)
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.kernel
def test_session_files_made_by_cells_are_owner_only(tmp_path: Path) -> None:
    """The default and a named session, created by %%chat in a real kernel."""
    with Kernel(tmp_path) as kernel:
        kernel.run("import os; os.umask(0)").check()
        kernel.chat("hello", "c0000001").check()
        kernel.chat("hello", "c0000002", "--session draft").check()
        for path in (kernel.session_file(), kernel.session_file("draft")):
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


#: an endpoint's key, as recognisable as Anthropic's sentinel
ENDPOINT_KEY = "sk-deepseek-ENDPOINT-SENTINEL-1a2b3c4d5e6f"


@pytest.mark.kernel
def test_no_endpoint_key_in_outputs_files_or_logs_and_none_sent_elsewhere(tmp_path: Path) -> None:
    """Keys of two endpoints in the environment, a mixed fan-out, a refused key, the
    commands that show endpoints and settings, DEBUG logs: no key anywhere, and each
    server only ever saw its own (a server on this machine saw none)."""
    with (
        FakeAnthropic() as claude,
        FakeAnthropic(endpoint="deepseek", api_key=ENDPOINT_KEY) as deepseek,
        FakeAnthropic() as local,
    ):
        env = {
            "ANTHROPIC_API_KEY": SENTINEL_KEY,
            "ANTHROPIC_BASE_URL": claude.base_url,
            "ANTHROPIC_LOG": "debug",
            "DEEPSEEK_API_KEY": ENDPOINT_KEY,
        }
        endpoints = {
            "deepseek": {"base_url": deepseek.base_url},
            "local": {"base_url": local.base_url},
        }
        log_file = tmp_path / "kernel-debug.log"
        with Kernel(tmp_path, env=env) as kernel:
            setup = debug_logging(log_file) + f"%config TreeChat.endpoints = {endpoints!r}\n"
            runs = [kernel.run(setup).check()]
            models = "claude-sonnet-4-6,deepseek:deepseek-chat,local:smollm2"
            runs.append(kernel.chat("question one", "c0000001", f"--models {models}").check())
            deepseek.api_key = "the server now wants another key"  # a refused key
            runs.append(kernel.chat("question two", "c0000002", "--model deepseek:deepseek-chat"))
            assert "refused the key (401)" in runs[-1].visible_text
            assert "check DEEPSEEK_API_KEY" in runs[-1].visible_text
            for command in ("%chat models", "%chat model deepseek:deepseek-chat", "%chat usage"):
                runs.append(kernel.run(command).check())
            pages = exported_pages(kernel, tmp_path, "question one")
            runs.append(kernel.run("%config TreeChat"))
            runs.append(
                kernel.run(
                    "from jupyter_tree_chat.kernel.sessions import current_session as c\n"
                    "r = c().provider\nprint(repr(r), r.__dict__, r.pool.__dict__)"
                ).check()
            )
            for run in runs:
                for message in run.messages:
                    content = json.dumps(message["content"], default=str)
                    assert_no_key("an iopub message", content)
                    assert ENDPOINT_KEY not in content, "the endpoint key leaked into an output"
    assert key_was_sent(claude.requests[0].headers)
    sent_to_deepseek = [r.headers.get("authorization", "") for r in deepseek.requests]
    assert sent_to_deepseek[0] == f"Bearer {ENDPOINT_KEY}"
    everything_sent = json.dumps([r.headers for r in local.requests + claude.requests])
    assert ENDPOINT_KEY not in everything_sent
    assert SENTINEL_KEY not in json.dumps([r.headers for r in local.requests + deepseek.requests])
    assert log_file.stat().st_size > 0, "the kernel's DEBUG log caught nothing"
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert ENDPOINT_KEY.encode() not in path.read_bytes(), f"the endpoint key is in {path}"
            assert ENDPOINT_KEY[-20:].encode() not in path.read_bytes(), path
    assert_no_key_in_pages(pages, ENDPOINT_KEY)
    assert_no_key_in_tree(tmp_path)


#: the second wire's keys, as recognisable (OpenAI's, Azure's, Gemini's)
CHAT_KEYS = {
    "OPENAI_API_KEY": "sk-proj-OPENAI-SENTINEL-a1b2c3d4e5f6a7b8",
    "AZURE_OPENAI_API_KEY": "azure-AZURE-SENTINEL-0f1e2d3c4b5a6978",
    "GEMINI_API_KEY": "AIza-GEMINI-SENTINEL-99887766554433",
}


@pytest.mark.kernel
def test_no_chat_completions_key_anywhere_and_each_server_saw_only_its_own(
    tmp_path: Path,
) -> None:
    """The second wire's keys in the environment, a fan-out over Claude, GPT, Azure and
    Gemini, a refused key, a dropped stream, the commands that show endpoints and
    settings, DEBUG logs of both SDKs (``OPENAI_LOG=debug`` too): no key in any output,
    file or log, and each server only ever saw its own key."""
    from fakes.fake_openai import FakeOpenAI

    with (
        FakeAnthropic() as claude,
        FakeOpenAI(api_key=CHAT_KEYS["OPENAI_API_KEY"]) as gpt,
        FakeOpenAI(api_key=CHAT_KEYS["AZURE_OPENAI_API_KEY"]) as azure,
        FakeOpenAI(api_key=CHAT_KEYS["GEMINI_API_KEY"]) as gemini,
    ):
        env = {
            "ANTHROPIC_API_KEY": SENTINEL_KEY,
            "ANTHROPIC_BASE_URL": claude.base_url,
            "ANTHROPIC_LOG": "debug",
            "OPENAI_LOG": "debug",
            **CHAT_KEYS,
        }
        endpoints = {
            "openai": {"base_url": gpt.base_url},
            "azure": {"base_url": azure.origin, "deployment": "team-gpt"},
            "gemini": {"base_url": gemini.origin + "/v1beta/openai"},
        }
        log_file = tmp_path / "kernel-debug.log"
        with Kernel(tmp_path, env=env) as kernel:
            setup = debug_logging(log_file).replace(
                "'jupyter_tree_chat'", "'jupyter_tree_chat', 'openai'"
            )
            runs = [kernel.run(setup + f"%config TreeChat.endpoints = {endpoints!r}\n").check()]
            models = "claude-sonnet-4-6,openai:gpt-5-mini,azure:gpt-5-mini,gemini:gemini-2.5-flash"
            runs.append(kernel.chat("question one", "c0000001", f"--models {models}").check())
            gpt.api_key = "the server now wants another key"  # a refused key
            runs.append(kernel.chat("question two", "c0000002", "--model openai:gpt-5-mini"))
            assert "refused the key (401)" in runs[-1].visible_text
            assert "check OPENAI_API_KEY" in runs[-1].visible_text
            gemini.enqueue(text="cut short mid-answer", drop_after=3)
            runs.append(
                kernel.chat("question three", "c0000003", "--model gemini:gemini-2.5-flash")
            )
            for command in ("%chat models", "%chat model azure:gpt-5-mini", "%chat usage"):
                runs.append(kernel.run(command).check())
            pages = exported_pages(kernel, tmp_path, "question one")
            runs.append(kernel.run("%config TreeChat"))
            runs.append(
                kernel.run(
                    "from jupyter_tree_chat.kernel.sessions import current_session as c\n"
                    "r = c().provider\nprint(repr(r), r.__dict__, r.pool.__dict__)\n"
                    "print([(repr(p), p.__dict__) for p in r.pool._providers.values()])"
                ).check()
            )
            for run in runs:
                for message in run.messages:
                    content = json.dumps(message["content"], default=str)
                    assert_no_key("an iopub message", content)
                    for key in CHAT_KEYS.values():
                        assert key not in content, "a Chat Completions key leaked into an output"
    seen = {
        "openai": [r.headers.get("authorization", "") for r in gpt.requests],
        "azure": [r.headers.get("api-key", "") for r in azure.requests],
        "gemini": [r.headers.get("authorization", "") for r in gemini.requests],
    }
    assert seen["openai"][0] == f"Bearer {CHAT_KEYS['OPENAI_API_KEY']}"
    assert seen["azure"][0] == CHAT_KEYS["AZURE_OPENAI_API_KEY"]
    assert seen["gemini"][0] == f"Bearer {CHAT_KEYS['GEMINI_API_KEY']}"
    everyone = {"openai": gpt, "azure": azure, "gemini": gemini}
    for name, server in everyone.items():
        others = [k for v, k in CHAT_KEYS.items() if not v.startswith(name.upper())]
        sent = json.dumps([r.headers for r in server.requests])
        assert SENTINEL_KEY not in sent and not any(k in sent for k in others), name
    assert not any(
        k in json.dumps([r.headers for r in claude.requests]) for k in CHAT_KEYS.values()
    )
    assert log_file.stat().st_size > 0, "the kernel's DEBUG log caught nothing"
    for path in tmp_path.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            for key in CHAT_KEYS.values():
                assert key.encode() not in data and key[-20:].encode() not in data, path
    assert_no_key_in_pages(pages, *CHAT_KEYS.values())
    assert_no_key_in_tree(tmp_path)
