/**
 * A row of an experiment (`meta.experiment`, docs/format.md): the mirror of
 * `experiment_of` and `experiment_problem` (history/experiment_record.py). A question
 * whose `meta.experiment` is not the format's is read as a plain question;
 * `experimentProblem` says why, in `check`'s words.
 *
 * Pure: a node's meta in, a typed value out.
 */

// not for translation in this file: problems are the command line's words, word for word

/** What made an experiment's question: its experiment, version, template and row. */
export interface Experiment {
  id: string;
  version: number;
  template: string;
  row: Record<string, unknown>;
  index: number;
}

const KINDS: Array<[keyof Experiment, string]> = [
  ['id', 'a string'],
  ['version', 'a whole number of 1 or more'],
  ['template', 'a string'],
  ['row', 'an object'],
  ['index', 'a whole number of 0 or more']
];

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function fits(name: keyof Experiment, found: unknown): boolean {
  if (name === 'id') {
    return typeof found === 'string' && found !== '';
  }
  if (name === 'template') {
    return typeof found === 'string';
  }
  if (name === 'row') {
    return isObject(found);
  }
  const least = name === 'version' ? 1 : 0;
  return typeof found === 'number' && Number.isInteger(found) && found >= least;
}

/** Why `value` is not a question's `meta.experiment`, or null if it is one. */
export function experimentProblem(value: unknown): string | null {
  if (!isObject(value)) {
    return 'meta.experiment is not an object (read as a plain question)';
  }
  for (const [name, kind] of KINDS) {
    if (!fits(name, value[name])) {
      return `meta.experiment.${name} is not ${kind} (read as a plain question)`;
    }
  }
  return null;
}

/** The experiment a question belongs to, or null (none, or not the format's). */
export function experimentOf(meta: Record<string, unknown> | null): Experiment | null {
  const found = meta === null ? undefined : meta.experiment;
  if (found === undefined || experimentProblem(found) !== null) {
    return null;
  }
  return found as unknown as Experiment;
}
