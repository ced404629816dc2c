/**
 * One status line for both views: what the kernel is doing and what went wrong, in
 * words a user can act on. A click while a cell runs does nothing visible for a while
 * (the kernel handles widget messages only between cells), so that is said plainly; so is
 * an action refused because a reply is being written in the session (`session-busy`).
 */

import { h } from '../render/dom';
import { BUSY_TEXT, Store } from './model';

export function renderStatus(store: Store): HTMLElement {
  const model = store.model;
  const line = h('div', { class: 'jtw-status', 'aria-live': 'polite' });
  const error = store.actionError || model.get('error');
  // refused while a reply is written: said as "wait", not as a failure (also after a reload)
  const refused = store.actionBusy || (!store.actionError && error === BUSY_TEXT);
  if (store.kernelBusy) {
    line.append(
      h(
        'span',
        { class: 'jtw-status-busy', 'data-status': 'kernel-busy' },
        'The kernel is busy (a cell is running); your action will run as soon as it is free.'
      )
    );
  } else if (model.get('busy') && !refused) {
    line.append(h('span', { class: 'jtw-status-busy', 'data-status': 'replying' }, 'A reply is being written…'));
  } else if (store.running.size || store.waiting.size) {
    line.append(h('span', { class: 'jtw-status-busy', 'data-status': 'working' }, 'Working…'));
  }
  if (refused) {
    line.append(h('span', { class: 'jtw-status-error', role: 'alert', 'data-status': 'session-busy' }, `⏳ ${BUSY_TEXT}`));
  } else if (error) {
    line.append(h('span', { class: 'jtw-status-error', role: 'alert', 'data-status': 'error' }, `⚠ ${error}`));
  } else {
    const note = store.notes[store.notes.length - 1];
    if (note && note.level !== 'error') {
      line.append(h('span', { class: `jtw-status-note jtw-note-${note.level}` }, note.text));
    }
  }
  return line;
}
