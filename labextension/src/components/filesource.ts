/**
 * A parsed `*.chat.jsonl` file (format/parse.ts) as the components' data model: the
 * source of the JupyterLab viewer (viewer/) and of an exported page (page/). Everything
 * is known at once (no content to fetch, no reply streaming); `load` replaces it when
 * the file changed on disk.
 */

import { Grades } from '../format/grades';
import { typedHead } from './chips';
import { FindQuery, FindResult, Finder, TextIndex, findNodes, foldedNodes } from './find';
import { NodeContent, Role, SessionSource, SessionTree, Change, Summary } from './model';
import { firstLine, isToolResult, partsOf } from './content';
import { Translation } from './translate';
import { ChatNode, ChatSession, Problem, emptySession } from '../format/parse';

function roleOf(node: ChatNode): Role {
  if (node.message.role === 'assistant') {
    return 'assistant';
  }
  return isToolResult(node.message) ? 'tool' : 'user';
}

function numberOrNull(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** What a row shows of a reply: its model, tokens, time, whether it was cut short. */
function summaryOf(node: ChatNode): Summary | null {
  const meta = node.meta;
  if (!meta || node.message.role !== 'assistant') {
    return null;
  }
  const usage = typeof meta.usage === 'object' && meta.usage !== null ? (meta.usage as Record<string, unknown>) : {};
  return {
    model: typeof meta.model === 'string' ? meta.model : null,
    inputTokens: numberOrNull(usage.input_tokens),
    outputTokens: numberOrNull(usage.output_tokens),
    durationMs: numberOrNull(meta.duration_ms),
    interrupted: meta.interrupted === true,
    cost: null // prices live in the kernel (jupyter_tree_chat/models.py)
  };
}

export class FileSource implements SessionSource, Finder {
  tree = new SessionTree();
  title = '';
  readonly stream = null;
  private session: ChatSession = emptySession();
  private contents = new Map<string, NodeContent>();
  private compactions = new Map<string, string>();
  private readonly listeners = new Set<(what: Change) => void>();
  private index: TextIndex | null = null;

  constructor(private readonly trans: Translation) {}

  get leaf(): string | null {
    return this.session.leaf;
  }

  get problems(): readonly Problem[] {
    return this.session.problems;
  }

  /** The parsed file as shown now. */
  get parsed(): ChatSession {
    return this.session;
  }

  /** Show this file's session (named `title`). */
  load(session: ChatSession, title: string): void {
    const tree = new SessionTree();
    const contents = new Map<string, NodeContent>();
    const compactions = new Map<string, string>();
    for (const node of session.nodes.values()) {
      const from = node.meta?.compacted_from;
      if (node.parentId === null && typeof from === 'string') {
        compactions.set(node.id, from);
      }
      // the reader keeps a node only after its parent, so each parent is already a row
      const parent = node.parentId === null ? -1 : tree.index.get(node.parentId) ?? -1;
      const parts = partsOf(node.message, node.meta?.tool_names);
      const role = roleOf(node);
      const typed = role === 'user' ? typedHead(node.meta, this.trans) : null; // as typed, with chips
      tree.add(node.id, parent, role, typed ?? firstLine(parts, this.trans), summaryOf(node));
      const timestamp = node.message.timestamp;
      contents.set(node.id, {
        parts,
        meta: node.meta ?? {},
        line: node.line,
        timestamp: typeof timestamp === 'number' ? timestamp : null
      });
    }
    this.session = session;
    this.tree = tree;
    this.contents = contents;
    this.compactions = compactions;
    this.title = title;
    this.index = null;
    this.emit('tree');
  }

  /** The nodes matching `query` (components/find.ts), the file's messages searched whole. */
  find(query: FindQuery, folds: readonly string[]): FindResult {
    const nodes = this.session.nodes;
    this.index ??= new TextIndex(id => nodes.get(id)?.message);
    const inside = foldedNodes(this.tree, folds);
    return findNodes(this.tree, this.index, query, i => inside[i] === 1);
  }

  get grades(): Grades {
    return this.session.grades;
  }

  get hidden(): ReadonlySet<string> {
    return this.session.hidden;
  }

  get links(): ReadonlyMap<string, string> {
    return this.compactions;
  }

  label(id: string): string | undefined {
    return this.session.labels.get(id);
  }

  content(id: string): NodeContent | undefined {
    return this.contents.get(id);
  }

  requestContent(): void {
    // everything is known from the file
  }

  subscribe(listener: (what: Change) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(what: Change): void {
    for (const listener of Array.from(this.listeners)) {
      listener(what);
    }
  }
}
