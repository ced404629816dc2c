/**
 * Sibling answers side by side, each rendered as Markdown (through the Markdown
 * component: sanitized, never raw source), headed by its position, model, temperature,
 * tokens and time; a Differences toggle marks what each answer says that the others do
 * not, on the rendered text (words of prose, lines of code: diff.ts), and is off until
 * switched on. Columns wrap to rows above three. The same view shows a fan-out while its
 * answers stream (`renderLiveCompare`, the panel) and the stored answers afterwards.
 *
 * One mechanism with the experiment grid (experiment.ts): answers side by side are an
 * experiment of one row (`oneRow`), each column one of the grid's cells, and a grid
 * line's versions open here as their side-by-side view.
 */

import { gradeStrip } from './grading';
import { headLine, questionAsTyped } from './chips';
import { Navigate, button } from './controls';
import { codeUnits, proseUnits, uniqueMarks } from './diff';
import { h } from './dom';
import { GridCell, oneRow } from './experiment';
import { Markdown } from './markdown';
import { FanoutState, NodeContent, SessionSource, Summary, shortId, siblingPlace } from './model';
import { plainText } from './content';
import { Translation } from './translate';
import { interruptedBadge, joinItems, numbersLine, position } from './vocabulary';

export const MAX_COMPARE = 12;
export const MAX_PER_ROW = 3;

export interface CompareOptions {
  /** what choosing a column does: the panel switches the session to it, the viewer shows it */
  navigate: Navigate;
  markdown: Markdown;
  /** the differences are marked (the caller keeps this across redraws) */
  differences: boolean;
  toggleDifferences(): void;
  choose(id: string): void;
  close(): void;
  /** where `id` stands among its siblings (default: from the source's tree) */
  place?(id: string): { pos: number; count: number };
  /** a pick between two answers (the panel): `id` beat `other`, or a tie */
  prefer?(id: string, other: string, tie: boolean): void;
}

/** Columns a row: all of them up to three, then as even as rows of three allow. */
export function perRow(count: number): number {
  return count <= MAX_PER_ROW ? Math.max(count, 1) : Math.ceil(count / Math.ceil(count / MAX_PER_ROW));
}

/** The compare section for `ids` (the first is the reference: the one shown). */
export function renderCompare(source: SessionSource, ids: string[], trans: Translation, options: CompareOptions): HTMLElement {
  const shown = ids.slice(0, MAX_COMPARE);
  source.requestContent(shown.filter(id => !source.content(id)));
  const columns = grid(shown.length);
  const bodies: Array<Promise<HTMLElement | null>> = [];
  (oneRow(source.tree, shown).cells as GridCell[]).forEach(({ id, summary }, k) => {
    const content = source.content(id);
    const place = options.place ? options.place(id) : siblingPlace(source.tree, id);
    const choose =
      k === 0
        ? h('span', { class: 'jtc-badge' }, trans.__('shown'))
        : options.navigate === 'switch'
          ? button(trans.__('Use this'), { act: 'switch', id, title: trans.__('Continue from this answer: its branch becomes the current one') })
          : button(trans.__('Show this'), { act: 'select', id, title: trans.__('Show the path to this version') });
    const facts = factsOf(summary, content);
    const header = h(
      'div',
      { class: 'jtc-compare-header' },
      h('span', { class: 'jtc-position' }, position(place.pos, place.count, trans)),
      h('span', { class: 'jtc-id', title: id }, shortId(id)),
      facts.model ? h('span', { class: 'jtc-model' }, facts.model) : null,
      facts.temperature !== null ? h('span', { class: 'jtc-temperature' }, trans.__('temperature %1', facts.temperature)) : null,
      h('span', { class: 'jtc-meta' }, numbersLine(facts, trans) || trans.__('—')),
      facts.interrupted ? interruptedBadge(trans) : null,
      choose,
      ...pickButtons(source, id, k === 0 ? null : shown[0], trans, options),
      source.tree.role(id) === 'assistant' ? gradeStrip(source.grades, id, trans, false) : null
    );
    const body = h('div', { class: 'jtc-compare-text' });
    if (content) {
      const holder = h('div', { class: 'jtc-markdown' });
      body.append(holder);
      // the answers are compared, not what the model thought before them (diff.py does the same)
      const answer = content.parts.filter(part => part.kind !== 'thinking');
      // versions of a question: each as typed, its substitutions as chips (chips.ts)
      const typed = source.tree.role(id) === 'user' ? questionAsTyped(content.meta, trans) : null;
      bodies.push(options.markdown.fill(holder, typed ?? plainText(answer, trans)).then(() => holder));
    } else {
      body.append(h('div', { class: 'jtc-pending' }, trans.__('loading…')));
      bodies.push(Promise.resolve(null));
    }
    columns.append(h('div', { class: `jtc-compare-column${k === 0 ? ' jtc-reference' : ''}`, 'data-id': id }, header, body));
  });
  if (options.differences) {
    void Promise.all(bodies).then(found => {
      if (found.every(body => body !== null)) {
        markDifferences(found as HTMLElement[]);
      }
    });
  }
  const caption =
    sideBySide(shown.map(id => source.tree.role(id)), trans) +
    (ids.length > shown.length ? ' ' + trans.__('(first %1 of %2)', shown.length, ids.length) : '');
  const element = section(caption, columns, trans, options);
  const asked = askedLine(source, shown[0], trans);
  if (asked) {
    element.querySelector('.jtc-section-head')?.after(asked);
  }
  return element;
}

/** `2 answers side by side`, `2 questions side by side` (sibling questions: versions of
 * one question, as a search can land on), or `2 versions side by side` for a mix. */
function sideBySide(roles: string[], trans: Translation): string {
  const count = roles.length;
  if (roles.every(role => role === 'user')) {
    return trans._n('%1 question side by side', '%1 questions side by side', count);
  }
  if (roles.every(role => role === 'assistant')) {
    return trans._n('%1 answer side by side', '%1 answers side by side', count);
  }
  return trans._n('%1 version side by side', '%1 versions side by side', count);
}

/** Over answers side by side: the question they answer, as typed (chips.ts `headLine`). */
function askedLine(source: SessionSource, id: string | undefined, trans: Translation): HTMLElement | null {
  const tree = source.tree;
  let up = id !== undefined && tree.role(id) === 'assistant' ? tree.parentOf(id) : null;
  while (up !== null && tree.role(up) !== 'user') {
    up = tree.parentOf(up); // above a tool round
  }
  const i = up === null ? undefined : tree.index.get(up);
  if (i === undefined) {
    return null;
  }
  return h('div', { class: 'jtc-compare-asked' }, h('span', { class: 'jtc-hint' }, trans.__('answers to')), headLine(tree.heads[i]));
}

/** A fan-out while it streams: one column per answer, its text rendered as it comes. */
export function renderLiveCompare(fanout: FanoutState, trans: Translation, markdown: Markdown): HTMLElement {
  const columns = grid(fanout.variants.length);
  fanout.variants.forEach((variant, k) => {
    const holder = h('div', { class: 'jtc-markdown' });
    markdown.fill(holder, variant.text || '…', { cache: false });
    const state = variant.error
      ? h('span', { class: 'jtc-status-error' }, trans.__('failed: %1', variant.error))
      : h('span', { class: 'jtc-meta' }, fanout.ended ? trans.__('done') : trans.__('writing…'));
    const facts: string[] = [variant.model];
    if (variant.temperature !== null) {
      facts.push(trans.__('temperature %1', variant.temperature));
    }
    columns.append(
      h(
        'div',
        { class: 'jtc-compare-column jtc-streaming', 'data-variant': k },
        h(
          'div',
          { class: 'jtc-compare-header' },
          h('span', { class: 'jtc-position' }, position(k + 1, fanout.variants.length, trans)),
          h('span', { class: 'jtc-model' }, joinItems(facts, trans)),
          state
        ),
        h('div', { class: 'jtc-compare-text' }, holder)
      )
    );
  });
  const caption = trans._n('%1 answer, writing side by side', '%1 answers, writing side by side', fanout.variants.length);
  return h(
    'section',
    { class: 'jtc-compare jtc-live', 'aria-label': trans.__('Compare answers') },
    h('div', { class: 'jtc-section-head' }, h('h3', { class: 'jtc-section-title' }, caption)),
    columns
  );
}

function grid(count: number): HTMLElement {
  return h('div', { class: 'jtc-compare-columns', style: `--jtc-columns: ${perRow(count)}` });
}

function section(caption: string, columns: HTMLElement, trans: Translation, options: CompareOptions): HTMLElement {
  const head = h(
    'div',
    { class: 'jtc-section-head' },
    h('h3', { class: 'jtc-section-title' }, caption),
    button(trans.__('Differences'), {
      act: 'differences',
      title: trans.__('Mark what each answer says that the others do not'),
      attrs: { 'aria-pressed': String(options.differences) }
    }),
    button(trans.__('Close'), { act: 'close', title: trans.__('Close the comparison (Escape)') })
  );
  const element = h('section', { class: 'jtc-compare', 'aria-label': trans.__('Compare answers') }, head, columns);
  element.addEventListener('click', event => {
    const target = (event.target as HTMLElement).closest<HTMLElement>('[data-act]');
    const act = target?.dataset.act;
    if (act === 'close') {
      options.close();
    } else if (act === 'differences') {
      options.toggleDifferences();
    } else if (target?.dataset.id && (act === 'switch' || act === 'select')) {
      options.choose(target.dataset.id);
    } else if (target?.dataset.id && target.dataset.other && (act === 'prefer' || act === 'tie')) {
      options.prefer?.(target.dataset.id, target.dataset.other, act === 'tie');
    }
  });
  return element;
}

/** "Better" and "Tie" against the shown answer (the panel, two answers). */
function pickButtons(source: SessionSource, id: string, other: string | null, trans: Translation, options: CompareOptions): HTMLElement[] {
  if (other === null || !options.prefer || source.tree.role(id) !== 'assistant' || source.tree.role(other) !== 'assistant') {
    return [];
  }
  const attrs = { 'data-other': other };
  return [
    button(trans.__('Better'), { act: 'prefer', id, look: 'quiet', attrs, title: trans.__('This answer is better than the shown one (a preference, kept in the file)') }),
    button(trans.__('Tie'), { act: 'tie', id, look: 'quiet', attrs, title: trans.__('Neither answer is better') })
  ];
}

interface Facts extends Summary {
  temperature: number | null;
}

/** What a column's header says: the tree's summary, completed by the full meta once known. */
function factsOf(summary: Summary | null, content: NodeContent | undefined): Facts {
  const meta = content?.meta ?? {};
  const usage = (typeof meta.usage === 'object' && meta.usage !== null ? meta.usage : {}) as Record<string, unknown>;
  const number = (value: unknown): number | null => (typeof value === 'number' ? value : null);
  return {
    model: summary?.model ?? (typeof meta.model === 'string' ? meta.model : null),
    inputTokens: summary?.inputTokens ?? number(usage.input_tokens),
    outputTokens: summary?.outputTokens ?? number(usage.output_tokens),
    durationMs: summary?.durationMs ?? number(meta.duration_ms),
    interrupted: Boolean(summary?.interrupted) || meta.interrupted === true,
    cost: summary?.cost ?? null,
    temperature: number(meta.temperature)
  };
}

// -- marking the differences on the rendered text ----------------------------------------

type Place = { kind: 'words'; node: Text; count: number } | { kind: 'lines'; code: HTMLElement; count: number };

/** The units of a rendered answer in document order, and where each run of them sits. */
function unitsOf(body: HTMLElement): { units: string[]; places: Place[] } {
  const units: string[] = [];
  const places: Place[] = [];
  const stack: Node[] = [body];
  while (stack.length) {
    const node = stack.pop()!;
    if (node instanceof HTMLElement && node.localName === 'pre') {
      const code = node.querySelector<HTMLElement>('code') ?? node;
      const lines = codeUnits(code.textContent ?? '');
      units.push(...lines);
      places.push({ kind: 'lines', code, count: lines.length });
    } else if (node.nodeType === Node.TEXT_NODE) {
      const words = proseUnits(node.textContent ?? '');
      units.push(...words);
      places.push({ kind: 'words', node: node as Text, count: words.length });
    } else {
      const children = Array.from(node.childNodes);
      for (let k = children.length - 1; k >= 0; k--) {
        stack.push(children[k]);
      }
    }
  }
  return { units, places };
}

function mark(text: string): HTMLElement {
  return h('mark', { class: 'jtc-diff' }, text);
}

/** Mark, in each rendered body, the units no other body has (see diff.ts). */
export function markDifferences(bodies: HTMLElement[]): void {
  const found = bodies.map(unitsOf);
  const marks = uniqueMarks(found.map(f => f.units));
  found.forEach(({ places }, b) => {
    let at = 0;
    for (const place of places) {
      const own = marks[b].slice(at, at + place.count);
      at += place.count;
      if (!own.some(Boolean)) {
        continue;
      }
      const next = own[Symbol.iterator]();
      if (place.kind === 'words') {
        const pieces = (place.node.textContent ?? '').split(/(\s+)/);
        const fragment = document.createDocumentFragment();
        for (const piece of pieces) {
          fragment.append(piece && !/^\s+$/.test(piece) && next.next().value ? mark(piece) : piece);
        }
        place.node.replaceWith(fragment);
      } else {
        const lines = (place.code.textContent ?? '').split('\n');
        const shown: Array<string | HTMLElement> = [];
        lines.forEach((line, k) => {
          shown.push(line.trim() && next.next().value ? mark(line) : line);
          if (k < lines.length - 1) {
            shown.push('\n');
          }
        });
        place.code.replaceChildren(...shown);
      }
    }
  });
}
