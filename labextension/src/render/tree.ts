/**
 * Pure questions about a parsed session, for the views: the path to a node, siblings and
 * a node's position among them, the text of a message. Iterative throughout: sessions can
 * be thousands of nodes deep.
 */

import { ChatNode, ChatSession, Problem, emptySession } from './format';

/** The node ids from the root down to `id` (empty if `id` is unknown). */
export function pathTo(session: ChatSession, id: string | null): string[] {
  const path: string[] = [];
  let current = id === null ? undefined : session.nodes.get(id);
  while (current !== undefined) {
    path.push(current.id);
    current = current.parentId === null ? undefined : session.nodes.get(current.parentId);
  }
  return path.reverse();
}

export function childrenOf(session: ChatSession, id: string | null): string[] {
  return session.children.get(id) ?? [];
}

/** The node and its siblings (children of the same parent), in append order. */
export function siblingsOf(session: ChatSession, id: string): string[] {
  const node = session.nodes.get(id);
  return node === undefined ? [] : childrenOf(session, node.parentId);
}

/** "2/3": the node's 1-based position among its siblings, or "" for an only child. */
export function siblingPosition(session: ChatSession, id: string): string {
  const siblings = siblingsOf(session, id);
  return siblings.length > 1 ? `${siblings.indexOf(id) + 1}/${siblings.length}` : '';
}

/** Follow the last child down from `id` (where a branch's newest turn is). */
export function deepestLeaf(session: ChatSession, id: string): string {
  let current = id;
  for (;;) {
    const kids = childrenOf(session, current);
    if (kids.length === 0) {
      return current;
    }
    current = kids[kids.length - 1];
  }
}

export function shortId(id: string, length = 8): string {
  return id.length > length ? id.slice(0, length) + '…' : id;
}

export function roleOf(node: ChatNode): string {
  const role = node.message.role;
  return typeof role === 'string' ? role : String(role ?? '?');
}

/** A content block as the views show it: text to render as Markdown, or a labelled extra. */
export interface Part {
  kind: 'text' | 'tool_use' | 'tool_result' | 'thinking' | 'other';
  title: string;
  text: string;
}

function stringify(value: unknown): string {
  if (typeof value === 'string') {
    return value;
  }
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

/** The parts of a message's content (a string, or a list of Anthropic content blocks). */
export function partsOf(message: Record<string, unknown>): Part[] {
  const content = message.content;
  if (typeof content === 'string') {
    return [{ kind: 'text', title: '', text: content }];
  }
  if (!Array.isArray(content)) {
    return content === undefined ? [] : [{ kind: 'other', title: 'content', text: stringify(content) }];
  }
  const parts: Part[] = [];
  for (const block of content) {
    if (typeof block === 'string') {
      parts.push({ kind: 'text', title: '', text: block });
      continue;
    }
    const b = (block ?? {}) as Record<string, unknown>;
    const type = typeof b.type === 'string' ? b.type : 'block';
    if (type === 'text') {
      parts.push({ kind: 'text', title: '', text: stringify(b.text ?? '') });
    } else if (type === 'tool_use') {
      parts.push({
        kind: 'tool_use',
        title: `tool use: ${stringify(b.name ?? '?')}`,
        text: stringify(b.input ?? {})
      });
    } else if (type === 'tool_result') {
      const inner = Array.isArray(b.content)
        ? partsOf({ content: b.content })
            .map(p => p.text)
            .join('\n')
        : stringify(b.content ?? '');
      parts.push({
        kind: 'tool_result',
        title: b.is_error === true ? 'tool result (error)' : 'tool result',
        text: inner
      });
    } else if (type === 'thinking' || type === 'redacted_thinking') {
      parts.push({ kind: 'thinking', title: type, text: stringify(b.thinking ?? '') });
    } else {
      const { type: _ignored, ...rest } = b;
      void _ignored;
      parts.push({ kind: 'other', title: type, text: stringify(rest) });
    }
  }
  return parts;
}

/** A message's text for one-line summaries and word diffs. */
export function plainText(message: Record<string, unknown>): string {
  return partsOf(message)
    .map(p => (p.kind === 'text' ? p.text : `[${p.title}] ${p.text}`))
    .join('\n');
}

export function firstLine(message: Record<string, unknown>, max = 80): string {
  const text = plainText(message).trim();
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > max ? line.slice(0, max - 1) + '…' : line;
}

/**
 * A session as plain JSON-able data (what the anywidget's `tree` trait carries). The
 * Python side may send this shape; `fromTreeData` rebuilds the maps the views use.
 */
export interface TreeData {
  nodes: Array<{
    id: string;
    parentId: string | null;
    message: Record<string, unknown>;
    meta?: Record<string, unknown> | null;
    line?: number;
  }>;
  leaf?: string | null;
  labels?: Record<string, string>;
  problems?: Problem[];
  header?: Record<string, unknown> | null;
}

/** Rebuild a session from `TreeData`; nodes must come parents first (as in a file). */
export function fromTreeData(data: TreeData | null | undefined): ChatSession {
  const session = emptySession();
  if (!data) {
    return session;
  }
  for (const raw of data.nodes ?? []) {
    if (session.nodes.has(raw.id)) {
      continue;
    }
    if (raw.parentId !== null && !session.nodes.has(raw.parentId)) {
      continue;
    }
    session.nodes.set(raw.id, {
      id: raw.id,
      parentId: raw.parentId,
      message: raw.message ?? {},
      meta: raw.meta ?? null,
      line: raw.line ?? 0
    });
    const siblings = session.children.get(raw.parentId);
    if (siblings) {
      siblings.push(raw.id);
    } else {
      session.children.set(raw.parentId, [raw.id]);
    }
  }
  session.leaf = data.leaf ?? null;
  for (const [id, label] of Object.entries(data.labels ?? {})) {
    session.labels.set(id, label);
  }
  session.problems = [...(data.problems ?? [])];
  session.header = data.header ?? null;
  return session;
}
