/**
 * The browser side of one widget model: a typed mirror of the synced traits, and a store
 * that applies the kernel's small custom messages (see jupyter_tree_chat/widget/protocol.py).
 *
 * One store per model, made in `initialize`, so two views of the same widget share it
 * and a message is applied once. Views never change the tree: they call `act`, the
 * kernel runs the Session action, and its events come back here.
 */

// -- the synced traits (keep in step with jupyter_tree_chat/widget/widgets.py) -----------------

/** `[model, input_tokens, output_tokens, duration_ms, interrupted]` of a reply. */
export type MetaSummary = [string | null, number | null, number | null, number | null, 0 | 1];
/** `[id, parent_index, role, head, meta]`; role `u` user, `a` assistant, `t` tool results. */
export type Row = [string, number, 'u' | 'a' | 't', string, MetaSummary | null];

export interface TurnSide {
  id: string;
  /** 1-based place among its siblings, their number, and their ids in order */
  pos: number;
  count: number;
  sibs: string[];
}
export interface TurnInfo {
  q: TurnSide & { head: string };
  r: (TurnSide & { parent: string; meta: MetaSummary | null }) | null;
  /** the reply the cell itself printed */
  shown: string | null;
  onPath: boolean;
}

export interface Traits {
  /** one per widget: the key of its store in the browser */
  uid: string;
  mode: 'panel' | 'turn';
  busy: boolean;
  error: string;
  /** panel */
  nodes: Row[];
  labels: Record<string, string>;
  leaf: string | null;
  title: string;
  /** turn control */
  turn: TurnInfo;
}

/** The part of anywidget's model API this widget uses. */
export interface WidgetModel {
  get<K extends keyof Traits>(name: K): Traits[K];
  on(event: string, callback: (...args: any[]) => void): void;
  off(event: string, callback: (...args: any[]) => void): void;
  send(content: unknown): void;
}

// -- messages ------------------------------------------------------------------------

export type KernelMessage =
  | { t: 'n'; r: Row; s?: 1; i?: number }
  | { t: 'rows'; from: number; rows: Row[] }
  | { t: 's'; p: string }
  | { t: 'd'; x: string }
  | { t: 'e'; p: string; err?: string }
  | { t: 'texts'; req?: number; texts: Record<string, FullText> }
  | { t: 'ack'; req: number }
  | { t: 'done'; req: number; err?: string; busy?: 1 }
  | { t: 'note'; level: 'info' | 'warning' | 'error'; x: string };

export interface FullText {
  text: string;
  meta: Record<string, unknown>;
}

export type Action =
  | { a: 'retry'; id: string }
  | { a: 'edit'; id: string; text: string }
  | { a: 'switch'; id: string; deepest?: boolean }
  | { a: 'label'; id: string; label: string };

/**
 * What a view says when an action is refused because a reply is being written in this
 * session (kept in step with BUSY_TEXT in jupyter_tree_chat/widget/widgets.py).
 */
export const BUSY_TEXT =
  'Busy: a reply is being written in this session (a %%chat cell or another view); ' +
  'wait for it to finish, then try again.';

/** The title of Retry / Edit while they are disabled (a reply is being written). */
export const WAIT_TITLE = 'A reply is being written in this session; wait for it to finish';

/** After this long without an `ack`, the kernel is busy (a cell is running). */
export const BUSY_AFTER_MS = 800;

export interface Stream {
  parent: string;
  text: string;
  /** set when the reply ended: its stored node id (text == streamed), or the error */
  done: boolean;
  error?: string;
}

export interface Note {
  level: 'info' | 'warning' | 'error';
  text: string;
}

/**
 * The tree as the browser keeps it: arrays indexed like the kernel's rows, the children
 * of each node in append order, and full texts once fetched.
 */
export class Store {
  readonly ids: string[] = [];
  readonly parents: number[] = [];
  readonly roles: string[] = [];
  readonly heads: string[] = [];
  readonly metas: Array<MetaSummary | null> = [];
  readonly index = new Map<string, number>();
  readonly children: number[][] = [];
  readonly roots: number[] = [];
  readonly texts = new Map<string, FullText>();
  stream: Stream | null = null;
  notes: Note[] = [];
  /** actions sent and not yet picked up by the kernel */
  waiting = new Map<number, number>();
  /** actions picked up and not finished */
  running = new Set<number>();
  kernelBusy = false;
  actionError = '';
  /** the last action was refused: a reply is being written (`actionError` is BUSY_TEXT) */
  actionBusy = false;

  private nextReq = 1;
  private requested = new Set<string>();
  private listeners = new Set<(what: string) => void>();
  private busyTimer: ReturnType<typeof setTimeout> | null = null;
  private rowsAsked = false;

  constructor(readonly model: WidgetModel) {
    if (model.get('mode') === 'panel') {
      for (const row of model.get('nodes') ?? []) {
        this.addRow(row);
      }
      // rows added while this front end was loading were announced to nobody: catch up
      this.requestRows();
    }
  }

  // -- reading -------------------------------------------------------------------------

  get size(): number {
    return this.ids.length;
  }

  get leaf(): string | null {
    return this.model.get('leaf') ?? null;
  }

  get labels(): Record<string, string> {
    return this.model.get('labels') ?? {};
  }

  parentOf(id: string): string | null {
    const i = this.index.get(id);
    if (i === undefined || this.parents[i] < 0) {
      return null;
    }
    return this.ids[this.parents[i]];
  }

  siblings(id: string): string[] {
    const i = this.index.get(id);
    if (i === undefined) {
      return [id];
    }
    const p = this.parents[i];
    return (p < 0 ? this.roots : this.children[p]).map(k => this.ids[k]);
  }

  childIds(id: string): string[] {
    const i = this.index.get(id);
    return i === undefined ? [] : this.children[i].map(k => this.ids[k]);
  }

  /** Root to `id`, walked upwards (no recursion: paths can be thousands deep). */
  pathTo(id: string | null): string[] {
    const path: string[] = [];
    let i = id === null ? undefined : this.index.get(id);
    while (i !== undefined && i >= 0) {
      path.push(this.ids[i]);
      i = this.parents[i];
    }
    return path.reverse();
  }

  /** The newest child at each step down to a leaf (what `switch` lands on). */
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

  text(id: string): FullText | undefined {
    return this.texts.get(id);
  }

  // -- kernel -> store -----------------------------------------------------------------

  addRow(row: Row): void {
    const [id, parent, role, head, meta] = row;
    if (this.index.has(id) || parent >= this.ids.length) {
      return;
    }
    const i = this.ids.length;
    this.ids.push(id);
    this.parents.push(parent);
    this.roles.push(role);
    this.heads.push(head);
    this.metas.push(meta);
    this.children.push([]);
    this.index.set(id, i);
    (parent < 0 ? this.roots : this.children[parent]).push(i);
  }

  handle(message: KernelMessage): void {
    switch (message.t) {
      case 'n': {
        if (message.s === 1 && this.stream) {
          this.texts.set(message.r[0], { text: this.stream.text, meta: {} });
        }
        if (this.model.get('mode') === 'panel') {
          if (message.i !== undefined && message.i > this.size) {
            this.requestRows(); // a row was missed: its parent numbers would be wrong
          } else {
            this.addRow(message.r);
          }
        }
        this.emit('tree');
        break;
      }
      case 'rows':
        this.rowsAsked = false;
        message.rows.forEach((row, k) => {
          if (message.from + k === this.size) {
            this.addRow(row);
          }
        });
        this.emit('tree');
        break;
      case 's':
        this.stream = { parent: message.p, text: '', done: false };
        this.emit('stream');
        break;
      case 'd':
        if (this.stream) {
          this.stream.text += message.x;
          this.emit('delta');
        }
        break;
      case 'e':
        if (this.stream) {
          this.stream.done = true;
          this.stream.error = message.err;
        }
        this.emit('stream');
        break;
      case 'texts':
        for (const [id, full] of Object.entries(message.texts)) {
          this.texts.set(id, full);
          this.requested.delete(id);
        }
        this.emit('texts');
        break;
      case 'ack':
        if (this.waiting.delete(message.req)) {
          this.running.add(message.req); // an action (text and rows requests are not kept)
        }
        this.updateBusy();
        break;
      case 'done': {
        // only an action's end says how it went, not a text or rows request's
        const acted = this.waiting.delete(message.req) || this.running.delete(message.req);
        if (acted) {
          this.actionError = message.err ?? '';
          this.actionBusy = message.busy === 1;
        }
        this.updateBusy();
        break;
      }
      case 'note':
        this.notes = [...this.notes.slice(-2), { level: message.level, text: message.x }];
        this.emit('status');
        break;
    }
  }

  // -- store -> kernel -----------------------------------------------------------------

  /** Ask the kernel for the rows from the first one this store lacks. */
  requestRows(): void {
    if (!this.rowsAsked) {
      this.rowsAsked = true;
      this.model.send({ a: 'rows', from: this.size, req: this.nextReq++ });
    }
  }

  /** Ask the kernel for the full text of these nodes (once each, in one message). */
  requestTexts(ids: string[]): void {
    const wanted = ids.filter(id => !this.texts.has(id) && !this.requested.has(id));
    if (!wanted.length) {
      return;
    }
    for (const id of wanted) {
      this.requested.add(id);
    }
    this.model.send({ a: 'text', ids: wanted, req: this.nextReq++ });
  }

  /** A reply is being written in this session (by a cell or any view of it). */
  get replying(): boolean {
    return Boolean(this.model.get('busy'));
  }

  /** Say, without asking the kernel, that an action must wait for the reply. */
  refuseWhileReplying(): void {
    this.actionError = BUSY_TEXT;
    this.actionBusy = true;
    this.emit('status');
  }

  /** The reply that was being written ended: a "busy" refusal is no longer true. */
  replyEnded(): void {
    if (this.actionBusy) {
      this.actionBusy = false;
      this.actionError = '';
    }
  }

  act(action: Action): void {
    const req = this.nextReq++;
    this.actionError = '';
    this.actionBusy = false;
    this.waiting.set(req, Date.now());
    this.model.send({ ...action, req });
    this.scheduleBusyCheck();
    this.emit('status');
  }

  private scheduleBusyCheck(): void {
    if (this.busyTimer !== null) {
      clearTimeout(this.busyTimer);
    }
    this.busyTimer = setTimeout(() => {
      this.busyTimer = null;
      this.updateBusy();
    }, BUSY_AFTER_MS);
  }

  private updateBusy(): void {
    const now = Date.now();
    let busy = false;
    for (const sent of this.waiting.values()) {
      if (now - sent >= BUSY_AFTER_MS - 5) {
        busy = true;
      }
    }
    if (this.waiting.size && !busy) {
      this.scheduleBusyCheck();
    }
    this.kernelBusy = busy;
    this.emit('status');
  }

  // -- listeners -----------------------------------------------------------------------

  subscribe(listener: (what: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(what: string): void {
    for (const listener of Array.from(this.listeners)) {
      listener(what);
    }
  }

  dispose(): void {
    if (this.busyTimer !== null) {
      clearTimeout(this.busyTimer);
    }
    this.listeners.clear();
  }
}

/** A short id for display, like git's. */
export function shortId(id: string): string {
  return id.slice(0, 7);
}

/** `model · 120 in · 340 out · 3.2 s` for a reply's meta summary. */
export function metaLine(meta: MetaSummary | null): string {
  if (!meta) {
    return '';
  }
  const [model, input, output, ms] = meta;
  const parts: string[] = [];
  if (model) {
    parts.push(model);
  }
  if (typeof input === 'number') {
    parts.push(`${input} in`);
  }
  if (typeof output === 'number') {
    parts.push(`${output} out`);
  }
  if (typeof ms === 'number') {
    parts.push(ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`);
  }
  return parts.join(' · ');
}
