/**
 * The top of a session view: its title and counts, and the problems found in the file
 * (the viewer; a kernel's session has none to show). A problem's message is the
 * command line's `check` text word for word (format/parse.ts mirrors store.py), so it
 * stays as the reader wrote it (and is never passed through a template); only
 * `line N:` is translated. A problem in another tool's JSON export has no line: it says
 * where it is instead (a conversation and a node), as the command line does.
 */

import { Problem } from '../format/parse';
import { h } from './dom';
import { SessionSource, shortId } from './model';
import { Translation } from './translate';
import { joinItems } from './vocabulary';

export function renderHeader(source: SessionSource, fallbackTitle: string, trans: Translation): HTMLElement {
  const { tree, leaf, problems } = source;
  const leaves = tree.leafCount();
  const counts = [trans._n('%1 node', '%1 nodes', tree.size), trans._n('%1 branch', '%1 branches', leaves)];
  if (leaf) {
    counts.push(trans.__('current leaf %1', shortId(leaf)));
  }
  return h(
    'div',
    { class: 'jtc-header' },
    h('span', { class: 'jtc-title' }, source.title || fallbackTitle),
    h('span', { class: 'jtc-counts' }, joinItems(counts, trans)),
    problems.length
      ? h('span', { class: 'jtc-badge jtc-badge-problem' }, trans._n('%1 problem', '%1 problems', problems.length))
      : null
  );
}

export function renderProblems(problems: readonly Problem[], trans: Translation): HTMLElement | null {
  if (!problems.length) {
    return null;
  }
  const list = h('ul', { class: 'jtc-problem-list' });
  for (const problem of problems) {
    const where = problem.where !== undefined ? `${problem.where}:` : trans.__('line %1:', problem.line);
    list.append(h('li', { class: 'jtc-problem', 'data-line': problem.line }, `${where} ${problem.message}`));
  }
  return h(
    'section',
    { class: 'jtc-problems', 'aria-label': trans.__('Problems in the file') },
    h(
      'details',
      { open: true },
      h('summary', {}, trans._n('%1 problem in the file', '%1 problems in the file', problems.length)),
      list
    )
  );
}
