/**
 * The `*.chat.jsonl` reader for the browser: the same tree and the same problems, in the
 * same words (`line N: <message>`), as `parse_session` in `jupyter_tree_chat/store.py`,
 * which the command line's `check` prints. Keep the two in step: the rules live there,
 * this is a mirror (tests/test_labextension.py compares them on a corpus of damaged files).
 *
 * Pure: bytes in, a `ChatSession` out. No DOM, no JupyterLab.
 */

// not for translation in this file: problems are the command line's words (store.py), word for word

import { isJSONSyntaxError, parseJSON, parseTagged, parseWithLoneSurrogates } from './json';
import { Grades, emptyGrades, takeGrade } from './grades';
import { PyDict, PyValue, pyEquals, pyRepr, pyStr, reprString } from './pyrepr';

/** A message node. `message` is Anthropic-shaped; `meta` holds what the model never sees. */
export interface ChatNode {
  id: string;
  parentId: string | null;
  message: Record<string, unknown>;
  meta: Record<string, unknown> | null;
  /** 1-based line in the file (0 when the node did not come from a file). */
  line: number;
}

/** Something wrong in a session file, at a 1-based line number. */
export interface Problem {
  line: number;
  message: string;
  /** where in another tool's JSON export (a conversation, a node), for a problem without a line */
  where?: string;
}

/** What a session file holds. `children` keys roots under `null`, in append order. */
export interface ChatSession {
  nodes: Map<string, ChatNode>;
  children: Map<string | null, string[]>;
  leaf: string | null;
  labels: Map<string, string>;
  /** ids whose branch a `hidden` record hides (the last record for an id wins) */
  hidden: Set<string>;
  /** grades and preferences (format/grades.ts): the latest word of each */
  grades: Grades;
  header: Record<string, unknown> | null;
  problems: Problem[];
}

/** `line N: message`, as the command line's `check` prints a problem. */
export function formatProblem(problem: Problem): string {
  return `line ${problem.line}: ${problem.message}`;
}

export function emptySession(): ChatSession {
  return {
    nodes: new Map(),
    children: new Map(),
    leaf: null,
    labels: new Map(),
    hidden: new Set(),
    grades: emptyGrades(),
    header: null,
    problems: []
  };
}

const own = (record: object, key: string): boolean =>
  Object.prototype.hasOwnProperty.call(record, key);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `_kind` in store.py: how a problem names a JSON value's type. */
function kindOf(value: unknown): string {
  if (Array.isArray(value)) {
    return 'an array';
  }
  switch (typeof value) {
    case 'string':
      return 'a string';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'a boolean';
    case 'object':
      return value === null ? 'null' : 'an object';
    default:
      return 'null';
  }
}

/** A line as Python holds it (int or float, key order), for problem messages. */
function taggedLine(text: string): PyDict {
  let value: unknown;
  try {
    value = parseTagged(text);
  } catch {
    value = parseWithLoneSurrogates(text, true);
  }
  return value as PyDict;
}

/** A field of a line as Python would print it with `{value!r}` (`None` when missing). */
function reprField(text: string, key: string, value: unknown): string {
  if (typeof value === 'string') {
    return reprString(value);
  }
  if (value === undefined || value === null) {
    return 'None';
  }
  return pyRepr(taggedLine(text).entries.get(key));
}

/** `_a(role)` in store.py: "an assistant", else "a <role>" with Python's `str()`. */
function aRole(text: string, value: unknown): string {
  if (value === 'assistant') {
    return 'an assistant';
  }
  if (typeof value === 'string') {
    return `a ${value}`;
  }
  const message = taggedLine(text).entries.get('message') as PyDict;
  return `a ${pyStr(message.entries.get('role') as PyValue | undefined)}`;
}

/** `message.role` as Python prints it with `{role!r}`. */
function reprRole(text: string, value: unknown): string {
  if (typeof value === 'string') {
    return reprString(value);
  }
  const message = taggedLine(text).entries.get('message') as PyDict;
  return pyRepr(message.entries.get('role'));
}

/**
 * `_odd_node` in store.py: a kept node whose role, content or meta the format does not
 * allow. The message stays as written; a meta that is not an object is dropped.
 */
function oddNodeProblems(
  text: string,
  nodeId: string,
  message: Record<string, unknown>,
  meta: unknown
): string[] {
  const name = reprString(nodeId);
  const found: string[] = [];
  if (!own(message, 'role')) {
    found.push(`node ${name}: message has no role (kept as written)`);
  } else if (message.role !== 'user' && message.role !== 'assistant') {
    const role = reprRole(text, message.role);
    found.push(`node ${name}: role ${role} is not 'user' or 'assistant' (kept as written)`);
  }
  if (!own(message, 'content')) {
    found.push(`node ${name}: message has no content (kept as written)`);
  } else if (typeof message.content !== 'string' && !Array.isArray(message.content)) {
    const kind = kindOf(message.content);
    found.push(`node ${name}: content is ${kind}, not a string or a list (kept as written)`);
  }
  if (meta !== undefined && meta !== null && !isRecord(meta)) {
    found.push(`node ${name}: meta is ${kindOf(meta)}, not an object (ignored)`);
  }
  return found;
}

/**
 * Why each orphan was not attached: a missing parent, its own parent, or a cycle among
 * orphans (each has one parent link, so following the links is a walk, not a search).
 */
function orphanProblems(orphans: Array<[number, string, string]>): Problem[] {
  const parentOf = new Map<string, string>();
  for (const [, id, parent] of orphans) {
    if (!parentOf.has(id)) {
      parentOf.set(id, parent);
    }
  }
  const inCycle = new Set<string>();
  const done = new Set<string>();
  for (const start of parentOf.keys()) {
    if (done.has(start)) {
      continue;
    }
    const walk: string[] = [];
    const onWalk = new Map<string, number>();
    let current: string | undefined = start;
    while (current !== undefined && parentOf.has(current) && !done.has(current)) {
      const seen = onWalk.get(current);
      if (seen !== undefined) {
        walk.slice(seen).forEach(id => inCycle.add(id));
        break;
      }
      onWalk.set(current, walk.length);
      walk.push(current);
      current = parentOf.get(current);
    }
    walk.forEach(id => done.add(id));
  }
  return orphans.map(([line, id, parent]) => {
    let message: string;
    if (parent === id) {
      message = `node ${reprString(id)} is its own parent, which would form a cycle (not attached)`;
    } else if (inCycle.has(id)) {
      message = `node ${reprString(id)}: parent ${reprString(parent)} would close a cycle (not attached)`;
    } else {
      message =
        `node ${reprString(id)} is an orphan: its parent ${reprString(parent)} ` +
        'has not appeared earlier (not attached)';
    }
    return { line, message };
  });
}

function whyNotANode(record: Record<string, unknown>): string {
  for (const key of ['id', 'parentId', 'message']) {
    if (!own(record, key)) {
      return `not a message record: no '${key}' field (ignored)`;
    }
  }
  if (!isRecord(record.message)) {
    return "not a message record: 'message' is not an object (ignored)";
  }
  return "not a message record: 'id' is not a non-empty string (ignored)";
}

function isBlank(bytes: Uint8Array): boolean {
  // Python's bytes.strip(): ASCII whitespace only
  return bytes.every(b => b === 0x20 || (b >= 0x09 && b <= 0x0d));
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** How to read the lines. */
export interface ParseOptions {
  /**
   * The lines were written by this project's own encoder from records it had read (an
   * exported page, jupyter_tree_chat/share/page.py): valid JSON that needs none of the
   * strict parser's checks, so the browser's `JSON.parse` reads them, many times faster.
   * A line it refuses still goes through the strict parser and is reported as usual.
   */
  written?: boolean;
}

function parseWritten(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return parseJSON(text);
  }
}

/**
 * Rebuild the tree from a file's bytes (or text), reporting every problem by line number.
 * Lines are split on `\n` only (U+2028 inside a string is not a line break).
 */
/** Why a batch record is skipped, as `_problem` in history/batch_record.py says it. */
function batchProblem(
  record: Record<string, unknown>,
  kind: string,
  plans: Set<string>
): string | null {
  const key = record.key;
  if (typeof key !== 'string' || !key) {
    return `${kind} record without a key (ignored)`;
  }
  const named = reprString(key);
  if (kind === 'batch') {
    if (plans.has(key)) {
      return `a second batch record for ${named} (ignored)`;
    }
    const requests = record.requests;
    const fits =
      typeof record.wire === 'string' &&
      typeof record.model === 'string' &&
      Array.isArray(record.variants) &&
      Array.isArray(requests) &&
      requests.every(
        r =>
          Array.isArray(r) &&
          r.length === 3 &&
          typeof r[0] === 'string' &&
          typeof r[1] === 'string' &&
          Number.isInteger(r[2])
      );
    return fits ? null : `batch record ${named} is not the format's (ignored)`;
  }
  if (!plans.has(key)) {
    return `${kind} record for unknown batch ${named} (ignored)`;
  }
  if (kind === 'batch_sent') {
    const held = record.requests;
    const fits = typeof record.id === 'string' && (held === undefined || held === null || Array.isArray(held));
    return fits ? null : `batch_sent record for ${named} is not the format's (ignored)`;
  }
  const failed = Object.prototype.hasOwnProperty.call(record, 'failed') ? record.failed : {};
  const fits =
    Array.isArray(record.done) &&
    typeof failed === 'object' &&
    failed !== null &&
    !Array.isArray(failed);
  return fits ? null : `batch_applied record for ${named} is not the format's (ignored)`;
}

export function parseSession(data: Uint8Array | string, options: ParseOptions = {}): ChatSession {
  const readLine = options.written ? parseWritten : parseJSON;
  let bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
  const session = emptySession();
  const { nodes, children, labels, problems } = session;
  const report = (line: number, message: string): void => {
    problems.push({ line, message });
  };
  let leaf: string | null = null;
  const orphans: Array<[number, string, string]> = [];
  const batches = new Set<string>(); // the keys of the batch plans read so far

  if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    report(1, 'starts with a UTF-8 byte order mark (ignored)');
    bytes = bytes.subarray(3);
  }
  const rawLines: Uint8Array[] = [];
  let start = 0;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] === 0x0a) {
      rawLines.push(bytes.subarray(start, i));
      start = i + 1;
    }
  }
  rawLines.push(bytes.subarray(start));
  let last = rawLines.length;
  if (rawLines[rawLines.length - 1].length === 0) {
    rawLines.pop(); // the file ends with a newline, as it should
    last = 0;
  }

  for (let index = 0; index < rawLines.length; index++) {
    const number = index + 1;
    let line = rawLines[index];
    if (line.length > 0 && line[line.length - 1] === 0x0d) {
      report(number, 'ends with CRLF (read as LF)');
      line = line.subarray(0, line.length - 1);
    }
    let text: string | undefined;
    let record: unknown;
    try {
      text = utf8.decode(line);
      record = readLine(text);
    } catch (error) {
      if (text !== undefined && !isJSONSyntaxError(error)) {
        throw error;
      }
      record = text === undefined ? null : parseWithLoneSurrogates(text);
      if (record !== null) {
        report(number, 'lone surrogate escapes (a broken emoji?) read as U+FFFD');
      } else if (isBlank(line)) {
        report(number, 'blank line (ignored)');
      } else if (number === last) {
        report(
          number,
          `torn last line: an incomplete record of ${line.length} bytes (ignored)`
        );
      } else if (text === undefined) {
        report(number, 'not valid UTF-8 (ignored)');
      } else {
        report(number, 'not valid JSON (ignored)');
      }
      if (record === null) {
        continue;
      }
    }
    if (!isRecord(record)) {
      report(number, `JSON but not a record: ${kindOf(record)} (ignored)`);
      continue;
    }
    const kind = own(record, 'type') ? record.type : null;
    if (kind === null) {
      const nodeId = record.id;
      const hasParent = own(record, 'parentId');
      const parent = record.parentId;
      const message = record.message;
      if (typeof nodeId !== 'string' || !nodeId || !hasParent || !isRecord(message)) {
        report(number, whyNotANode(record));
        continue;
      }
      const first = nodes.get(nodeId);
      if (first !== undefined) {
        report(
          number,
          `duplicate id ${reprString(nodeId)}, first on line ${first.line} (ignored)`
        );
        continue;
      }
      if (parent !== null) {
        if (typeof parent !== 'string') {
          report(
            number,
            `node ${reprString(nodeId)} has a parentId that is not a string (ignored)`
          );
          continue;
        }
        const parentNode = nodes.get(parent);
        if (parentNode === undefined) {
          orphans.push([number, nodeId, parent]);
          continue;
        }
        if (pyEquals(parentNode.message.role, message.role)) {
          const role = aRole(text!, message.role);
          report(
            number,
            `node ${reprString(nodeId)}: ${role} message under ${role} message (kept as written)`
          );
        }
      }
      const meta = record.meta;
      nodes.set(nodeId, {
        id: nodeId,
        parentId: parent,
        message,
        meta: isRecord(meta) ? meta : null,
        line: number
      });
      const siblings = children.get(parent);
      if (siblings === undefined) {
        children.set(parent, [nodeId]);
      } else {
        siblings.push(nodeId);
      }
      leaf = nodeId;
      for (const why of oddNodeProblems(text!, nodeId, message, meta)) {
        report(number, why);
      }
    } else if (kind === 'leaf') {
      const target = record.id;
      if (typeof target === 'string' && nodes.has(target)) {
        leaf = target;
      } else {
        report(
          number,
          `leaf record points at unknown node ${reprField(text!, 'id', target)} (ignored)`
        );
      }
    } else if (kind === 'label') {
      const target = record.id;
      const label = record.label;
      if (typeof target !== 'string' || !nodes.has(target)) {
        report(
          number,
          `label record for unknown node ${reprField(text!, 'id', target)} (ignored)`
        );
      } else if (typeof label !== 'string') {
        report(
          number,
          `label for ${reprString(target)} is ${kindOf(label)}, not a string (ignored)`
        );
      } else if (label) {
        labels.set(target, label);
      } else {
        labels.delete(target);
      }
    } else if (kind === 'hidden') {
      const target = record.id;
      const hidden = own(record, 'hidden') ? record.hidden : true;
      if (typeof target !== 'string' || !nodes.has(target)) {
        report(
          number,
          `hidden record for unknown node ${reprField(text!, 'id', target)} (ignored)`
        );
      } else if (typeof hidden !== 'boolean') {
        report(
          number,
          `hidden record for ${reprString(target)}: 'hidden' is ${kindOf(hidden)}, not a boolean (ignored)`
        );
      } else if (hidden) {
        session.hidden.add(target);
      } else {
        session.hidden.delete(target);
      }
    } else if (kind === 'grade' || kind === 'preference') {
      const why = takeGrade(session.grades, record, id => nodes.has(id), (field, value) =>
        reprField(text!, field, value)
      );
      if (why !== null) {
        report(number, why);
      }
    } else if (kind === 'batch' || kind === 'batch_sent' || kind === 'batch_applied') {
      // a vendor batch's plan, ids and applied results (docs/format.md, "Batch"): the
      // kernel's records, checked as batch_record.py checks them; the answers are nodes
      const why = batchProblem(record, kind, batches);
      if (why !== null) {
        report(number, why);
      } else if (kind === 'batch') {
        batches.add(record.key as string);
      }
    } else if (kind === 'session') {
      if (session.header === null) {
        session.header = record;
      } else {
        report(number, 'a second session header (ignored)');
      }
    } else {
      report(number, `unknown record type ${reprField(text!, 'type', kind)} (skipped)`);
    }
  }
  if (orphans.length) {
    problems.push(...orphanProblems(orphans));
    problems.sort((a, b) => a.line - b.line); // stable: a line's own problems keep their order
  }
  session.leaf = leaf;
  return session;
}
