/**
 * One status line: what the kernel is doing and what went wrong, in words a user can act
 * on. A click while a cell runs does nothing visible for a while (the kernel handles
 * widget messages only between cells), so that is said plainly; so is an action refused
 * because a reply is being written in the session (`session-busy`). Each state carries
 * `data-status` for tests.
 */

import { h } from './dom';
import { Translation } from './translate';

export interface StatusState {
  /** an action has waited long for the kernel (a cell is running) */
  kernelBusy: boolean;
  /** a reply is being written in the session */
  replying: boolean;
  /** actions sent and not finished */
  working: boolean;
  /** the last action was refused: a reply is being written */
  refused: boolean;
  /** the error line (from the kernel: already in its words) */
  error: string;
  note: { level: 'info' | 'warning' | 'error'; text: string } | null;
}

/**
 * What a view says when an action is refused because a reply is being written (the
 * kernel's BUSY_TEXT, jupyter_tree_chat/widget/widgets.py, in the user's language).
 * `%%chat` goes in as an argument: in a message id `%%` would read as an escaped `%`.
 */
export function busyText(trans: Translation): string {
  return trans.__(
    'Busy: a reply is being written in this session (a %1 cell or another view); wait for it to finish, then try again.',
    '%%chat'
  );
}

export function renderStatus(state: StatusState, trans: Translation): HTMLElement {
  const line = h('div', { class: 'jtc-status', 'aria-live': 'polite' });
  if (state.kernelBusy) {
    line.append(
      h(
        'span',
        { class: 'jtc-status-busy', 'data-status': 'kernel-busy' },
        trans.__('The kernel is busy (a cell is running); your action will run as soon as it is free.')
      )
    );
  } else if (state.replying && !state.refused) {
    line.append(h('span', { class: 'jtc-status-busy', 'data-status': 'replying' }, trans.__('A reply is being written…')));
  } else if (state.working) {
    line.append(h('span', { class: 'jtc-status-busy', 'data-status': 'working' }, trans.__('Working…')));
  }
  if (state.refused) {
    line.append(
      h('span', { class: 'jtc-status-error', role: 'alert', 'data-status': 'session-busy' }, `${trans._p('status icon', '⏳')} ${busyText(trans)}`)
    );
  } else if (state.error) {
    line.append(h('span', { class: 'jtc-status-error', role: 'alert', 'data-status': 'error' }, `${trans._p('status icon', '⚠')} ${state.error}`));
  } else if (state.note && state.note.level !== 'error') {
    line.append(h('span', { class: `jtc-status-note jtc-note-${state.note.level}` }, state.note.text));
  }
  return line;
}
