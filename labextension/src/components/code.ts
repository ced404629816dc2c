/**
 * Code in an answer, back into the notebook: a small bar on each code block of a rendered
 * answer with "Insert below" (where the host can put code into a new cell under the cell
 * that asked: the panel in a notebook, through the lab extension's command) and "Copy".
 *
 * The code is the block's text as rendered: the renderer has already undone the
 * Markdown escaping, so it is exactly what the answer wrote (the kernel's
 * `%chat code` gives the same text).
 */

import { button } from './controls';
import { h } from './dom';
import { Translation } from './translate';

/** What a view can do with an answer's code. */
export interface CodeActions {
  /** put `code` into a new cell below the cell that asked answer `id` (`near`: the
   * element clicked, inside the notebook); absent where there is no notebook */
  insert?: (code: string, id: string, near: HTMLElement) => void;
}

/** The code blocks a renderer made of Markdown (a fallback `<pre>` of plain text is not one). */
export function codeBlocks(holder: ParentNode): HTMLElement[] {
  return Array.from(holder.querySelectorAll<HTMLElement>('pre')).filter(pre => !pre.classList.contains('jtc-plain'));
}

/** A code block's text: its `<code>` (or itself), without the one newline that ends it. */
export function codeOf(pre: Element): string {
  const text = (pre.querySelector('code') ?? pre).textContent ?? '';
  return text.endsWith('\n') ? text.slice(0, -1) : text;
}

/** The language a renderer noted on a block (`language-python`), or ''. */
export function languageOf(pre: Element): string {
  const code = pre.querySelector('code');
  const match = /(?:^|\s)language-(\S+)/.exec(code?.className ?? '');
  return match ? match[1] : '';
}

/** The buttons for one block: `data-act` "insert-code" (when `insert`) and "copy-code". */
export function codeButtons(trans: Translation, id: string, index: number, insert: boolean): HTMLElement[] {
  const attrs = { 'data-code': index };
  return [
    insert
      ? button(trans.__('Insert below'), {
          act: 'insert-code',
          id,
          look: 'quiet',
          title: trans.__('Put this code into a new cell below the cell that asked'),
          attrs
        })
      : null,
    button(trans.__('Copy'), { act: 'copy-code', id, look: 'quiet', title: trans.__('Copy this code'), attrs })
  ].filter((b): b is HTMLElement => b !== null);
}

/** Put a bar with the buttons above each code block of a rendered answer. */
export function addCodeBars(holder: HTMLElement, id: string, trans: Translation, actions: CodeActions): void {
  codeBlocks(holder).forEach((pre, index) => {
    if (pre.previousElementSibling?.classList.contains('jtc-code-bar')) {
      return;
    }
    const language = languageOf(pre);
    pre.before(
      h(
        'div',
        { class: 'jtc-code-bar' },
        language ? h('span', { class: 'jtc-code-language' }, language) : null,
        ...codeButtons(trans, id, index, actions.insert !== undefined)
      )
    );
  });
}

/**
 * Carry out a click on a code button (`target`, with `data-act`) whose code is in
 * `blocks`; says whether it was one.
 */
export function runCodeAction(target: HTMLElement, blocks: HTMLElement[], actions: CodeActions): boolean {
  const act = target.dataset.act;
  if (act !== 'insert-code' && act !== 'copy-code') {
    return false;
  }
  const pre = blocks[Number(target.dataset.code)];
  if (!pre) {
    return true;
  }
  const code = codeOf(pre);
  if (act === 'insert-code') {
    actions.insert?.(code, target.dataset.id ?? '', target);
  } else {
    void copyText(code, target);
  }
  return true;
}

/** Copy `text` to the clipboard; the button says "Copied" for a moment when it worked. */
export async function copyText(text: string, shownOn?: HTMLElement): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    return false;
  }
  if (shownOn) {
    shownOn.classList.add('jtc-done');
    setTimeout(() => shownOn.classList.remove('jtc-done'), 1200);
  }
  return true;
}
