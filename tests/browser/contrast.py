"""WCAG contrast as a user sees it, for the browser tests of both views.

``CONTRAST_JS`` runs in the page on a root element and returns, for every element with
its own text, the colour it is drawn in against what is really behind it; ``set_theme``
switches JupyterLab between its Light and Dark themes and waits until it has.
"""

from __future__ import annotations

from typing import Any

# Every element with its own text under the root: its colour against what is behind it,
# the backgrounds of its ancestors composited, opacity taken into account. Disabled
# controls are exempt (WCAG 1.4.3).
CONTRAST_JS = """
root => {
  const parse = c => {
    const m = c.match(/rgba?\\(([^)]+)\\)/);
    if (!m) return [0, 0, 0, 0];
    const p = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const over = (top, bottom) => {
    const a = top[3];
    return [0, 1, 2].map(i => top[i] * a + bottom[i] * (1 - a)).concat([1]);
  };
  const background = el => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c[3] > 0) layers.push(c);
      if (c[3] >= 1) break;
    }
    let bg = [255, 255, 255, 1];
    for (const layer of layers.reverse()) bg = over(layer, bg);
    return bg;
  };
  const opacity = el => {
    let o = 1;
    for (let e = el; e; e = e.parentElement) o *= Number(getComputedStyle(e).opacity);
    return o;
  };
  const lum = c => {
    const [r, g, b] = c.slice(0, 3).map(v => {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const out = [];
  for (const el of root.querySelectorAll('*')) {
    const own = Array.from(el.childNodes)
      .filter(n => n.nodeType === 3).map(n => n.textContent.trim()).join(' ').trim();
    if (!own || el.closest(':disabled') || !el.getClientRects().length) continue;
    const style = getComputedStyle(el);
    if (style.visibility === 'hidden') continue;
    const bg = background(el);
    const fg = parse(style.color);
    const o = opacity(el);
    const seen = over([fg[0], fg[1], fg[2], fg[3] * o], bg);
    const [l1, l2] = [lum(seen), lum(bg)].sort((a, b) => b - a);
    out.push({
      what: el.localName + (el.className && typeof el.className === 'string'
        ? '.' + el.className.trim().split(/\\s+/).join('.') : '')
        + ' in ' + (el.parentElement.className || el.parentElement.localName),
      text: own.slice(0, 40),
      color: style.color,
      background: 'rgb(' + bg.slice(0, 3).map(Math.round).join(', ') + ')',
      ratio: Math.round(((l1 + 0.05) / (l2 + 0.05)) * 100) / 100,
    });
  }
  return out;
}
"""

THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}


def set_theme(page: Any, theme: str) -> None:
    """Switch JupyterLab to ``theme`` ("light" or "dark") and wait until it shows."""
    page.evaluate(
        "theme => window.jupyterapp.commands.execute('apputils:change-theme', {theme})",
        THEMES[theme],
    )
    page.wait_for_function(
        "light => document.body.dataset.jpThemeLight === light", arg=str(theme == "light").lower()
    )


def assert_readable(found: list[dict[str, Any]], needed: list[str]) -> None:
    """Every pair in ``found`` reads at WCAG AA (4.5:1), and each kind in ``needed`` (a tag,
    or a tag and its first classes: ``span.jtc-role``) was measured at least once."""
    kinds = {f["what"].split(" in ")[0] for f in found}
    for kind in needed:
        assert any(k == kind or k.startswith(kind + ".") for k in kinds), (kind, kinds)
    failing = [f for f in found if f["ratio"] < 4.5]
    assert not failing, "\n".join(
        f"{f['ratio']:>5}  {f['what']}: {f['text']!r} {f['color']} on {f['background']}"
        for f in failing
    )
