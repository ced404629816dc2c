/**
 * What the last answer on a path saw: a context budget may have left the start of the
 * path out of its request, and the answer's `meta.context` says so (`from`: the first
 * node sent; `skipped`: exchanges left out after it; `summary`: the compaction sent in
 * their place). The conversation greys the messages that were not sent. The same for the
 * panel and the viewer: both read the answer's meta as the file holds it.
 */

import { SessionSource } from './model';

export interface Unseen {
  /** the answer whose request is described */
  answer: string;
  /** the messages above it that its request left out */
  ids: Set<string>;
  sent: number;
  exchanges: number;
}

interface ContextMeta {
  from: string | null;
  dropped: number;
  exchanges: number;
  skipped?: string[];
  summary?: string;
}

function isContextMeta(value: unknown): value is ContextMeta {
  if (typeof value !== 'object' || value === null) {
    return false;
  }
  const meta = value as Record<string, unknown>;
  return (typeof meta.from === 'string' || meta.from === null) && typeof meta.dropped === 'number' && typeof meta.exchanges === 'number';
}

/** The part of `path` the last answer on it did not see; null if it saw it all (or its
 * content is not known yet: the panel fetches it, and redraws when it comes). */
export function unseenAbove(source: SessionSource, path: readonly string[]): Unseen | null {
  let at = path.length - 1;
  while (at >= 0 && source.tree.role(path[at]) !== 'assistant') {
    at--;
  }
  if (at < 0) {
    return null;
  }
  const answer = path[at];
  const context = source.content(answer)?.meta.context;
  if (!isContextMeta(context)) {
    return null;
  }
  const from = context.from === null ? at : path.indexOf(context.from);
  if (from < 0 || from > at) {
    return null;
  }
  const ids = new Set(path.slice(0, from));
  if (context.summary) {
    ids.delete(context.summary); // its summary was sent, first
  }
  for (const id of Array.isArray(context.skipped) ? context.skipped : []) {
    if (typeof id === 'string') {
      ids.add(id);
    }
  }
  return { answer, ids, sent: context.exchanges - context.dropped, exchanges: context.exchanges };
}
