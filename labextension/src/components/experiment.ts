/**
 * An experiment (`%%chat --over`) as a grid: one line per row, one column per version,
 * each cell the first line of that version's first answer to that row with its numbers;
 * choosing a cell opens its branch (the panel switches to it, the viewer shows it). The
 * rows' inputs are chips. A filter box hides the lines that do not contain what is typed
 * (the row's inputs and the answers' first lines and numbers). Only the lines in view are
 * drawn (rowwindow.ts), so a keystroke costs what it shows, not the 2,000 lines there are.
 *
 * Everything from a row or a model goes in as text (`h` makes text nodes): nothing here
 * is parsed as HTML. The rows' questions are siblings; their `meta.experiment`
 * (format/experiment.ts) says which row and version each is.
 */

import { Navigate } from './controls';
import { h, listen } from './dom';
import { SessionSource, SessionTree, Summary, shortId } from './model';
import { Translation } from './translate';
import { numbersLine } from './vocabulary';
import { Experiment, experimentOf } from '../format/experiment';
import { Grades } from '../format/grades';
import { gradeStrip, graderNames, sortByGrade } from './grading';
import { RowWindow, WindowPlace, newPlace } from './rowwindow';

/** The most lines drawn; the frame (`experiment_frame()`) has them all. */
export const MAX_GRID_ROWS = 2000;

export interface GridOptions {
  navigate: Navigate;
  /** the filter's text, kept by the caller across redraws */
  filter: string;
  setFilter(text: string): void;
  /** where the grid was scrolled and its lines' heights (rowwindow.ts), kept by the caller
   * across redraws as the filter is: a redrawn grid opens where it was */
  place?: WindowPlace;
  choose(id: string): void;
  /** a line's answers side by side (compare.ts); absent: no Side by side button */
  compare?(ids: string[]): void;
  /** absent: no Close button (a cell's grid stays) */
  close?(): void;
  /** each answer's grades (format/grades.ts), where the source has them */
  grades?: Grades;
  /** grade an answer 1–5 by hand (the panel; absent: the grades are shown read-only) */
  grade?: (id: string, score: number) => void;
  /** the grader the lines are sorted by ('' keeps the rows' order), kept by the caller;
   * absent: no Sort by */
  sort?: string;
  setSort?(grader: string): void;
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

/** One answer of the grid: its id, its first line and its numbers (a compare column's
 * record too: compare.ts draws one line of cells side by side). */
export interface GridCell {
  id: string;
  head: string;
  summary: Summary | null;
}

/** Node `id` as a cell, from the tree alone. */
export function cellOf(tree: SessionTree, id: string): GridCell {
  return { id, head: tree.heads[tree.index.get(id) ?? -1] ?? '', summary: tree.summary(id) };
}

/** Answers side by side as what they are, an experiment of one row (a fan-out, a
 * question's versions): one line, a cell each, in the order given (compare.ts). */
export function oneRow(tree: SessionTree, ids: string[]): GridLine {
  return { index: 0, row: {}, cells: ids.map(id => cellOf(tree, id)) };
}

/** The answers of a grid line, version by version (what its side-by-side view shows). */
export function lineAnswers(line: GridLine): string[] {
  return line.cells.flatMap(cell => (cell !== null && cell !== 'none' ? [cell.id] : []));
}

/** One row: its place, its inputs, and per version its answer (`null`: no question of
 * that version for this row; `'none'`: asked, no answer). */
export interface GridLine {
  index: number;
  row: Record<string, unknown>;
  cells: Array<GridCell | 'none' | null>;
}

/** An experiment as the grid draws it (the kernel sends the same for a cell's grid). */
export interface GridData {
  experiment: string;
  versions: number[];
  lines: GridLine[];
}

/** The grid of the experiment of question `id`, from the session's tree and contents. */
export function gridData(source: SessionSource, id: string): GridData | null {
  const mine = experimentAt(source, id);
  if (!mine) {
    return null;
  }
  const { tree } = source;
  const siblings = tree.siblings(id);
  source.requestContent(siblings.filter(s => !source.content(s)));
  const found = new Map<number, { row: Record<string, unknown>; versions: Map<number, string> }>();
  const versions = new Set<number>();
  for (const question of siblings) {
    const content = source.content(question);
    const about = content ? experimentOf(content.meta) : null;
    if (!about || about.id !== mine.id) {
      continue;
    }
    versions.add(about.version);
    let line = found.get(about.index);
    if (!line) {
      line = { row: about.row, versions: new Map() };
      found.set(about.index, line);
    }
    if (!line.versions.has(about.version)) {
      line.versions.set(about.version, question);
    }
  }
  const order = [...versions].sort((a, b) => a - b);
  const lines = [...found.entries()]
    .sort((a, b) => a[0] - b[0])
    .slice(0, MAX_GRID_ROWS)
    .map(([index, line]): GridLine => ({
      index,
      row: line.row,
      cells: order.map(version => {
        const question = line.versions.get(version);
        if (!question) {
          return null;
        }
        const answer = tree.childIds(question)[0];
        return answer ? cellOf(tree, answer) : 'none';
      })
    }));
  return { experiment: mine.id, versions: order, lines };
}

/** The grid section for the experiment of question `id` (null if it is none). */
export function renderExperimentGrid(source: SessionSource, id: string, trans: Translation, options: GridOptions): HTMLElement | null {
  const data = gridData(source, id);
  return data ? renderGrid(data, trans, options) : null;
}

/** The grid section for `data`. */
export function renderGrid(data: GridData, trans: Translation, options: GridOptions): HTMLElement {
  const head = h(
    'tr',
    {},
    h('th', {}, '#'),
    h('th', {}, trans.__('inputs')),
    ...data.versions.map(v => h('th', {}, trans.__('version %1', v)))
  );
  const body = h('tbody', {});
  const sideBySide = new Map<number, string[]>();
  const answersOf = (line: GridLine): string[] =>
    line.cells.flatMap(cell => (cell === null || cell === 'none' ? [] : [cell.id]));
  const graders = options.setSort ? graderNames(options.grades, data.lines.flatMap(answersOf)) : [];
  const sortBy = graders.includes(options.sort ?? '') ? (options.sort ?? '') : '';
  const lines = sortByGrade(data.lines, answersOf, options.grades, sortBy);
  // each line's words as it shows them, lowered: what the filter looks in
  const graded = gradedAnswers(options.grades);
  const words = lines.map(line => lineWords(line, trans, options.grades, graded).toLowerCase());
  const byIndex = new Map(lines.map(line => [line.index, line]));
  const drawLine = (index: number): HTMLElement => {
    const line = byIndex.get(index)!;
    const chips = Object.entries(line.row).map(([name, value]) => h('span', { class: 'jtc-chip', title: chipText(name, value) }, chipText(name, value)));
    const cells = line.cells.map(cell => {
      if (cell === null || cell === 'none') {
        return h('td', { class: 'jtc-grid-empty' }, cell === 'none' ? trans.__('no answer') : '');
      }
      return h(
        'td',
        {},
        h(
          'button',
          {
            class: 'jtc-grid-answer',
            'data-act': options.navigate,
            'data-id': cell.id,
            title: options.navigate === 'switch' ? trans.__('Continue from this answer: its branch becomes the current one') : trans.__('Show the path to this version')
          },
          cell.head || shortId(cell.id)
        ),
        h('div', { class: 'jtc-grid-numbers' }, cellNumbers(cell, trans)),
        cell.summary?.interrupted ? h('div', { class: 'jtc-grid-failed' }, trans.__('interrupted')) : null,
        options.grades ? gradeStrip(options.grades, cell.id, trans, options.grade !== undefined) : null
      );
    });
    const number = h('td', {}, String(line.index + 1));
    if (sideBySide.has(line.index)) {
      const title = trans.__("This row's versions side by side, with their differences");
      // a glyph, the words its name: the number's column is narrow
      const attrs = { class: 'jtc-button jtc-quiet jtc-grid-compare', 'data-act': 'row-compare', title, 'aria-label': trans.__('Side by side') };
      number.append(h('button', attrs, '⇆'));
    }
    return h('tr', { class: 'jtc-grid-row', 'data-row': line.index }, number, h('td', {}, ...chips), ...cells);
  };
  for (const line of lines) {
    const answers = lineAnswers(line);
    if (options.compare && answers.length > 1) {
      sideBySide.set(line.index, answers);
    }
  }
  const filter = h('input', {
    class: 'jtc-grid-filter',
    type: 'search',
    placeholder: trans.__('Filter rows'),
    'aria-label': trans.__('Filter the rows of the experiment'),
    value: options.filter
  }) as HTMLInputElement;
  const count = h('span', { class: 'jtc-grid-count' });
  const table = h('table', { class: 'jtc-experiment-grid' }, h('thead', {}, head), body);
  const section = h(
    'section',
    { class: 'jtc-experiment-grid-view', 'aria-label': trans.__('Experiment') },
    h(
      'div',
      { class: 'jtc-compare-bar' },
      h('strong', {}, trans.__('Experiment %1', shortId(data.experiment))),
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
      options.close ? h('button', { class: 'jtc-button jtc-quiet', 'data-act': 'close-grid' }, trans.__('Close')) : null
    ),
    table
  );
  // only the lines in view are drawn (rowwindow.ts): a keystroke costs the lines it shows
  const place = options.place ?? newPlace(data.experiment);
  if (place.of !== data.experiment) {
    Object.assign(place, newPlace(data.experiment)); // another experiment's grid was there
  }
  const drawn = new RowWindow(section, body, 2 + data.versions.length, drawLine, place);
  const apply = (): void => {
    const wanted = filter.value.trim().toLowerCase();
    const shown: number[] = [];
    words.forEach((said, k) => {
      if (!wanted || said.includes(wanted)) {
        shown.push(lines[k].index);
      }
    });
    drawn.show(shown);
    table.setAttribute('aria-rowcount', String(shown.length + 1));
    count.textContent = trans.__('%1 of %2 rows', shown.length, lines.length);
  };
  apply();
  const sortBox = section.querySelector<HTMLSelectElement>('.jtc-grid-sort');
  if (sortBox) {
    listen(sortBox, { change: () => options.setSort?.(sortBox.value) });
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
        options.close?.();
      } else if (target.dataset.act === 'row-compare') {
        options.compare?.(sideBySide.get(Number(target.closest<HTMLElement>('tr')?.dataset.row)) ?? []);
      } else if (target.dataset.act === 'grade' && target.dataset.id && options.grade) {
        options.grade(target.dataset.id, Number(target.dataset.score));
      } else if (target.dataset.id) {
        options.choose(target.dataset.id);
      }
    }
  });
  return section;
}

/** A row's input as its chip says it. */
function chipText(name: string, value: unknown): string {
  return `${name}: ${text(value)}`;
}

/** An answer's model and numbers, as its cell says them. */
function cellNumbers(cell: GridCell, trans: Translation): string {
  return [cell.summary?.model ?? '', numbersLine(cell.summary, trans)].filter(Boolean).join(' · ');
}

/** The answers that have a grade or took part in a preference (their strip has words). */
function gradedAnswers(grades: Grades | undefined): Set<string> {
  const found = new Set<string>(grades?.latest.keys() ?? []);
  for (const [better, worse] of grades?.preferences.values() ?? []) {
    found.add(better);
    found.add(worse);
  }
  return found;
}

/** A line's words as its row shows them (what `tr.textContent` says, in pieces), built
 * from the line without drawing it: the filter looks in these. */
function lineWords(line: GridLine, trans: Translation, grades: Grades | undefined, graded: Set<string>): string {
  const words = [String(line.index + 1), ...Object.entries(line.row).map(([name, value]) => chipText(name, value))];
  for (const cell of line.cells) {
    if (cell === 'none') {
      words.push(trans.__('no answer'));
    } else if (cell !== null) {
      words.push(cell.head || shortId(cell.id), cellNumbers(cell, trans));
      if (cell.summary?.interrupted) {
        words.push(trans.__('interrupted'));
      }
      if (graded.has(cell.id)) {
        words.push(gradeStrip(grades, cell.id, trans, false).textContent ?? '');
      }
    }
  }
  return words.join('\n');
}

function text(value: unknown): string {
  if (value === null || value === undefined) {
    return '';
  }
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}
