/**
 * The footer's figures once in a live page (issue 35).
 *
 * A `%%chat` cell prints its reply, a footer line and the turn control. The footer
 * (kernel/display/output.py `footer_html`) names its node (`data-node`) and marks the figures
 * the control shows too (`jtc-in-control`: model, tokens, cost, positions). While a
 * control in the same output area shows that very reply, those figures are folded away
 * (`jtc-footer-folded`, style/base.css), so they show once; when it shows another answer,
 * or goes away, the footer is whole again. The saved output is never changed: nbconvert,
 * GitHub and a page without widgets keep the whole footer.
 */

import { Store } from './store';

function footers(el: HTMLElement): HTMLElement[] {
  const area = el.closest('.jp-OutputArea');
  return area ? Array.from(area.querySelectorAll<HTMLElement>('.jtc-footer')) : [];
}

/** Keep the cell's footer folded while the control in `el` shows its reply; returns the undo. */
export function foldFooterWhileShown(el: HTMLElement, store: Store): () => void {
  const fold = (): void => {
    const shown = store.turnInfo()?.r?.id ?? null;
    for (const footer of footers(el)) {
      footer.classList.toggle('jtc-footer-folded', shown !== null && footer.dataset.node === shown);
    }
  };
  const frame = requestAnimationFrame(fold); // the view is in the output area by then
  const unsubscribe = store.subscribe(what => {
    if (what === 'tree') {
      fold();
    }
  });
  return () => {
    cancelAnimationFrame(frame);
    unsubscribe();
    for (const footer of footers(el)) {
      footer.classList.remove('jtc-footer-folded');
    }
  };
}
