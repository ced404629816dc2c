/**
 * Sibling answers side by side, the words that differ marked, each with its model,
 * tokens and time. The text is shown as plain text (never as HTML) so the marks sit on
 * exactly the words the diff found; nothing in it can run.
 */

import { wordDiff, Segment } from '../render/diff';
import { h } from '../render/dom';
import { MetaSummary, Store, metaLine, shortId } from './model';

export const MAX_COMPARE = 4;

export interface CompareCallbacks {
  choose(id: string): void;
  close(): void;
}

/** The compare section for `ids` (siblings; the first is the reference). */
export function renderCompare(store: Store, ids: string[], callbacks: CompareCallbacks): HTMLElement {
  const shown = ids.slice(0, MAX_COMPARE);
  const missing = shown.filter(id => !store.text(id));
  store.requestTexts(missing);
  const textOf = (id: string): string => store.text(id)?.text ?? '';
  const reference = shown[0];
  const columns = h('div', { class: 'jtw-compare-columns', style: `--jtw-columns: ${shown.length}` });
  for (const id of shown) {
    let segments: Segment[];
    if (missing.length) {
      segments = [{ text: store.text(id)?.text ?? 'loading…', changed: false }];
    } else if (id === reference) {
      segments = wordDiff(textOf(id), textOf(shown[1])).a;
    } else {
      segments = wordDiff(textOf(reference), textOf(id)).b;
    }
    const body = h('div', { class: 'jtw-compare-text' });
    for (const segment of segments) {
      body.append(segment.changed ? h('mark', { class: 'jtw-diff' }, segment.text) : segment.text);
    }
    const i = store.index.get(id);
    const meta: MetaSummary | null = i === undefined ? null : store.metas[i];
    const siblings = store.siblings(id);
    columns.append(
      h(
        'div',
        { class: `jtw-compare-column${id === reference ? ' jtw-reference' : ''}`, 'data-id': id },
        h(
          'div',
          { class: 'jtw-compare-header' },
          h('span', { class: 'jtw-id', title: id }, shortId(id)),
          h('span', { class: 'jtw-position' }, `${siblings.indexOf(id) + 1}/${siblings.length}`),
          h('span', { class: 'jtw-meta' }, metaLine(meta) || '—'),
          meta && meta[4] ? h('span', { class: 'jtw-interrupted' }, 'cut short') : null,
          id === reference
            ? h('span', { class: 'jtw-badge' }, 'shown')
            : h('button', { class: 'jtw-button', 'data-choose': id, title: 'Show this answer\'s branch' }, 'Use this')
        ),
        body
      )
    );
  }
  const section = h(
    'section',
    { class: 'jtw-compare', 'aria-label': 'Compare answers' },
    h(
      'div',
      { class: 'jtw-section-head' },
      h(
        'h3',
        { class: 'jtw-section-title' },
        `${shown.length} answers side by side` +
          (ids.length > shown.length ? ` (first ${shown.length} of ${ids.length})` : '') +
          ' · differences marked'
      ),
      h('button', { class: 'jtw-button', 'data-close': '1', title: 'Close the comparison (Escape)' }, 'Close')
    ),
    columns
  );
  section.addEventListener('click', event => {
    const target = event.target as HTMLElement;
    const choose = target.closest<HTMLElement>('[data-choose]');
    if (choose?.dataset.choose) {
      callbacks.choose(choose.dataset.choose);
    } else if (target.closest('[data-close]')) {
      callbacks.close();
    }
  });
  return section;
}
