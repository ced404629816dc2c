/**
 * Grades and preferences (`grade` and `preference` records, docs/format.md): the mirror
 * of `Grades.take`, `grade_problem` and `preference_problem`
 * (history/grade_record.py). Regrading appends; the latest grade of an answer by a
 * grader wins, and the latest preference of a pair.
 *
 * Pure: records in, the latest word of each out.
 */

// not for translation in this file: problems are the command line's words, word for word

/** The latest grade of one answer by one grader. */
export interface Grade {
  grader: string;
  by: string;
  score: number | boolean | null;
  scale: [number, number] | null;
  note: string | null;
  error: string | null;
}

/** What a file's grade and preference records say. */
export interface Grades {
  /** answer id → grader → its latest grade */
  latest: Map<string, Map<string, Grade>>;
  /** "a b" (the pair's ids sorted) → [better, worse, tie] */
  preferences: Map<string, [string, string, boolean]>;
}

export const HAND = 'grade';
const BY = ['hand', 'code', 'model'];

export function emptyGrades(): Grades {
  return { latest: new Map(), preferences: new Map() };
}

const isNumber = (value: unknown): value is number =>
  typeof value === 'number' && Number.isFinite(value);

type Repr = (field: string, value: unknown) => string;

function gradeProblem(record: Record<string, unknown>, known: (id: string) => boolean, repr: Repr): string | null {
  const target = record.id;
  if (typeof target !== 'string' || !known(target)) {
    return `grade record for unknown node ${repr('id', target)} (ignored)`;
  }
  const node = repr('id', target);
  const grader = record.grader;
  const by = 'by' in record ? record.by : 'hand';
  const score = 'score' in record ? record.score : null;
  if (typeof grader !== 'string' || !grader) {
    return `grade of ${node}: 'grader' is not a name (ignored)`;
  }
  if (typeof by !== 'string' || !BY.includes(by)) {
    return `grade of ${node}: 'by' is not one of hand, code, model (ignored)`;
  }
  if (score === null && typeof record.error !== 'string') {
    return `grade of ${node}: no score and no error (ignored)`;
  }
  if (score !== null && typeof score !== 'boolean' && !isNumber(score)) {
    return `grade of ${node}: 'score' is not a number or a boolean (ignored)`;
  }
  const scale = record.scale;
  if (scale !== undefined && scale !== null && !(Array.isArray(scale) && scale.length === 2 && scale.every(isNumber))) {
    return `grade of ${node}: 'scale' is not [low, high] (ignored)`;
  }
  for (const name of ['note', 'error']) {
    if (name in record && typeof record[name] !== 'string') {
      return `grade of ${node}: '${name}' is not a string (ignored)`;
    }
  }
  const judge = record.judge;
  if ('judge' in record && (typeof judge !== 'object' || judge === null || Array.isArray(judge))) {
    return `grade of ${node}: 'judge' is not an object (ignored)`;
  }
  return null;
}

function preferenceProblem(record: Record<string, unknown>, known: (id: string) => boolean, repr: Repr): string | null {
  for (const field of ['better', 'worse']) {
    const value = record[field];
    if (typeof value !== 'string' || !known(value)) {
      return `preference record for unknown node ${repr(field, value)} (ignored)`;
    }
  }
  if (record.better === record.worse) {
    return `preference of ${repr('better', record.better)} over itself (ignored)`;
  }
  if ('tie' in record && typeof record.tie !== 'boolean') {
    return `preference of ${repr('better', record.better)}: 'tie' is not a boolean (ignored)`;
  }
  return null;
}

/** Keep a `grade` or `preference` record, or say why it is skipped. */
export function takeGrade(grades: Grades, record: Record<string, unknown>, known: (id: string) => boolean, repr: Repr): string | null {
  if (record.type === 'grade') {
    const why = gradeProblem(record, known, repr);
    if (why === null) {
      const id = record.id as string;
      const scale = Array.isArray(record.scale) ? (record.scale as [number, number]) : null;
      let mine = grades.latest.get(id);
      if (!mine) {
        mine = new Map();
        grades.latest.set(id, mine);
      }
      mine.set(record.grader as string, {
        grader: record.grader as string,
        by: typeof record.by === 'string' ? record.by : 'hand',
        score: (record.score ?? null) as number | boolean | null,
        scale,
        note: typeof record.note === 'string' ? record.note : null,
        error: typeof record.error === 'string' ? record.error : null
      });
    }
    return why;
  }
  const why = preferenceProblem(record, known, repr);
  if (why === null) {
    const better = record.better as string;
    const worse = record.worse as string;
    grades.preferences.set([better, worse].sort().join(' '), [better, worse, record.tie === true]);
  }
  return why;
}

/** An answer's preference wins (a tie half a win) and how many it took part in. */
export function winsOf(grades: Grades, id: string): [number, number] {
  let won = 0;
  let played = 0;
  for (const [better, worse, tie] of grades.preferences.values()) {
    if (better === id || worse === id) {
      played += 1;
      won += tie ? 0.5 : better === id ? 1 : 0;
    }
  }
  return [won, played];
}

/** A grade as a person reads it: ★★★★☆ on 1–5, 👍/👎 on 0–1, else `3 of 0–10`. */
export function gradeText(grade: Grade): string {
  const score = grade.score;
  if (score === null) {
    return '⚠';
  }
  if (typeof score === 'boolean') {
    return score ? '✓' : '✗';
  }
  const [low, high] = grade.scale ?? [1, 5];
  if (low === 0 && high === 1) {
    return score >= 1 ? '👍' : score <= 0 ? '👎' : String(score);
  }
  if (low === 1 && high === 5 && Number.isInteger(score)) {
    return '★'.repeat(score) + '☆'.repeat(5 - score);
  }
  return `${score} (${low}–${high})`;
}

/** The panel's synced `grades` trait (widget/grading.py's `grades_payload`) as `Grades`. */
export function gradesFromPayload(sent: unknown): Grades {
  const grades = emptyGrades();
  if (typeof sent !== 'object' || sent === null) {
    return grades;
  }
  const { latest, preferences } = sent as { latest?: Record<string, Record<string, Partial<Grade>>>; preferences?: unknown[] };
  for (const [id, by] of Object.entries(latest ?? {})) {
    const mine = new Map<string, Grade>();
    for (const [grader, found] of Object.entries(by ?? {})) {
      mine.set(grader, {
        grader,
        by: found.by ?? 'hand',
        score: found.score ?? null,
        scale: found.scale ?? null,
        note: found.note ?? null,
        error: found.error ?? null
      });
    }
    grades.latest.set(id, mine);
  }
  for (const found of preferences ?? []) {
    if (Array.isArray(found) && found.length === 3) {
      const [better, worse, tie] = found as [string, string, boolean];
      grades.preferences.set([better, worse].sort().join(' '), [better, worse, tie === true]);
    }
  }
  return grades;
}
