/**
 * An experiment (`%%chat --over`) as a grid: one line per row, one column per version,
 * each cell the first line of that version's first answer to that row with its numbers;
 * choosing a cell opens its branch (the panel switches to it, the viewer shows it). The
 * rows' inputs are chips. A filter box hides the lines that do not contain what is typed
 * (the row's inputs and the answers' first lines), without drawing anything again.
 *
 * Everything from a row or a model goes in as text (`h` makes text nodes): nothing here
 * is parsed as HTML. The rows' questions are siblings; their `meta.experiment`
 * (format/experiment.ts) says which row and version each is.
 */

import { Navigate } from './controls';
import { h, listen } from './dom';
import { SessionSource, shortId } from './model';
import { Translation } from './translate';
import { numbersLine } from './vocabulary';
import { Experiment, experimentOf } from '../format/experiment';
import { gradeStrip, graderNames, sortByGrade } from './grading';

/** The most lines drawn; the frame (`experiment_frame()`) has them all. */
export const MAX_GRID_ROWS = 2000;

export interface GridOptions {
  navigate: Navigate;
  /** the filter's text, kept by the caller across redraws */
  filter: string;
  setFilter(text: string): void;
  choose(id: string): void;
  close(): void;
  /** grade an answer 1–5 by hand (the panel; absent: the grades are shown read-only) */
  grade?: (id: string, score: number) => void;
  /** the grader the lines are sorted by ('' keeps the rows' order), kept by the caller */
  sort: string;
  setSort(grader: string): void;
}

/** The experiment `id`'s question belongs to, or null (not one, or its siblings' content
 * not here yet: asked for, and a `texts` change draws it). */
export function experimentAt(source: SessionSource, id: string): Experiment | null {
  const content = source.content(id);
  if (!content) {
    source.requestContent([id]);
    return null;
  }
  return experimentOf(content.meta);
}

interface Line {
  index: number;
  row: Record<string, unknown>;
  versions: Map<number, string>;
}

/** The grid section for the experiment of question `id` (empty if it is none). */
export function renderExperimentGrid(source: SessionSource, id: string, trans: Translation, options: GridOptions): HTMLElement | null {
  const mine = experimentAt(source, id);
  if (!mine) {
    return null;
  }
  const { tree } = source;
  const siblings = tree.siblings(id);
  source.requestContent(siblings.filter(s => !source.content(s)));
  const lines = new Map<number, Line>();
  const versions = new Set<number>();
  for (const question of siblings) {
    const content = source.content(question);
    const about = content ? experimentOf(content.meta) : null;
    if (!about || about.id !== mine.id) {
      continue;
    }
    versions.add(about.version);
    let line = lines.get(about.index);
    if (!line) {
      line = { index: about.index, row: about.row, versions: new Map() };
      lines.set(about.index, line);
    }
    if (!line.versions.has(about.version)) {
      line.versions.set(about.version, question);
    }
  }
  const order = [...versions].sort((a, b) => a - b);
  const head = h(
    'tr',
    {},
    h('th', {}, '#'),
    h('th', {}, trans.__('inputs')),
    ...order.map(v => h('th', {}, trans.__('version %1', v)))
  );
  const body = h('tbody', {});
  const firstAnswer = (question: string | undefined): string | undefined => (question ? tree.childIds(question)[0] : undefined);
  const answersOf = (line: Line): string[] =>
    order.map(v => firstAnswer(line.versions.get(v))).filter((a): a is string => a !== undefined);
  const inOrder = [...lines.values()].sort((a, b) => a.index - b.index);
  const graders = graderNames(source.grades, inOrder.flatMap(answersOf));
  const sortBy = graders.includes(options.sort) ? options.sort : '';
  const sorted = sortByGrade(inOrder, answersOf, source.grades, sortBy).slice(0, MAX_GRID_ROWS);
  const searchable: Array<[HTMLElement, string]> = [];
  for (const line of sorted) {
    const chips = Object.entries(line.row).map(([name, value]) =>
      h('span', { class: 'jtc-chip', title: `${name}: ${text(value)}` }, `${name}: ${text(value)}`)
    );
    const cells = order.map(version => {
      const question = line.versions.get(version);
      const answer = question ? tree.childIds(question)[0] : undefined;
      if (!answer) {
        return h('td', { class: 'jtc-grid-empty' }, question ? trans.__('no answer') : '');
      }
      const first = tree.heads[tree.index.get(answer) ?? -1] ?? '';
      const summary = tree.summary(answer);
      return h(
        'td',
        {},
        h(
          'button',
          {
            class: 'jtc-grid-answer',
            'data-act': options.navigate,
            'data-id': answer,
            title: options.navigate === 'switch' ? trans.__('Continue from this answer: its branch becomes the current one') : trans.__('Show the path to this version')
          },
          first || shortId(answer)
        ),
        h('div', { class: 'jtc-grid-numbers' }, [summary?.model ?? '', numbersLine(summary, trans)].filter(Boolean).join(' · ')),
        summary?.interrupted ? h('div', { class: 'jtc-grid-failed' }, trans.__('interrupted')) : null,
        gradeStrip(source.grades, answer, trans, options.grade !== undefined)
      );
    });
    const tr = h('tr', { class: 'jtc-grid-row', 'data-row': line.index }, h('td', {}, String(line.index + 1)), h('td', {}, ...chips), ...cells);
    searchable.push([tr, tr.textContent!.toLowerCase()]);
    body.append(tr);
  }
  const filter = h('input', {
    class: 'jtc-grid-filter',
    type: 'search',
    placeholder: trans.__('Filter rows'),
    'aria-label': trans.__('Filter the rows of the experiment'),
    value: options.filter
  }) as HTMLInputElement;
  const count = h('span', { class: 'jtc-grid-count' });
  const apply = (): void => {
    const wanted = filter.value.trim().toLowerCase();
    let shown = 0;
    for (const [tr, words] of searchable) {
      const hide = wanted !== '' && !words.includes(wanted);
      if (tr.hidden !== hide) {
        tr.hidden = hide;
      }
      shown += hide ? 0 : 1;
    }
    count.textContent = trans.__('%1 of %2 rows', shown, searchable.length);
  };
  apply();
  const section = h(
    'section',
    { class: 'jtc-experiment-grid-view', 'aria-label': trans.__('Experiment') },
    h(
      'div',
      { class: 'jtc-compare-bar' },
      h('strong', {}, trans.__('Experiment %1', shortId(mine.id))),
      filter,
      count,
      graders.length
        ? h(
            'label',
            { class: 'jtc-grid-sort-label' },
            trans.__('Sort by'),
            ' ',
            h(
              'select',
              { class: 'jtc-grid-sort', 'aria-label': trans.__('Sort the rows by a grade') },
              h('option', { value: '' }, trans.__('row')),
              ...graders.map(g => h('option', { value: g, ...(g === sortBy ? { selected: '' } : {}) }, g === 'grade' ? trans.__('grade') : g))
            )
          )
        : null,
      h('button', { class: 'jtc-button jtc-quiet', 'data-act': 'close-grid' }, trans.__('Close'))
    ),
    h('table', { class: 'jtc-experiment-grid' }, h('thead', {}, head), body)
  );
  const sortBox = section.querySelector<HTMLSelectElement>('.jtc-grid-sort');
  if (sortBox) {
    listen(sortBox, { change: () => options.setSort(sortBox.value) });
  }
  listen(filter, {
    input: () => {
      options.setFilter(filter.value);
      apply();
    }
  });
  listen(section, {
    keydown: event => {
      // 1–5 on a focused answer (or one of its stars) grades it, as a click on a star
      const key = (event as KeyboardEvent).key;
      const cell = (event.target as HTMLElement).closest<HTMLElement>('[data-id]');
      if (options.grade && cell?.dataset.id && /^[1-5]$/.test(key)) {
        event.preventDefault();
        options.grade(cell.dataset.id, Number(key));
      }
    },
    click: event => {
      const target = (event.target as HTMLElement).closest<HTMLElement>('[data-act]');
      if (!target) {
        return;
      }
      if (target.dataset.act === 'close-grid') {
        options.close();
      } else if (target.dataset.act === 'grade' && target.dataset.id && options.grade) {
        options.grade(target.dataset.id, Number(target.dataset.score));
      } else if (target.dataset.id) {
        options.choose(target.dataset.id);
      }
    }
  });
  return section;
}

function text(value: unknown): string {
  if (value === null || value === undefined) {
    return '';
  }
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}
