"""Waiting for a page to be still, by what it shows rather than for a fixed time.

For the checks that something did *not* happen (no handler ran, no remote image loaded)
and for screenshots: a fixed pause is too short on a loaded machine and wasted on an idle
one. The page is still when it has loaded, every image that has a source has loaded or
failed (so an ``onerror`` that was kept would have run), its fonts are in and no finite
CSS animation or transition is under way; then the events those queued get a frame and a
task of their own to run in.
"""

from __future__ import annotations

from typing import Any

STILL_JS = """() => document.readyState === 'complete'
  && document.fonts.status === 'loaded'
  && [...document.images].every(i => !i.getAttribute('src') || i.complete)
  && document.getAnimations().every(a => a.playState !== 'running'
       || !a.effect || a.effect.getComputedTiming().endTime === Infinity)"""

AFTER_QUEUED_JS = """() => new Promise(done =>
  requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(done, 0))))"""


def wait_until_still(page: Any) -> None:
    """Return once the page has nothing left to load, fire or animate (see the module)."""
    page.wait_for_function(STILL_JS)
    page.evaluate(AFTER_QUEUED_JS)
    page.wait_for_function(STILL_JS)  # what those events started has finished too
