/**
 * Markdown to safe HTML for the widget: model and user text is untrusted input.
 *
 * `marked` turns Markdown (and any raw HTML in it) into HTML; DOMPurify, limited to its
 * HTML profile (no SVG, no MathML), removes scripts, event handlers, `javascript:` URLs
 * and everything else that could run; `neutraliseRemote` (shared render module) then
 * stops remote images from loading by themselves. The result is put into the page with
 * `setSanitizedHtml`, which parses it inert.
 */

import DOMPurify from 'dompurify';
import { marked } from 'marked';

import { neutraliseRemote } from '../render/safety';

const PURIFY = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'object', 'embed', 'base', 'meta', 'link'],
  FORBID_ATTR: ['style', 'srcdoc', 'formaction', 'action'],
  ALLOW_DATA_ATTR: false
};

const cache = new Map<string, string>();
const CACHE_LIMIT = 500;

/** Sanitized HTML for a Markdown text (cached: the same answer is often shown twice). */
export function renderMarkdown(text: string): string {
  const cached = cache.get(text);
  if (cached !== undefined) {
    return cached;
  }
  let html: string;
  try {
    html = marked.parse(text, { async: false, gfm: true }) as string;
  } catch {
    html = '';
    const pre = document.createElement('pre');
    pre.textContent = text;
    html = pre.outerHTML;
  }
  const clean = neutraliseRemote(DOMPurify.sanitize(html, PURIFY) as unknown as string);
  if (cache.size >= CACHE_LIMIT) {
    cache.clear();
  }
  cache.set(text, clean);
  return clean;
}
