"""The small loader every control carries (jupyter_tree_chat/widget/loader.js), on a bare
page with fake anywidget models: which code it uses, and that it asks at most once.

The page is served from memory through Playwright's routing (no server, no network);
the test plays both the lab extension (an entry on the page-wide registry) and the
kernel (answering ``{"a": "code"}`` with the bundle and stylesheet it would send).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers.widget_page import ensure_built

from jupyter_tree_chat.conversation.session import Session
from jupyter_tree_chat.providers.offline.provider import OfflineProvider
from jupyter_tree_chat.widget import loader
from jupyter_tree_chat.widget.turn import TurnControl

pytestmark = pytest.mark.browser

ORIGIN = "http://loader.test"
PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>
<div id="a"></div><div id="b"></div>
<script type="module">
REGISTER
function fakeModel(traits) {
  const handlers = {};
  return {
    get: name => traits[name],
    on: (event, callback) => (handlers[event] ||= []).push(callback),
    off: (event, callback) => {
      handlers[event] = (handlers[event] || []).filter(c => c !== callback);
    },
    send: content => window.sent.push(content),
    fire: content => (handlers['msg:custom'] || []).slice().forEach(c => c(content, [])),
  };
}
window.sent = [];
const traits = JSON.parse(document.getElementById('traits').textContent);
window.models = traits.map(fakeModel);
const widget = (await import('/loader.js')).default;
window.views = window.models.map((model, k) => {
  widget.initialize({ model });
  return widget.render({ model, el: document.getElementById(k ? 'b' : 'a') });
});
window.ready = true;
</script>
<script id="traits" type="application/json">TRAITS</script>
</body></html>"""


def control_traits(tmp_path: Path) -> list[dict[str, Any]]:
    """Two turn controls' synced traits, as the kernel would send them."""
    session = Session.open(tmp_path / "nb.chat.jsonl", OfflineProvider())
    traits = []
    for question in ("What is a session tree?", "Why fork?"):
        session.ask(question)
        assert session.leaf is not None
        control = TurnControl(session, session.leaf)
        traits.append({n: getattr(control, n) for n in ("uid", "mode", "busy", "error", "turn")})
    return traits


def open_page(page: Any, traits: list[dict[str, Any]], register: str) -> None:
    ensure_built()
    html = PAGE.replace("REGISTER", register).replace("TRAITS", json.dumps(traits))

    def serve(route: Any) -> None:
        if route.request.url.endswith("/loader.js"):
            route.fulfill(body=loader.LOADER, content_type="text/javascript")
        elif route.request.url.startswith(ORIGIN):
            route.fulfill(body=html, content_type="text/html")
        else:
            route.abort()

    page.route("**/*", serve)
    page.goto(ORIGIN + "/")
    page.wait_for_function("window.ready === true")


def test_a_registry_entry_of_another_protocol_is_passed_over_and_the_kernel_asked_once(
    page, page_log, tmp_path
):
    stale = "globalThis[Symbol.for('jupyter-tree-chat:widget')] = {protocol: 0, widget: {" \
        "initialize() { window.stale = true; }, render() { window.stale = true; }}};"  # fmt: skip
    open_page(page, control_traits(tmp_path), stale)
    asked = page.evaluate("window.sent.filter(m => m.a === 'code')")
    assert asked == [{"a": "code", "protocol": loader.PROTOCOL}]  # two controls, one question
    assert page.locator(".jtc-turn").count() == 0  # nothing to show before the code arrives
    page.evaluate("code => window.models[0].fire(code)", loader.code_message())
    page.wait_for_function("document.querySelectorAll('.jtc-turn').length === 2")
    positions = page.locator('.jtc-position[data-side="r"]')
    assert positions.all_inner_texts() == ["1/1", "1/1"]
    assert page.locator("style#jupyter-tree-chat-widget-css").count() == 1
    assert page.evaluate("window.stale") is None
    assert page.evaluate("window.sent.filter(m => m.a === 'code').length") == 1
    assert page_log.page_errors == []


@pytest.mark.parametrize(
    "speaks",
    [
        "protocol: PROTOCOL",  # an extension that speaks only this protocol
        "protocol: 1, protocols: [1, PROTOCOL]",  # as registry.ts registers it: older too
    ],
)
def test_this_protocols_registry_entry_is_used_and_nothing_is_asked(
    page, page_log, tmp_path, speaks
):
    registered = (
        "globalThis[Symbol.for('jupyter-tree-chat:widget')] = {SPEAKS, widget: {"
        "initialize({ model }) { (window.initialized ||= []).push(model.get('uid')); },"
        "render({ model, el }) { el.textContent = 'registered ' + model.get('mode'); }}};"
    ).replace("SPEAKS", speaks.replace("PROTOCOL", str(loader.PROTOCOL)))
    traits = control_traits(tmp_path)
    open_page(page, traits, registered)
    page.wait_for_function("document.getElementById('b').textContent === 'registered turn'")
    assert page.locator("#a").inner_text() == "registered turn"
    assert page.evaluate("window.initialized") == [t["uid"] for t in traits]
    assert page.evaluate("window.sent") == []
    assert page_log.page_errors == []
