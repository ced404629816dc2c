/**
 * Sibling versions side by side, the words that differ marked, each with its model,
 * tokens and time. The text is shown as plain text (never as HTML) so the marks sit on
 * exactly the words the diff found; nothing in it can run.
 */

import { plainText } from './content';
import { Navigate, button } from './controls';
import { Segment, wordDiff } from './diff';
import { h } from './dom';
import { SessionSource, shortId, siblingPlace } from './model';
import { Translation } from './translate';
import { interruptedBadge, numbersLine, position } from './vocabulary';

export const MAX_COMPARE = 4;

export interface CompareOptions {
  /** what choosing a column does: the panel switches the session to it, the viewer shows it */
  navigate: Navigate;
  choose(id: string): void;
  close(): void;
}

/** The compare section for `ids` (the first is the reference the others are diffed against). */
export function renderCompare(source: SessionSource, ids: string[], trans: Translation, options: CompareOptions): HTMLElement {
  const { tree } = source;
  const shown = ids.slice(0, MAX_COMPARE);
  const missing = shown.filter(id => !source.content(id));
  source.requestContent(missing);
  const textOf = (id: string): string => {
    const content = source.content(id);
    return content ? plainText(content.parts, trans) : '';
  };
  const reference = shown[0];
  const columns = h('div', { class: 'jtc-compare-columns', style: `--jtc-columns: ${shown.length}` });
  for (const id of shown) {
    let segments: Segment[];
    if (missing.length) {
      segments = [{ text: source.content(id) ? textOf(id) : trans.__('loading…'), changed: false }];
    } else if (id === reference) {
      segments = shown.length > 1 ? wordDiff(textOf(id), textOf(shown[1])).a : [{ text: textOf(id), changed: false }];
    } else {
      segments = wordDiff(textOf(reference), textOf(id)).b;
    }
    const body = h('div', { class: 'jtc-compare-text' });
    for (const segment of segments) {
      body.append(segment.changed ? h('mark', { class: 'jtc-diff' }, segment.text) : segment.text);
    }
    const summary = tree.summary(id);
    const place = siblingPlace(tree, id);
    const choose =
      options.navigate === 'switch'
        ? button(trans.__('Use this'), { act: 'switch', id, title: trans.__("Make this version's branch the current one") })
        : button(trans.__('Show this'), { act: 'select', id, title: trans.__('Show the path to this version') });
    columns.append(
      h(
        'div',
        { class: `jtc-compare-column${id === reference ? ' jtc-reference' : ''}`, 'data-id': id },
        h(
          'div',
          { class: 'jtc-compare-header' },
          h('span', { class: 'jtc-id', title: id }, shortId(id)),
          h('span', { class: 'jtc-position' }, position(place.pos, place.count, trans)),
          summary?.model ? h('span', { class: 'jtc-model' }, summary.model) : null,
          h('span', { class: 'jtc-meta' }, numbersLine(summary, trans) || trans.__('—')),
          summary?.interrupted ? interruptedBadge(trans) : null,
          id === reference ? h('span', { class: 'jtc-badge' }, trans.__('shown')) : choose
        ),
        body
      )
    );
  }
  const caption =
    trans._n('%1 version side by side · differences marked', '%1 versions side by side · differences marked', shown.length) +
    (ids.length > shown.length ? ' ' + trans.__('(first %1 of %2)', shown.length, ids.length) : '');
  const section = h(
    'section',
    { class: 'jtc-compare', 'aria-label': trans.__('Compare versions') },
    h(
      'div',
      { class: 'jtc-section-head' },
      h('h3', { class: 'jtc-section-title' }, caption),
      button(trans.__('Close'), { act: 'close', title: trans.__('Close the comparison (Escape)') })
    ),
    columns
  );
  section.addEventListener('click', event => {
    const target = (event.target as HTMLElement).closest<HTMLElement>('[data-act]');
    if (target?.dataset.act === 'close') {
      options.close();
    } else if (target?.dataset.id && (target.dataset.act === 'switch' || target.dataset.act === 'select')) {
      options.choose(target.dataset.id);
    }
  });
  return section;
}
