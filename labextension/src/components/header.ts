/**
 * The top of a session view: its title and counts, how full the model's context window
 * is on the current branch (the panel: `context 42% of 200k`, with a way out past 80%),
 * and the problems found in the file (the viewer; a kernel's session has none to show). A problem's message is the
 * command line's `check` text word for word (format/parse.ts mirrors store.py), so it
 * stays as the reader wrote it (and is never passed through a template); only
 * `line N:` is translated. A problem in another tool's JSON export has no line: it says
 * where it is instead (a conversation and a node), as the command line does.
 */

import { Problem } from '../format/parse';
import { h } from './dom';
import { ContextReading, SessionSource, shortId } from './model';
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
    source.context ? renderMeter(source.context, trans) : null,
    problems.length
      ? h('span', { class: 'jtc-badge jtc-badge-problem' }, trans._n('%1 problem', '%1 problems', problems.length))
      : null
  );
}

/** From this share of the window on, the meter says to compact (usage.FULL_AT). */
export const FULL_AT = 0.8;

/** `200k`, `1M`: a window as people say it (usage.window_label). */
export function windowLabel(window: number): string {
  const short = (n: number): string => String(Math.round(n * 10) / 10);
  if (window >= 1_000_000) {
    return `${short(window / 1_000_000)}M`;
  }
  if (window >= 1_000) {
    // a local model's binary sizes as people say them: 8,192 is 8k (usage.py's window_label)
    return `${window % 1024 === 0 ? window / 1024 : short(window / 1_000)}k`;
  }
  return String(window);
}

/** The context meter: a bar and `context 42% of 200k` (or the tokens, with no window). */
export function renderMeter(reading: ContextReading, trans: Translation): HTMLElement {
  const about = reading.exact ? '' : trans._p('about', '≈');
  if (reading.window === null) {
    return h('span', { class: 'jtc-meter', 'data-share': '' }, trans.__('context %1%2 tokens', about, reading.tokens.toLocaleString('en')));
  }
  const share = reading.tokens / reading.window;
  const percent = share > 0 && share < 0.01 ? trans.__('<1') : String(Math.round(share * 100));
  const text = trans.__('context %1%2% of %3', about, percent, windowLabel(reading.window));
  const full = share >= FULL_AT;
  return h(
    'span',
    {
      class: full ? 'jtc-meter jtc-meter-full' : 'jtc-meter',
      'data-share': share.toFixed(3),
      title: trans.__('%1 of %2 tokens in the model\'s context window', reading.tokens.toLocaleString('en'), reading.window.toLocaleString('en'))
    },
    h('span', { class: 'jtc-meter-bar', 'aria-hidden': 'true' }, h('span', { class: 'jtc-meter-fill', style: `width: ${Math.min(100, share * 100).toFixed(1)}%` })),
    h('span', { class: 'jtc-meter-text' }, full ? trans.__('%1: %2 makes room', text, '%chat compact') : text) // not for translation: a command's name
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
