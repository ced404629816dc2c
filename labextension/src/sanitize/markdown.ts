/**
 * The Markdown renderer of the panel and of an exported page (the `RenderMarkdown`
 * their components get; the viewer uses JupyterLab's): model and user text is
 * untrusted input.
 *
 * Raw HTML in a message is text, as in the kernel's renderer (markdown-it `html=False`,
 * jupyter_tree_chat/kernel/display/safe_html.py): `<b>x</b>` is shown as `<b>x</b>`. `marked` is given
 * no HTML tokenizer (block or inline), so a line like `<div>` is an ordinary paragraph
 * and the Markdown around and inside it is parsed as usual; should an `html` token still
 * come from somewhere, its renderer escapes it. Without this, markup that the browser's
 * HTML parser swallows (an unclosed `<noscript>`, `<!--`, `<template>`, `<textarea>`,
 * `<title>`, `<style>` ...) would hide the rest of the message even though nothing runs.
 *
 * DOMPurify, limited to its HTML profile (no SVG, no MathML), still runs afterwards as a
 * second line of defence (it removes `javascript:` URLs from Markdown links, among other
 * things); the Markdown component (components/markdown.ts) then stops remote images
 * from loading by themselves (`neutraliseRemote`) and puts the result into the page
 * with `setSanitizedHtml`, which parses it inert.
 */

import DOMPurify from 'dompurify';
import { Marked, type Tokens } from 'marked';

import { escapeHtml } from '../components/safety';

const PURIFY = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'object', 'embed', 'base', 'meta', 'link'],
  FORBID_ATTR: ['style', 'srcdoc', 'formaction', 'action'],
  ALLOW_DATA_ATTR: false
};

/** `marked` with raw HTML as text: its own instance, the global `marked` is untouched. */
const markdown = new Marked({
  async: false,
  gfm: true,
  tokenizer: {
    // `undefined` (not `false`, which falls back to the built-in rule): no token here,
    // the lexer goes on to its next rule and the text ends up in a paragraph / text
    html: () => undefined,
    tag: () => undefined
  },
  renderer: {
    html: (token: Tokens.HTML | Tokens.Tag) =>
      'block' in token && token.block
        ? `<p>${escapeHtml(token.text.trimEnd())}</p>\n`
        : escapeHtml(token.text)
  }
});

/**
 * The HTML `marked` makes of a Markdown text, before any sanitizing: raw HTML in the
 * text comes out escaped. Exported for the Node test (tests/test_widget_markdown.py).
 */
export function markdownToHtml(text: string): string {
  return markdown.parse(text, { async: false }) as string;
}

/** Sanitized HTML for a Markdown text: `marked` without raw HTML, then DOMPurify. */
export function sanitizedMarkdown(text: string): string {
  let html: string;
  try {
    html = markdownToHtml(text);
  } catch {
    html = `<pre>${escapeHtml(text)}</pre>`;
  }
  return DOMPurify.sanitize(html, PURIFY) as unknown as string;
}
