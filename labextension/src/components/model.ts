/**
 * The one data model every component reads, whoever fills it: the kernel's rows
 * (panel/store.ts) or a parsed session file (components/filesource.ts: the viewer, a page).
 *
 * `SessionTree` keeps the tree as parallel arrays indexed by a node's place in append
 * order, so a 10,000-node session is a few arrays rather than 10,000 objects, and every
 * walk is a loop (sessions can be thousands of nodes deep). A node's full content may
 * come later (the panel fetches it when shown): `SessionSource.content` says what is
 * known and `requestContent` asks for the rest.
 */

import { Grades } from '../format/grades';
import { Problem } from '../format/parse';
import { Part } from './content';

export type Role = 'user' | 'assistant' | 'tool';

/** What a tree row and a compare header show of a reply before its content is known. */
export interface Summary {
  model: string | null;
  inputTokens: number | null;
  outputTokens: number | null;
  durationMs: number | null;
  interrupted: boolean;
  /** what the reply cost, as the kernel writes it (`$0.0135`); null when not known */
  cost: string | null;
}

/** How full the model's context window is on the current branch (the panel only). */
export interface ContextReading {
  tokens: number;
  /** the model's window in tokens; null when it is not known */
  window: number | null;
  /** the API's own count (else partly estimated from characters) */
  exact: boolean;
}

/** A node's content: what the conversation, the compare and the details show. */
export interface NodeContent {
  parts: Part[];
  meta: Record<string, unknown>;
  /** 1-based line in the session file (the viewer), else 0 */
  line: number;
  /** the message's `timestamp`, when it has one */
  timestamp: number | null;
}

/** A reply being written (the panel only). */
export interface Stream {
  parent: string;
  text: string;
  /** the model's thinking so far (it arrives before the text) */
  thinking: string;
  /** set when the reply ended: its stored node id (text == streamed), or the error */
  done: boolean;
  error?: string;
}

/** One answer of a fan-out being written (the panel only). */
export interface FanoutVariant {
  label: string;
  model: string;
  temperature: number | null;
  text: string;
  error?: string;
}

/** What a fan-out asks for: `n` samples of each model × temperature (empty: the default). */
export interface FanoutAsk {
  n: number;
  models: string[];
  temperatures: number[];
}

/** A fan-out being written: several answers to the question `parent` at once. */
export interface FanoutState {
  parent: string;
  variants: FanoutVariant[];
  /** every answer ended and was stored */
  ended: boolean;
}

/** What changed: `tree` nodes, leaf or labels; `texts` contents; `stream` / `delta` a reply;
 * `fanout` a fan-out's answers; `status` the status line; `context` the context meter. */
export type Change = 'tree' | 'texts' | 'stream' | 'delta' | 'fanout' | 'status' | 'context';

/** Where a view's data comes from. */
export interface SessionSource {
  readonly tree: SessionTree;
  readonly leaf: string | null;
  readonly title: string;
  readonly problems: readonly Problem[];
  readonly stream: Stream | null;
  /** the context window's use on the current branch, where the source knows it */
  readonly context?: ContextReading | null;
  /** a fan-out being written (the panel only) */
  readonly fanout?: FanoutState | null;
  /** ids whose branch a `hidden` record hides (views fold them away; nothing is deleted) */
  readonly hidden: ReadonlySet<string>;
  /** compaction root id -> the leaf it summarised (the picture draws the link) */
  readonly links: ReadonlyMap<string, string>;
  /** each answer's latest grades and every preference (format/grades.ts), where known */
  readonly grades?: Grades;
  label(id: string): string | undefined;
  content(id: string): NodeContent | undefined;
  /** Ask for the content of these nodes; a `texts` change follows when it arrives. */
  requestContent(ids: string[]): void;
  subscribe(listener: (what: Change) => void): () => void;
}

export class SessionTree {
  readonly ids: string[] = [];
  readonly parents: number[] = [];
  readonly roles: Role[] = [];
  readonly heads: string[] = [];
  readonly summaries: Array<Summary | null> = [];
  readonly children: number[][] = [];
  readonly roots: number[] = [];
  readonly index = new Map<string, number>();
  private leaves = 0;

  get size(): number {
    return this.ids.length;
  }

  /** Append a node under the node at `parent` (-1: a root); false if it cannot be added. */
  add(id: string, parent: number, role: Role, head: string, summary: Summary | null): boolean {
    if (this.index.has(id) || parent >= this.ids.length) {
      return false;
    }
    const i = this.ids.length;
    this.ids.push(id);
    this.parents.push(parent);
    this.roles.push(role);
    this.heads.push(head);
    this.summaries.push(summary);
    this.children.push([]);
    this.index.set(id, i);
    const siblings = parent < 0 ? this.roots : this.children[parent];
    if (parent < 0 || siblings.length) {
      this.leaves++; // a new branch end; under a leaf it only moves that end down
    }
    siblings.push(i);
    return true;
  }

  has(id: string | null): boolean {
    return id !== null && this.index.has(id);
  }

  role(id: string): Role {
    const i = this.index.get(id);
    return i === undefined ? 'user' : this.roles[i];
  }

  summary(id: string): Summary | null {
    const i = this.index.get(id);
    return i === undefined ? null : this.summaries[i];
  }

  parentOf(id: string): string | null {
    const i = this.index.get(id);
    return i === undefined || this.parents[i] < 0 ? null : this.ids[this.parents[i]];
  }

  /** The node and its siblings (children of the same parent), in append order. */
  siblings(id: string): string[] {
    const i = this.index.get(id);
    if (i === undefined) {
      return [];
    }
    const p = this.parents[i];
    return (p < 0 ? this.roots : this.children[p]).map(k => this.ids[k]);
  }

  childIds(id: string): string[] {
    const i = this.index.get(id);
    return i === undefined ? [] : this.children[i].map(k => this.ids[k]);
  }

  /** Root to `id`, walked upwards (empty if `id` is unknown). */
  pathTo(id: string | null): string[] {
    const path: string[] = [];
    let i = id === null ? undefined : this.index.get(id);
    while (i !== undefined && i >= 0) {
      path.push(this.ids[i]);
      i = this.parents[i];
    }
    return path.reverse();
  }

  /** The newest child at each step down to a leaf (where a branch's latest turn is). */
  deepestLeaf(id: string): string {
    let i = this.index.get(id);
    if (i === undefined) {
      return id;
    }
    while (this.children[i].length) {
      i = this.children[i][this.children[i].length - 1];
    }
    return this.ids[i];
  }

  /** Nodes without children: the branches' ends (counted as nodes are added). */
  leafCount(): number {
    return this.leaves;
  }
}

/** The node's 1-based position among its siblings and their number. */
export function siblingPlace(tree: SessionTree, id: string): { pos: number; count: number } {
  const siblings = tree.siblings(id);
  return { pos: siblings.indexOf(id) + 1, count: siblings.length };
}

/** A short id for display; the whole id goes in the element's title. */
export function shortId(id: string): string {
  return id.length > 8 ? id.slice(0, 8) : id;
}

/**
 * The hidden nodes whose branch a view folds away: off the kept paths (`keep`: the
 * current path, and the path a view shows) and not inside another hidden branch, which
 * already hides them (`hidden_branches` in jupyter_tree_chat/textview.py).
 */
export function hiddenBranches(tree: SessionTree, hidden: ReadonlySet<string>, keep: (id: string) => boolean): string[] {
  const found: string[] = [];
  for (const id of hidden) {
    if (!tree.has(id) || keep(id)) {
      continue;
    }
    let up = tree.parentOf(id);
    while (up !== null && !keep(up) && !hidden.has(up)) {
      up = tree.parentOf(up);
    }
    if (up === null || keep(up)) {
      found.push(id);
    }
  }
  return found;
}
