/**
 * What happens to HTML after a sanitizer and before the DOM. Model output is untrusted:
 * the sanitizer (JupyterLab's, or the widget's) removes scripts and handlers; this module
 * then stops remote resources from loading by themselves (a tracking pixel in an answer
 * would otherwise phone home when the session is opened) and makes links open elsewhere.
 *
 * Both functions work on inert documents (`DOMParser`, `<template>`): nothing loads or
 * runs while they look at the markup.
 */

const REMOTE = /^\s*(?:[a-z][a-z0-9+.-]*:|\/\/)/i;
const LOCAL_SCHEMES = /^\s*(?:data|blob):/i;
const URL_ATTRIBUTES = ['src', 'srcset', 'poster', 'background', 'data', 'xlink:href'];
/** Removed with their content, in case a sanitizer let them through. */
const DROP = [
  'script, style, iframe, frame, frameset, object, embed, applet, base, meta, link, template', // not for translation: CSS selectors
  'input, select, textarea, video, audio, source, track, map, area, noscript, marquee' // not for translation: CSS selectors
].join(', ');
/** Replaced by their content: forms and buttons could post or navigate. */
const UNWRAP = 'form, button'; // not for translation: CSS selectors

/** The image types a page is shown: rasters only. An SVG is a program, never shown. */
export const SHOWN_IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * The one way an image of a message reaches the page: a `data:` URL of a raster type
 * built from base64 text, so nothing is fetched and no markup can ride along. Any other
 * media type, or data that is not plain base64, gives `null` (and nothing is shown).
 */
export function safeImageSource(mediaType: unknown, data: unknown): string | null {
  if (typeof mediaType !== 'string' || !SHOWN_IMAGE_TYPES.includes(mediaType)) {
    return null;
  }
  if (typeof data !== 'string' || !BASE64.test(data)) {
    return null;
  }
  return `data:${mediaType};base64,${data}`;
}

/** Escape text for use inside HTML (the fallback when no Markdown renderer is given). */
export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** Plain text as a `<pre>` block: a safe `renderMarkdown` for hosts without one. */
export function plainTextHtml(text: string): string {
  return `<pre class="jtc-plain">${escapeHtml(text)}</pre>`;
}

function isRemote(url: string): boolean {
  return REMOTE.test(url) && !LOCAL_SCHEMES.test(url);
}

/**
 * Neutralise remote images and media in already sanitized HTML: their URL moves to
 * `data-jtc-blocked-src` and the element gets the class `jtc-blocked` (shown as a
 * placeholder, `blockedTitle(url)` as its title). Styles with `url(` are dropped. Links get
 * `target="_blank" rel="noopener noreferrer"`. A second line of defence removes what
 * no chat message needs even if a sanitizer allows it: style sheets, frames, embedded
 * objects and media, image maps, forms and form controls.
 */
export function neutraliseRemote(html: string, blockedTitle: (url: string) => string): string {
  const doc = new DOMParser().parseFromString(
    `<!DOCTYPE html><html><body>${html}</body></html>`,
    'text/html'
  );
  const body = doc.body;
  for (const element of Array.from(body.querySelectorAll(DROP))) {
    element.remove();
  }
  for (const element of Array.from(body.querySelectorAll(UNWRAP))) {
    element.replaceWith(...Array.from(element.childNodes));
  }
  for (const element of Array.from(body.querySelectorAll('*'))) {
    for (const name of URL_ATTRIBUTES) {
      const value = element.getAttribute(name);
      if (value === null) {
        continue;
      }
      const remote =
        name === 'srcset'
          ? value.split(',').some(candidate => isRemote(candidate.trim().split(/\s+/)[0] ?? ''))
          : isRemote(value);
      if (remote) {
        element.removeAttribute(name);
        element.setAttribute('data-jtc-blocked-src', value);
        element.classList.add('jtc-blocked');
        if (!element.getAttribute('title')) {
          element.setAttribute('title', blockedTitle(value));
        }
      }
    }
    if (element.localName === 'image' || element.localName === 'use') {
      const href = element.getAttribute('href');
      if (href !== null && isRemote(href)) {
        element.removeAttribute('href');
        element.setAttribute('data-jtc-blocked-src', href);
      }
    }
    const style = element.getAttribute('style');
    if (style !== null && /url\s*\(|@import|expression\s*\(/i.test(style)) {
      element.removeAttribute('style');
    }
    if (element.localName === 'a') {
      element.setAttribute('target', '_blank');
      element.setAttribute('rel', 'noopener noreferrer');
    }
  }
  return body.innerHTML;
}

/**
 * Put sanitized HTML into `host`. The markup is parsed in an inert `<template>` and its
 * nodes moved over, so nothing runs while parsing; `html` must already be sanitized.
 */
export function setSanitizedHtml(host: HTMLElement, sanitizedHtml: string): void {
  const template = host.ownerDocument.createElement('template');
  template.innerHTML = sanitizedHtml;
  host.replaceChildren(template.content);
}
