/**
 * The words both views use for the same things, in one place so the panel and the
 * viewer cannot drift apart again: the roles (the file's own `user` / `assistant`, and
 * `tool result` for a user-role message the tool system filled in), a reply's numbers,
 * and the small badges.
 */

import { h } from './dom';
import { Role, Summary } from './model';
import { Translation } from './translate';

export function roleName(role: Role, trans: Translation): string {
  switch (role) {
    case 'assistant':
      return trans._p('role', 'assistant');
    case 'tool':
      return trans._p('role', 'tool result');
    default:
      return trans._p('role', 'user');
  }
}

/** The separator between the items of a one-line list (`12 in · 34 out`). */
export function joinItems(items: string[], trans: Translation): string {
  return items.join(trans._p('list separator', ' · '));
}

/** `120 in · 340 out · 3.2 s`: a reply's tokens and time (its model is shown apart). */
export function numbersLine(summary: Summary | null, trans: Translation): string {
  if (!summary) {
    return '';
  }
  const items: string[] = [];
  if (typeof summary.inputTokens === 'number') {
    items.push(trans.__('%1 in', summary.inputTokens));
  }
  if (typeof summary.outputTokens === 'number') {
    items.push(trans.__('%1 out', summary.outputTokens));
  }
  const ms = summary.durationMs;
  if (typeof ms === 'number') {
    items.push(ms < 1000 ? trans.__('%1 ms', ms) : trans.__('%1 s', (ms / 1000).toFixed(1)));
  }
  if (summary.cost) {
    items.push(summary.cost);
  }
  return joinItems(items, trans);
}

/** The model and the numbers of a reply, for a title or a hint. */
export function summaryLine(summary: Summary | null, trans: Translation): string {
  if (!summary) {
    return '';
  }
  return joinItems([summary.model ?? '', numbersLine(summary, trans)].filter(Boolean), trans);
}

/** `1/3`: a place among siblings. */
export function position(pos: number, count: number, trans: Translation): string {
  return trans._p('position among siblings', '%1/%2', pos, count);
}

export function interruptedBadge(trans: Translation): HTMLElement {
  return h(
    'span',
    { class: 'jtc-interrupted', title: trans.__('The reply was cut short; what arrived was kept') },
    trans.__('interrupted')
  );
}

export function labelBadge(label: string, trans: Translation): HTMLElement {
  return h('span', { class: 'jtc-label', title: trans.__('label') }, label);
}

export function hiddenBadge(trans: Translation): HTMLElement {
  return h(
    'span',
    { class: 'jtc-hidden-badge', title: trans.__('A hidden branch: folded away in every view, kept in the file') },
    trans.__('hidden')
  );
}
