/**
 * Find a node in a session the browser holds whole (the viewer's file, an exported
 * page): the port of jupyter_tree_chat/share/find.py, so the search box there finds
 * what `%chat find` and `jupyter tree-chat find` find (tests/test_find_front_end.py
 * holds the two to one answer). The panel's session lives in the kernel: its search
 * box asks the kernel, which runs find.py itself.
 *
 * Every node's searchable text (the words, and marked apart: thinking, tool results,
 * tool calls) is pulled out once and kept lowered beside the tree; a literal search is
 * then one `includes` per node, so a keystroke over 100,000 nodes stays a few ms.
 */

// not for translation in this file: the kinds of text are keys (find.py's), shown through the views' own words
import { SessionTree } from './model';

/** Where in a message a match is (find.py's WHERE_ORDER, in that order). */
export type Where = 'text' | 'thinking' | 'tool result' | 'tool call';
const WHERE_ORDER: Where[] = ['text', 'thinking', 'tool result', 'tool call'];
const JOIN = '\u0000';

export interface FindQuery {
  text: string;
  regex: boolean;
  caseSensitive: boolean;
  /** user, assistant or tool (a tool's result); null: any */
  role: 'user' | 'assistant' | 'tool' | null;
  includeHidden: boolean;
}

/** The matching nodes in the tree's order, and how many hidden ones were left out. */
export interface FindResult {
  ids: string[];
  hidden: number;
  /** the query cannot run (a regular expression that does not compile): its words */
  error?: string;
}

/** Who answers a query: the browser itself (a file's source) or the kernel (the panel).
 * `folds` are the hidden branches the view folds away now (model.ts `hiddenBranches`). */
export interface Finder {
  find(query: FindQuery, folds: readonly string[]): FindResult | Promise<FindResult>;
  /** the search box was focused: a query is likely to come (the panel fetches the
   * kernel's text index now, so the first keys need not wait for it) */
  prepare?(): void;
}

type Message = Record<string, unknown>;

/** A message's searchable text, each piece with where it is (find.py's message_fields). */
export function messageFields(message: Message): Array<[Where, string]> {
  const content = message.content;
  if (typeof content === 'string') {
    return content ? [['text', content]] : [];
  }
  const found: Array<[Where, string]> = [];
  for (const block of Array.isArray(content) ? content : []) {
    if (typeof block !== 'object' || block === null || Array.isArray(block)) {
      continue;
    }
    const b = block as Record<string, unknown>;
    if (b.type === 'text' && typeof b.text === 'string' && b.text) {
      found.push(['text', b.text]);
    } else if (b.type === 'thinking' && typeof b.thinking === 'string' && b.thinking) {
      found.push(['thinking', b.thinking]);
    } else if (b.type === 'tool_result') {
      const text = resultText(b.content);
      if (text) {
        found.push(['tool result', text]);
      }
    } else if (b.type === 'tool_use') {
      const name = b.name === undefined ? '?' : String(b.name);
      found.push(['tool call', `${name} ${pythonJson(b.input ?? {})}`]);
    }
  }
  // a stable sort: the words first, then thinking, tool results, tool calls
  return found
    .map((pair, k) => ({ pair, k }))
    .sort((a, b) => WHERE_ORDER.indexOf(a.pair[0]) - WHERE_ORDER.indexOf(b.pair[0]) || a.k - b.k)
    .map(({ pair }) => pair);
}

function resultText(content: unknown): string {
  if (typeof content === 'string') {
    return content;
  }
  if (!Array.isArray(content)) {
    return '';
  }
  return content
    .filter(b => typeof b === 'object' && b !== null && (b as Message).type === 'text' && typeof (b as Message).text === 'string')
    .map(b => (b as Message).text as string)
    .join('\n');
}

/** JSON as Python's `json.dumps(value, ensure_ascii=False)` writes it (`{"a": 1, "b": [2, 3]}`). */
export function pythonJson(value: unknown): string {
  if (Array.isArray(value)) {
    return `[${value.map(pythonJson).join(', ')}]`;
  }
  if (typeof value === 'object' && value !== null) {
    return `{${Object.entries(value)
      .map(([key, item]) => `${JSON.stringify(key)}: ${pythonJson(item)}`)
      .join(', ')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** What `findNodes` searches: each node's fields and lowered text by its place in the
 * tree, brought up to the tree's size by `update` (a file's own, or the kernel's held by
 * the panel: panel/heldtexts.ts, which answers literal, case-blind queries alone). */
export interface Texts {
  readonly fields: ReadonlyArray<Array<[Where, string]>>;
  readonly lowered: readonly string[];
  update(tree: SessionTree): void;
}

/** Each node's fields and lowered text, by its place in the tree, built as it grows. */
export class TextIndex implements Texts {
  readonly fields: Array<Array<[Where, string]>> = [];
  readonly lowered: string[] = [];

  constructor(private readonly message: (id: string) => Message | undefined) {}

  update(tree: SessionTree): void {
    for (let i = this.fields.length; i < tree.size; i++) {
      const message = this.message(tree.ids[i]);
      const pieces = message ? messageFields(message) : [];
      this.fields.push(pieces);
      this.lowered.push(pieces.map(([, text]) => text).join(JOIN).toLowerCase());
    }
  }
}

/** The query as a RegExp (a literal escaped); a bad pattern throws its message. */
export function queryPattern(query: FindQuery): RegExp {
  const source = query.regex ? query.text : query.text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  return new RegExp(source, query.caseSensitive ? 'u' : 'iu');
}

/**
 * The nodes matching `query`, in the tree's order. `folded(i)` says whether node `i`
 * sits in a hidden branch the view folds away: such matches are counted, not listed,
 * unless `query.includeHidden`.
 */
export function findNodes(tree: SessionTree, index: Texts, query: FindQuery, folded: (i: number) => boolean): FindResult {
  if (!query.text) {
    return { ids: [], hidden: 0 };
  }
  let pattern: RegExp;
  try {
    pattern = queryPattern(query);
  } catch (error) {
    return { ids: [], hidden: 0, error: error instanceof Error ? error.message : String(error) };
  }
  index.update(tree);
  const literal = !query.regex && !query.caseSensitive;
  const needle = query.text.toLowerCase();
  const ids: string[] = [];
  let hidden = 0;
  for (let i = 0; i < tree.size; i++) {
    const matches = literal ? index.lowered[i].includes(needle) : located(index.fields[i], pattern);
    if (!matches || (query.role !== null && tree.roles[i] !== query.role)) {
      continue;
    }
    if (!query.includeHidden && folded(i)) {
      hidden++;
      continue;
    }
    ids.push(tree.ids[i]);
  }
  return { ids, hidden };
}

function located(pieces: Array<[Where, string]>, pattern: RegExp): boolean {
  return pieces.some(([, text]) => pattern.test(text));
}

/**
 * Which nodes are inside folded hidden branches: each node whose walk up meets one of
 * `folds` (the branch tops, model.ts `hiddenBranches`), marked in one pass in the
 * tree's order (a parent always comes before its children).
 */
export function foldedNodes(tree: SessionTree, folds: readonly string[]): Uint8Array {
  const inside = new Uint8Array(tree.size);
  if (!folds.length) {
    return inside;
  }
  for (const id of folds) {
    const i = tree.index.get(id);
    if (i !== undefined) {
      inside[i] = 1;
    }
  }
  for (let i = 0; i < tree.size; i++) {
    const parent = tree.parents[i];
    if (parent >= 0 && inside[parent]) {
      inside[i] = 1;
    }
  }
  return inside;
}
