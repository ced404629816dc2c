/**
 * The kernel's text index (share/find.py's: each node's searchable text, lowered), held
 * by the panel so that its find box answers a keystroke without a round trip to the
 * kernel. A literal, case-blind query (what the box asks unless told otherwise) is one
 * `includes` per node, the rule find.py and components/find.ts share; anything else
 * (a regular expression, case kept), or a tree with a node whose text is not here yet,
 * is asked of the kernel as before. The index is asked for once, when the find box is
 * focused (before the first key: typing need not wait for it) or at the first query, and
 * again for the nodes added since when a query finds some missing; a session too big to
 * send (widget/sharing.py `HELD_LIMIT`) stays searched in the kernel.
 */

import { FindQuery, FindResult, Texts, Where, findNodes, foldedNodes } from '../components/find';
import { SessionTree } from '../components/model';

/** The kernel's answer to `{a: 'find', held: FROM}`. */
export interface HeldMessage {
  t: 'held';
  req: number;
  from?: number;
  ids?: string[];
  texts?: string[];
  over?: 1;
}

export class HeldTexts implements Texts {
  /** never read: only literal, case-blind queries are answered here (find.ts reads `lowered` for them) */
  readonly fields: ReadonlyArray<Array<[Where, string]>> = [];
  /** each node's lowered text, by its place in the panel's tree */
  readonly lowered: string[] = [];
  private byId = new Map<string, string>();
  /** how many of the kernel's index entries are here (the index only grows) */
  private received = 0;
  private asking = false;
  private over = false;

  /** `ask(from)`: send the kernel `{a: 'find', held: from}` */
  constructor(private readonly ask: (from: number) => void) {}

  /** The answer, if it can be given here; null: ask the kernel. */
  find(tree: SessionTree, query: FindQuery, folds: readonly string[]): FindResult | null {
    if (this.over || query.regex || query.caseSensitive) {
      return null;
    }
    this.update(tree);
    if (this.lowered.length < tree.size) {
      this.request();
      return null;
    }
    const inside = foldedNodes(tree, folds);
    return findNodes(tree, this, query, i => inside[i] === 1);
  }

  /** Ask for the texts not here yet, before any query needs them (the box was focused). */
  prefetch(tree: SessionTree): void {
    this.update(tree);
    if (!this.over && this.lowered.length < tree.size) {
      this.request();
    }
  }

  /** Line the texts up with the tree's nodes appended since (stops at one not held). */
  update(tree: SessionTree): void {
    for (let i = this.lowered.length; i < tree.size; i++) {
      const text = this.byId.get(tree.ids[i]);
      if (text === undefined) {
        return;
      }
      this.lowered.push(text);
    }
  }

  take(message: HeldMessage): void {
    this.asking = false;
    if (message.over) {
      this.over = true;
      this.byId.clear();
      return;
    }
    const from = message.from ?? 0;
    const ids = message.ids ?? [];
    const texts = message.texts ?? [];
    if (from > this.received) {
      return; // not what follows what is here: the next query asks again
    }
    ids.forEach((id, k) => this.byId.set(id, texts[k] ?? ''));
    this.received = Math.max(this.received, from + ids.length);
  }

  private request(): void {
    if (!this.asking) {
      this.asking = true;
      this.ask(this.received);
    }
  }
}
