/**
 * A tiny element builder, and event listeners that come with their cleanup. Text only
 * ever goes in through `textContent`; the one way to put markup in is `setSanitizedHtml`
 * (safety.ts) with a sanitizer's output.
 */

type Child = Node | string | null | undefined | false;

export function h(
  tag: string,
  attrs: Record<string, string | number | boolean | undefined> = {},
  ...children: Child[]
): HTMLElement {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) {
      continue;
    }
    if (name === 'class') {
      element.className = String(value);
    } else if (name === 'style') {
      element.style.cssText = String(value); // through the CSSOM: an exported page's CSP allows no style attribute
    } else if (/^on/i.test(name)) {
      throw new Error(`h(): event handler attributes are not allowed (${name})`);
    } else {
      element.setAttribute(name, value === true ? '' : String(value));
    }
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) {
      continue;
    }
    element.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return element;
}

type Handlers = { [K in keyof HTMLElementEventMap]?: (event: HTMLElementEventMap[K]) => void };

/** Listen to these events on `target`; returns what removes every listener again. */
export function listen(target: HTMLElement, handlers: Handlers): () => void {
  const entries = Object.entries(handlers) as Array<[string, EventListener]>;
  for (const [event, handler] of entries) {
    target.addEventListener(event, handler);
  }
  return () => {
    for (const [event, handler] of entries) {
      target.removeEventListener(event, handler);
    }
  };
}
