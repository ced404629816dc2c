/**
 * The panel's source of data: a typed mirror of the widget's synced traits, and a store
 * that applies the kernel's small custom messages (see jupyter_tree_chat/widget/protocol.py)
 * to the components' data model (`SessionTree`, components/model.ts).
 *
 * One store per model, made in `initialize`, so two views of the same widget share it
 * and a message is applied once. Views never change the tree: they call an action, the
 * kernel runs the Session action, and its events come back here.
 */

import { Grades, emptyGrades, gradesFromPayload } from '../format/grades';
import { Part, partsOf } from '../components/content';
import { Catalog, SwitchableTranslation, Translation, english, fromCatalog } from '../components/translate';
import { FindQuery, FindResult, Finder } from '../components/find';
import { Change, ContextReading, FanoutAsk, FanoutState, NodeContent, Role, SessionSource, SessionTree, Stream, Summary } from '../components/model';
import { PanelActions } from '../components/sessionview';
import { HeldMessage, HeldTexts } from './heldtexts';
import { SharedState } from './shared';
import { StatusState } from '../components/status';

// -- the synced traits (keep in step with jupyter_tree_chat/widget/widgets.py) -----------------

/** `[model, input_tokens, output_tokens, duration_ms, interrupted]` of a reply, and its
 * cost (`"$0.0135"`) when its model has a price. */
export type MetaSummary =
  | [string | null, number | null, number | null, number | null, 0 | 1]
  | [string | null, number | null, number | null, number | null, 0 | 1, string];
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
/** A control that shares its place with others (protocol 3): what it shows is the
 * place's, kept once in the session's shared state (`places`), and its own `shown`. */
export interface TurnReference {
  place: string;
  shown: string | null;
}

export interface Traits {
  /** one per widget: the key of its store in the browser */
  uid: string;
  mode: 'panel' | 'turn' | 'grid';
  /** the session's shared state (`IPY_MODEL_<id>` of its `SessionState`: `busy`, a reply
   * is being written), one model for every view of the session on the page */
  session_state?: string;
  /** a view saved by an older version: whether a reply was being written, its own */
  busy?: boolean;
  error: string;
  /** panel */
  nodes: Row[];
  labels: Record<string, string>;
  /** ids whose branch is hidden */
  hidden: string[];
  /** each answer's latest grades and the preferences (widget/grading.py's grades_payload) */
  grades: unknown;
  /** compaction root id -> the leaf it summarised */
  links: Record<string, string>;
  leaf: string | null;
  title: string;
  /** the context window's use on the current branch (widget/protocol.py: context_reading) */
  context: Partial<ContextReading>;
  /** what "Ask other models…" offers (TreeChat.compare_models / compare_temperatures) */
  compare_models: string[];
  compare_temperatures: number[];
  /** turn control: what it shows, or (protocol 3) the place it shares */
  turn: TurnInfo | TurnReference;
  /** an experiment cell's grid (components/experiment.ts: GridData) */
  grid: unknown;
  /** turn control: cells the notebook server's `insert` proposed, not yet inserted */
  inserts: { cell?: string; codes?: string[] };
}

/** The part of anywidget's model API this widget uses. */
export interface WidgetModel {
  get<K extends keyof Traits>(name: K): Traits[K];
  on(event: string, callback: (...args: any[]) => void): void;
  off(event: string, callback: (...args: any[]) => void): void;
  send(content: unknown): void;
  /** anywidget's; absent in a bare test page */
  set?<K extends keyof Traits>(name: K, value: Traits[K]): void;
  save_changes?(): void;
  /** anywidget's: where another model (the session's `SessionState`) is found */
  widget_manager?: { get_model(id: string): Promise<SharedState> };
}

// -- messages ------------------------------------------------------------------------

export type KernelMessage =
  | { t: 'n'; r: Row; s?: 1; i?: number; m?: Record<string, unknown> }
  | { t: 'lang'; locale: string; catalog: Catalog | null }
  | { t: 'rows'; from: number; rows: Row[] }
  | { t: 's'; p: string }
  | { t: 'd'; x: string }
  | { t: 'k'; x: string }
  | { t: 'e'; p: string; err?: string }
  | { t: 'texts'; req?: number; texts: Record<string, FullText> }
  | { t: 'ack'; req: number }
  | { t: 'done'; req: number; err?: string; busy?: 1 }
  | { t: 'note'; level: 'info' | 'warning' | 'error'; x: string }
  | { t: 'fs'; p: string; v: Array<{ model: string; temperature: number | null; label: string }> }
  | { t: 'vs'; v: number }
  | { t: 'vd'; v: number; x: string }
  | { t: 've'; v: number; err?: string; meta?: MetaSummary | null }
  | { t: 'fe'; p: string; ids: Array<string | null>; errs: Array<string | null> }
  | { t: 'found'; req: number; rows: string; count: number; hidden: number; err?: string }
  | HeldMessage;

export interface FullText {
  text: string;
  meta: Record<string, unknown>;
  /** the message's images and documents, cut down by the kernel (protocol.media_blocks) */
  media?: Array<Record<string, unknown>>;
  /** the reply's thinking, and how many blocks the API sent encrypted */
  thinking?: string;
  redacted?: number;
  /** an answer: the id of the notebook cell that asked (where "Insert below" goes) */
  cell?: string;
}

export type Action =
  | { a: 'retry'; id: string }
  | { a: 'edit'; id: string; text: string; raw?: boolean }
  | { a: 'switch'; id: string; deepest?: boolean }
  | { a: 'label'; id: string; label: string }
  | { a: 'hide'; id: string; hidden: boolean }
  | { a: 'grade'; id: string; score: number; scale: [number, number] }
  | { a: 'prefer'; id: string; other: string; tie: boolean }
  | { a: 'fanout'; id: string; n: number; models: string[]; temperatures: number[] }
  | { a: 'export'; format: 'html' };

/**
 * The kernel's words when it refuses an action because a reply is being written
 * (BUSY_TEXT in jupyter_tree_chat/widget/widgets.py): recognised here, shown translated
 * (components/status.ts).
 */
export const BUSY_TEXT =
  'Busy: a reply is being written in this session (a %%chat cell or another view); ' + // not for translation: the kernel's words, recognised
  'wait for it to finish, then try again.'; // not for translation: the kernel's words, recognised

/** After this long without an `ack`, the kernel is busy (a cell is running). */
export const BUSY_AFTER_MS = 800;

export interface Note {
  level: 'info' | 'warning' | 'error';
  text: string;
}

const ROLES: Record<Row[2], Role> = { u: 'user', a: 'assistant', t: 'tool' };

/** A reply's meta summary as the components' `Summary`. */
export function summaryOf(meta: MetaSummary | null): Summary | null {
  if (!meta) {
    return null;
  }
  const [model, inputTokens, outputTokens, durationMs, interrupted] = meta;
  const cost = typeof meta[5] === 'string' ? meta[5] : null;
  return { model, inputTokens, outputTokens, durationMs, interrupted: interrupted === 1, cost };
}

/** What the kernel sent as a node's full text, as the components' `NodeContent`: the
 * thinking first (folded above the answer), then the images and documents, then the text. */
function contentOf(full: FullText): NodeContent {
  const parts: Part[] = [];
  if (full.thinking) {
    parts.push({ kind: 'thinking', name: 'thinking', isError: false, text: full.thinking });
  }
  for (let k = 0; k < (full.redacted ?? 0); k++) {
    parts.push({ kind: 'thinking', name: 'redacted_thinking', isError: false, text: '' });
  }
  const media = Array.isArray(full.media) ? partsOf({ content: full.media }) : [];
  parts.push(...media);
  if (full.text || !media.length) {
    parts.push({ kind: 'text', name: '', isError: false, text: full.text });
  }
  return { parts, meta: full.meta ?? {}, line: 0, timestamp: null };
}

/**
 * The tree as the browser keeps it (rows in the kernel's order, see `SessionTree`), the
 * full texts once fetched, the reply being streamed, and the state of the actions sent.
 */
export class Store implements SessionSource, PanelActions, Finder {
  readonly tree = new SessionTree();
  readonly texts = new Map<string, FullText>();
  stream: Stream | null = null;
  fanout: FanoutState | null = null;
  notes: Note[] = [];
  /** actions sent and not yet picked up by the kernel */
  waiting = new Map<number, number>();
  /** actions picked up and not finished */
  running = new Set<number>();
  kernelBusy = false;
  /** the session's `SessionState`, once found (shared.ts) */
  shared: SharedState | null = null;
  actionError = '';
  /** the last action was refused: a reply is being written (`actionError` is BUSY_TEXT) */
  actionBusy = false;
  readonly problems = [];

  private nextReq = 1;
  private requested = new Set<string>();
  private contents = new Map<string, NodeContent>();
  private listeners = new Set<(what: Change) => void>();
  private busyTimer: ReturnType<typeof setTimeout> | null = null;
  private rowsAsked = false;
  private hiddenSeen: string[] | null = null;
  private hiddenSet = new Set<string>();
  private linksSeen: Record<string, string> | null = null;
  private gradesSeen: unknown = null;
  private gradesRead: Grades = emptyGrades();
  private linksMap = new Map<string, string>();
  /** the search box's question in the kernel now, and the newest one waiting for it */
  private finding: { req: number; answer: (result: FindResult) => void } | null = null;
  private nextFind: { query: FindQuery; answer: (result: FindResult) => void } | null = null;
  private held = new HeldTexts(from => this.model.send({ a: 'find', req: this.nextReq++, held: from }));

  /** the language the kernel was told outright to speak (null: JupyterLab's) */
  private language: Translation | null = null;
  private translations = new Set<SwitchableTranslation & { host: Translation }>();

  /** The words of a view of this store: `host`'s (JupyterLab's language), or the one
   * the user set in the kernel with `%chat language`, from when the kernel says so. */
  translation(host: Translation): Translation {
    const translation = Object.assign(new SwitchableTranslation(this.language ?? host), { host });
    this.translations.add(translation);
    return translation;
  }

  constructor(readonly model: WidgetModel) {
    if (model.get('mode') === 'panel') {
      for (const row of model.get('nodes') ?? []) {
        this.addRow(row);
      }
      // rows added while this front end was loading were announced to nobody: catch up
      this.requestRows();
    }
  }

  // -- reading (SessionSource) ---------------------------------------------------------

  get size(): number {
    return this.tree.size;
  }

  get leaf(): string | null {
    return this.model.get('leaf') ?? null;
  }

  get title(): string {
    return this.model.get('title') ?? '';
  }

  get context(): ContextReading | null {
    const reading = this.model.get('context');
    if (!reading || typeof reading.tokens !== 'number') {
      return null;
    }
    return { tokens: reading.tokens, window: typeof reading.window === 'number' ? reading.window : null, exact: reading.exact === true };
  }

  get hidden(): ReadonlySet<string> {
    const ids = this.model.get('hidden') ?? [];
    if (ids !== this.hiddenSeen) {
      this.hiddenSeen = ids;
      this.hiddenSet = new Set(ids);
    }
    return this.hiddenSet;
  }

  get links(): ReadonlyMap<string, string> {
    const links = this.model.get('links') ?? {};
    if (links !== this.linksSeen) {
      this.linksSeen = links;
      this.linksMap = new Map(Object.entries(links));
    }
    return this.linksMap;
  }

  get grades(): Grades {
    const sent = this.model.get('grades') ?? {};
    if (sent !== this.gradesSeen) {
      this.gradesSeen = sent;
      this.gradesRead = gradesFromPayload(sent);
    }
    return this.gradesRead;
  }

  label(id: string): string | undefined {
    const labels = this.model.get('labels') ?? {};
    return Object.prototype.hasOwnProperty.call(labels, id) ? labels[id] : undefined;
  }

  text(id: string): FullText | undefined {
    return this.texts.get(id);
  }

  content(id: string): NodeContent | undefined {
    let content = this.contents.get(id);
    const full = this.texts.get(id);
    if (content === undefined && full !== undefined) {
      content = contentOf(full);
      this.contents.set(id, content);
    }
    return content;
  }

  requestContent(ids: string[]): void {
    this.requestTexts(ids);
  }

  // -- kernel -> store -----------------------------------------------------------------

  addRow(row: Row): void {
    const [id, parent, role, head, meta] = row;
    this.tree.add(id, parent, ROLES[role] ?? 'user', head, summaryOf(meta));
  }

  private setText(id: string, full: FullText): void {
    this.texts.set(id, full);
    this.contents.delete(id);
  }

  handle(message: KernelMessage): void {
    switch (message.t) {
      case 'n': {
        if (message.s === 1 && this.stream) {
          // the whole meta with the streamed text: its context says what a budget left out
          this.setText(message.r[0], { text: this.stream.text, meta: message.m ?? {}, thinking: this.stream.thinking });
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
        this.stream = { parent: message.p, text: '', thinking: '', done: false };
        this.emit('stream');
        break;
      case 'd':
        if (this.stream) {
          this.stream.text += message.x;
          this.emit('delta');
        }
        break;
      case 'k':
        if (this.stream) {
          this.stream.thinking += message.x;
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
          this.setText(id, full);
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
      case 'found':
        this.found(message);
        break;
      case 'lang':
        // a language set outright in the kernel: the controls speak it too (null: the lab's)
        this.language = message.catalog ? fromCatalog(message.catalog) : message.locale === 'en' ? english : null;
        for (const translation of this.translations) {
          translation.use(this.language ?? translation.host);
        }
        this.emit('tree');
        break;
      case 'held':
        this.held.take(message);
        break;
      case 'note':
        this.notes = [...this.notes.slice(-2), { level: message.level, text: message.x }];
        this.emit('status');
        break;
      default:
        this.handleFanout(message);
    }
  }

  /** A fan-out's answers, each streaming on its own (`fs`, `vs`, `vd`, `ve`, `fe`). */
  private handleFanout(message: KernelMessage): void {
    const fanout = this.fanout;
    if (message.t === 'fs') {
      const variants = message.v.map(v => ({ label: v.label, model: v.model, temperature: v.temperature, text: '' }));
      this.fanout = { parent: message.p, variants, ended: false };
    } else if (!fanout) {
      return;
    } else if (message.t === 'vs') {
      const variant = fanout.variants[message.v];
      if (variant?.text) {
        variant.text += '\n\n'; // the reply after a tool round follows the one before
      }
    } else if (message.t === 'vd') {
      const variant = fanout.variants[message.v];
      if (variant) {
        variant.text += message.x;
      }
    } else if (message.t === 've') {
      const variant = fanout.variants[message.v];
      if (variant && message.err) {
        variant.error = message.err;
      }
    } else if (message.t === 'fe') {
      fanout.ended = true;
    } else {
      return;
    }
    this.emit('fanout');
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

  /** A reply is being written in this session (by a cell or any view of it): the
   * session's shared state says so, or (a view saved by an older version, or until the
   * shared state is found) the view's own `busy`. */
  get replying(): boolean {
    return Boolean(this.shared ? this.shared.get('busy') : this.model.get('busy'));
  }

  /** What a turn control shows: its own `turn`, or the place it names in the session's
   * shared state with its own `shown` (null until both are here). */
  turnInfo(): TurnInfo | null {
    const own = this.model.get('turn') as Partial<TurnInfo & TurnReference> | undefined;
    if (own && typeof own.place === 'string') {
      const places = this.shared?.get('places') as Record<string, Omit<TurnInfo, 'shown'>> | undefined;
      const place = places?.[own.place];
      return place && place.q ? { ...place, shown: own.shown ?? null } : null;
    }
    return own && own.q ? (own as TurnInfo) : null;
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

  retry(id: string): void {
    this.act({ a: 'retry', id });
  }

  /** `raw`: `text` replaces what was sent; else it is the question as typed (its fields
   * filled in again by the kernel) when the question keeps one. */
  edit(id: string, text: string, raw = false): void {
    this.act(raw ? { a: 'edit', id, text, raw } : { a: 'edit', id, text });
  }

  setLabel(id: string, label: string): void {
    this.act({ a: 'label', id, label });
  }

  switchTo(id: string): void {
    this.act({ a: 'switch', id });
  }

  hide(id: string, hidden: boolean): void {
    this.act({ a: 'hide', id, hidden });
  }

  grade(id: string, score: number, scale: [number, number]): void {
    this.act({ a: 'grade', id, score, scale });
  }

  prefer(id: string, other: string, tie: boolean): void {
    this.act({ a: 'prefer', id, other, tie });
  }

  /** The search box was focused: fetch the kernel's text index now (heldtexts.ts). */
  prepare(): void {
    this.held.prefetch(this.tree);
  }

  /**
   * The search box's answer: from the kernel's text index held here (heldtexts.ts) if it
   * can, else the kernel's (share/find.py). One question is in the kernel at a time: keys
   * typed meanwhile wait as one (the newest), so fast typing never queues a search a key. */
  find(query: FindQuery, folds: readonly string[] = []): FindResult | Promise<FindResult> {
    return this.held.find(this.tree, query, folds) ?? new Promise(answer => {
      if (this.finding) {
        this.nextFind?.answer({ ids: [], hidden: 0 }); // overtaken by a newer key
        this.nextFind = { query, answer };
      } else {
        this.askFind(query, answer);
      }
    });
  }

  private askFind(query: FindQuery, answer: (result: FindResult) => void): void {
    const req = this.nextReq++;
    this.finding = { req, answer };
    this.model.send({ a: 'find', req, q: query.text, regex: query.regex, case: query.caseSensitive, role: query.role, all: query.includeHidden });
  }

  /** The kernel's matches: a bitset over the rows (widget/sharing.py), as ids in row order. */
  private found(message: Extract<KernelMessage, { t: 'found' }>): void {
    if (!this.finding || this.finding.req !== message.req) {
      return;
    }
    const ids: string[] = [];
    const bits = atob(message.rows ?? '');
    const rows = Math.min(bits.length * 8, this.tree.size);
    for (let byte = 0; byte * 8 < rows; byte++) {
      const value = bits.charCodeAt(byte);
      for (let bit = 0; value && bit < 8; bit++) {
        if (value & (1 << bit) && byte * 8 + bit < rows) {
          ids.push(this.tree.ids[byte * 8 + bit]);
        }
      }
    }
    const { answer } = this.finding;
    this.finding = null;
    answer({ ids, hidden: message.hidden ?? 0, error: message.err });
    const next = this.nextFind;
    if (next) {
      this.nextFind = null;
      this.askFind(next.query, next.answer);
    }
  }

  /** Ask the kernel to write the session as one HTML page beside the notebook. */
  exportHtml(): void {
    this.act({ a: 'export', format: 'html' });
  }

  /** Several answers at once beside `id`'s (a retry as a fan-out). */
  fanOut(id: string, ask: FanoutAsk): void {
    this.act({ a: 'fanout', id, ...ask });
  }

  /** The models and temperatures "Ask other models…" offers. */
  choices(): { models: string[]; temperatures: number[] } {
    return { models: this.model.get('compare_models') ?? [], temperatures: this.model.get('compare_temperatures') ?? [] };
  }

  /** What the status line says (components/status.ts). */
  status(): StatusState {
    const error = this.actionError || this.model.get('error');
    return {
      kernelBusy: this.kernelBusy,
      replying: this.replying,
      working: this.running.size > 0 || this.waiting.size > 0,
      // refused while a reply is written: said as "wait", not as a failure (also after a reload)
      refused: this.actionBusy || (!this.actionError && error === BUSY_TEXT),
      error,
      note: this.notes[this.notes.length - 1] ?? null
    };
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

  subscribe(listener: (what: Change) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(what: Change): void {
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
