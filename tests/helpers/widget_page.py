"""The built widget front end on a bare page, with a fake anywidget model.

For what does not need a kernel: timing the panel's first render of a big tree, and
checking that hostile text runs nothing. The page is served from memory through
Playwright's routing (no server, no network); ``window.jtw`` gives the test the model's
traits, what the view sent (``sent``) and ``message(...)`` to play the kernel.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
WIDGET_JS = REPO / "jupyter_tree_chat" / "widget" / "static" / "widget.js"
WIDGET_CSS = REPO / "jupyter_tree_chat" / "widget" / "static" / "widget.css"
ORIGIN = "http://widget.test"

PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><link rel="stylesheet" href="/widget.css"></head>
<body><div id="host" style="width: 1200px"></div>
<script type="module">
HOST
const traits = JSON.parse(document.getElementById('traits').textContent);
const handlers = {};
const model = {
  get: name => traits[name],
  on: (event, callback) => (handlers[event] ||= []).push(callback),
  off: (event, callback) => {
    handlers[event] = (handlers[event] || []).filter(c => c !== callback);
  },
  send: content => window.jtw.sent.push(content),
};
window.jtw = {
  traits, sent: [],
  message: content => (handlers['msg:custom'] || []).forEach(c => c(content, [])),
  set: (name, value) => {
    traits[name] = value;
    (handlers['change:' + name] || []).forEach(c => c());
  },
};
const widget = await import('/widget.js');
widget.initialize({ model });
await new Promise(requestAnimationFrame);
const started = performance.now();
widget.render({ model, el: document.getElementById('host') });
await new Promise(requestAnimationFrame);
await new Promise(resolve => setTimeout(resolve, 0));
window.jtw.renderMs = performance.now() - started;
window.jtw.ready = true;
</script>
<script id="traits" type="application/json">TRAITS</script>
</body></html>"""


def ensure_built() -> None:
    """Build widget.js and widget.css with the project's npm script when either is missing
    or older than the sources (labextension/src and the stylesheet, style/base.css)."""
    labext = REPO / "labextension"
    sources = [*labext.joinpath("src").rglob("*.ts"), labext / "style" / "base.css"]
    newest = max(p.stat().st_mtime for p in sources)
    built = [WIDGET_JS, WIDGET_CSS]
    if all(p.exists() and p.stat().st_mtime >= newest for p in built):
        return
    subprocess.run(["npm", "run", "build:widget"], cwd=REPO / "labextension", check=True,
                   capture_output=True)  # fmt: skip


def open_widget(page: Any, traits: dict[str, Any], host_script: str = "") -> float:
    """Render the widget with these traits; returns the first render time in ms.

    ``host_script`` runs in the page before the widget is imported (to stand in for what
    the JupyterLab extension puts on the page, labextension/src/bridge.ts).
    """
    ensure_built()
    html = PAGE.replace("HOST", host_script).replace(
        "TRAITS", json.dumps(traits).replace("</", "<\\/")
    )

    def serve(route: Any) -> None:
        url = route.request.url
        if url.endswith("/widget.js"):
            route.fulfill(body=WIDGET_JS.read_bytes(), content_type="text/javascript")
        elif url.endswith("/widget.css"):
            route.fulfill(body=WIDGET_CSS.read_bytes(), content_type="text/css")
        elif url.startswith(ORIGIN):
            route.fulfill(body=html, content_type="text/html")
        else:
            route.abort()  # nothing else is ever fetched: remote images must not load

    page.route("**/*", serve)
    page.goto(ORIGIN + "/")
    page.wait_for_function("window.jtw && window.jtw.ready === true")
    return float(page.evaluate("window.jtw.renderMs"))


def answer_text_requests(page: Any, texts: dict[str, Any]) -> None:
    """Play the kernel: answer every full-text request the view has sent so far."""
    page.wait_for_function("() => window.jtw.sent.some(m => m.a === 'text')")
    page.evaluate(
        "texts => { for (const m of window.jtw.sent.splice(0)) if (m.a === 'text')"
        " window.jtw.message({t: 'texts', req: m.req,"
        " texts: Object.fromEntries(m.ids.map(id => [id, texts[id]]))}); }",
        texts,
    )


def panel_traits(panel: Any) -> dict[str, Any]:
    """The synced traits of a ``TreePanel`` as the browser would get them."""
    names = [
        "uid",
        "mode",
        "busy",
        "error",
        "nodes",
        "labels",
        "hidden",
        "links",
        "leaf",
        "title",
        "context",
    ]
    return {name: getattr(panel, name) for name in names}
