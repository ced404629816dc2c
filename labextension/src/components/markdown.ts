/**
 * The Markdown component: a message text shown as rendered Markdown, through the host's
 * sanitizing renderer (the panel's `marked` + DOMPurify, the viewer's JupyterLab
 * sanitizer), then the remote-content guard (`neutraliseRemote`), then into the page
 * inert (`setSanitizedHtml`). Every other string in the components reaches the DOM as
 * text. A renderer may answer at once (the panel: streaming redraws every frame) or
 * later (the viewer: the text shows as plain text until then).
 */

import { h } from './dom';
import { neutraliseRemote, setSanitizedHtml } from './safety';
import { Translation } from './translate';

/** Markdown to SANITIZED html (the component still guards remote content after it). */
export type RenderMarkdown = (text: string) => Promise<string> | string;

const CACHE_LIMIT = 1000;

/** What a view adds to rendered text once it is in the page. */
export type Decorate = (holder: HTMLElement) => void;

export class Markdown {
  private readonly cache = new Map<string, string>();

  constructor(
    private readonly render: RenderMarkdown,
    private readonly trans: Translation
  ) {}

  /** A new `.jtc-markdown` element showing `text` (`decorate`: see `fill`). */
  element(text: string, decorate?: Decorate): HTMLElement {
    const holder = h('div', { class: 'jtc-markdown' });
    this.fill(holder, text, { decorate });
    return holder;
  }

  /**
   * Show `text` in `holder`; `cache: false` for text that keeps changing (a stream).
   * `decorate(holder)` runs once the rendered text is in (the code bars, code.ts).
   * Resolves once the rendered text is in place (at once, or when the renderer answers).
   */
  fill(holder: HTMLElement, text: string, { cache = true, decorate }: { cache?: boolean; decorate?: Decorate } = {}): Promise<void> {
    const cached = this.cache.get(text);
    if (cached !== undefined) {
      this.show(holder, text, cached, decorate);
      return Promise.resolve();
    }
    let rendered: Promise<string> | string;
    try {
      rendered = this.render(text);
    } catch (error) {
      this.failed(holder, error);
      return Promise.resolve();
    }
    const keep = (html: string): string => {
      const safe = neutraliseRemote(html, url => this.trans.__('Remote content not loaded: %1', url));
      if (cache) {
        if (this.cache.size >= CACHE_LIMIT) {
          this.cache.clear();
        }
        this.cache.set(text, safe);
      }
      return safe;
    };
    if (typeof rendered === 'string') {
      this.show(holder, text, keep(rendered), decorate);
      return Promise.resolve();
    }
    holder.textContent = text; // shown as text until the rendered version arrives
    holder.classList.add('jtc-pending');
    return rendered.then(
      html => this.show(holder, text, keep(html), decorate),
      error => this.failed(holder, error)
    );
  }

  private show(holder: HTMLElement, text: string, safeHtml: string, decorate?: Decorate): void {
    holder.classList.remove('jtc-pending');
    setSanitizedHtml(holder, safeHtml);
    decorate?.(holder);
    if (text.trim() && isVisuallyEmpty(holder)) {
      // the sanitizer removed everything: show what was written, as text
      holder.replaceChildren(
        h(
          'pre',
          { class: 'jtc-plain jtc-stripped', title: this.trans.__('Shown as text: nothing in it could be rendered safely') },
          text
        )
      );
    }
  }

  private failed(holder: HTMLElement, error: unknown): void {
    holder.classList.remove('jtc-pending');
    holder.classList.add('jtc-render-error');
    holder.title = this.trans.__('Could not render the Markdown: %1', String(error));
  }
}

function isVisuallyEmpty(element: HTMLElement): boolean {
  return (
    !(element.textContent ?? '').trim() &&
    !element.querySelector('img, svg, video, audio, picture, canvas, hr, table, [data-jtc-blocked-src]')
  );
}
