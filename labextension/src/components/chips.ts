/**
 * A question as it was typed, each substitution a chip: the front end's one reading of a
 * question node's `meta.typed` (docs/format.md, "A question as typed"). The kernel's is
 * `question_as_typed` in jupyter_tree_chat/textview.py; both draw the same line.
 *
 *   questionAsTyped(meta, trans)   'What does [df · DataFrame 100×2] show?', or null when
 *                                  the node keeps no typed text (show what was sent)
 *   typedPieces(meta)              its pieces: strings as typed and `Chip`s, or null
 *   typedSource(meta)              'What does {df} show?': what an edit starts from
 *   chipLabel(chip, trans)         'df · DataFrame 100×2', 'Err · KeyError', 'from 3f2a9c1'
 *   chipText(chip, text)           what was sent in the chip's place (the table), or null
 *   typedHead(meta, trans)         a tree row's head: the line, each chip marked
 *   headLine(head)                 a row's head as DOM, a marked chip drawn as a chip
 *   plainHead(head)                a row's head as plain text (a tooltip)
 *   renderTyped(...)               the conversation's question: its words as Markdown,
 *                                  a chip where each substitution stood; a click on one
 *                                  opens what was sent in its place (folded by default)
 *
 * A row's head marks a chip with Unicode's isolates (U+2068 … U+2069: they keep a name's
 * direction to itself and show as nothing), so a head still reads right as plain text in
 * a tooltip, a search or the picture. Everything from the session goes into the page as
 * text nodes or through the Markdown component (the sanitizer); a chip is built from
 * DOM nodes, never from markup.
 */

import { h } from './dom';
import { Markdown } from './markdown';
import { Translation } from './translate';

export type ChipKind = 'variable' | 'cell' | 'attachment' | 'node';

/** One substitution: `{df}`, `{In[3]}`, `{Err}`, an `--attach` file, a `--with` quote. */
export interface Chip {
  /** `df`, `In[3]`, `Err`, `results.pdf`, a node's short id */
  field: string;
  kind: ChipKind;
  /** the short description: `DataFrame 100×2`, `PDF 1.2 MB`, `KeyError` */
  about: string;
  /** where its text stands in the message's text (code points), or null for an image or
   * a document (its own block is what was sent) */
  sent: [number, number] | null;
}

export type TypedPiece = string | Chip;

const KINDS: readonly string[] = ['variable', 'cell', 'attachment', 'node'];
const TYPED_KINDS: readonly string[] = ['variable', 'cell'];
export const CHIP_START = '\u2068';
export const CHIP_END = '\u2069';
/** How many characters a row's head shows (HEAD_CHARS in widget/protocol.py). */
export const HEAD_CHARS = 80;
/** Where a chip stands in the Markdown of a question's words, until it is drawn. */
const SLOT_START = '\uE000';
const SLOT_END = '\uE001';
const MARKS = /[\u2068\u2069\uE000\uE001]/g;

function chipOf(item: unknown): Chip | null {
  if (typeof item !== 'object' || item === null) {
    return null;
  }
  const { field, kind, about = '', sent } = item as Record<string, unknown>;
  if (typeof field !== 'string' || typeof kind !== 'string' || !KINDS.includes(kind) || typeof about !== 'string') {
    return null;
  }
  const span =
    Array.isArray(sent) && sent.length === 2 && sent.every(n => Number.isInteger(n)) && 0 <= sent[0] && sent[0] <= sent[1]
      ? ([sent[0], sent[1]] as [number, number])
      : null;
  return { field, kind: kind as ChipKind, about, sent: span };
}

/** A question's pieces as typed, from `meta.typed`; null when it keeps none (or not this shape). */
export function typedPieces(meta: Record<string, unknown> | null | undefined): TypedPiece[] | null {
  const typed = meta?.typed;
  if (!Array.isArray(typed)) {
    return null;
  }
  const pieces: TypedPiece[] = [];
  for (const item of typed) {
    const piece = typeof item === 'string' ? item : chipOf(item);
    if (piece === null) {
      return null; // not this project's shape: the sent text is shown instead
    }
    pieces.push(piece);
  }
  return pieces;
}

/** Whether the chip was typed as `{field}` (a file or a quote came from an option). */
export function isTyped(chip: Chip): boolean {
  return TYPED_KINDS.includes(chip.kind);
}

/** `df · DataFrame 100×2`, `Err · KeyError`, `from 3f2a9c1`. */
export function chipLabel(chip: Chip, trans: Translation): string {
  if (chip.kind === 'node') {
    return trans.__('from %1', chip.field);
  }
  return chip.about ? `${chip.field} · ${chip.about}` : chip.field;
}

/** The pieces as one line of plain text, each chip as `wrap(label)`; a file or a quote,
 * which leads the question, is set apart from the words after it. */
function joined(pieces: TypedPiece[], trans: Translation, wrap: (label: string) => string): string {
  return pieces
    .map(piece => (typeof piece === 'string' ? piece : wrap(chipLabel(piece, trans)) + (isTyped(piece) ? '' : ' ')))
    .join('');
}

/**
 * A question as it was typed, each substitution a chip (`[df · DataFrame 100×2]`), its
 * files and quotes first; null when the node keeps no typed text (older sessions, another
 * tool's, an answer): show the text that was sent.
 */
export function questionAsTyped(meta: Record<string, unknown> | null | undefined, trans: Translation): string | null {
  const pieces = typedPieces(meta);
  return pieces === null ? null : joined(pieces, trans, label => `[${label}]`);
}

/** The text as typed, its fields as written (`What does {df} show?`): what an edit starts from. */
export function typedSource(meta: Record<string, unknown> | null | undefined): string | null {
  const pieces = typedPieces(meta);
  if (pieces === null) {
    return null;
  }
  return pieces.map(piece => (typeof piece === 'string' ? piece : isTyped(piece) ? `{${piece.field}}` : '')).join('');
}

/** `text.slice(start, end)` counted in code points (Python's string indices). */
function codePoints(text: string, start: number, end: number): string | null {
  if (!/[\uD800-\uDFFF]/.test(text)) {
    return end <= text.length ? text.slice(start, end) : null;
  }
  const points = Array.from(text);
  return end <= points.length ? points.slice(start, end).join('') : null;
}

/** What was sent in the chip's place, out of the message's text (its text blocks joined);
 * null for an image or a document, or when the text does not reach that far. */
export function chipText(chip: Chip, text: string): string | null {
  return chip.sent === null ? null : codePoints(text, chip.sent[0], chip.sent[1]);
}

/** A tree row's head for a question as typed: one line, each chip whole between
 * `CHIP_START` and `CHIP_END`, cut after `HEAD_CHARS` with `…`; null when none is kept. */
export function typedHead(meta: Record<string, unknown> | null | undefined, trans: Translation): string | null {
  const pieces = typedPieces(meta);
  if (pieces === null) {
    return null;
  }
  let shown = '';
  let room = HEAD_CHARS;
  for (const piece of pieces) {
    if (room <= 0) {
      shown += '…';
      break;
    }
    if (typeof piece !== 'string') {
      const chip = `[${chipLabel(piece, trans).replace(MARKS, '')}]`;
      shown += CHIP_START + chip + CHIP_END + (isTyped(piece) ? '' : ' ');
      room -= Array.from(chip).length + 1;
      continue;
    }
    const words = piece.replace(MARKS, '');
    let plain = words.split(/\s+/).filter(Boolean).join(' ');
    if (/^\s/.test(words) && shown) {
      plain = ' ' + plain;
    }
    if (/\s$/.test(words) && plain) {
      plain += ' ';
    }
    const points = Array.from(plain); // counted as the kernel counts (code points)
    if (points.length > room) {
      shown += points.slice(0, room).join('') + '…';
      break;
    }
    shown += plain;
    room -= points.length;
  }
  return shown.trim();
}

/** A row's head as plain text: its chips `[in brackets]`, the marks taken out. */
export function plainHead(head: string): string {
  return head.replace(/[\u2068\u2069]/g, '');
}

/** A row's head as a `.jtc-first-line`: its text, each marked chip drawn as a chip. */
export function headLine(head: string): HTMLElement {
  const line = h('span', { class: 'jtc-first-line' });
  if (!head.includes(CHIP_START)) {
    line.textContent = head;
    return line;
  }
  for (const [k, segment] of head.split(new RegExp(`${CHIP_START}([^${CHIP_END}]*)${CHIP_END}`)).entries()) {
    if (k % 2 === 0) {
      line.append(segment);
    } else {
      line.append(h('span', { class: 'jtc-typed-chip' }, segment.replace(/^\[(.*)\]$/s, '$1')));
    }
  }
  return line;
}

export interface TypedOptions {
  pieces: TypedPiece[];
  /** the message's text as sent (its text blocks joined): where the chips' texts are */
  text: string;
  markdown: Markdown;
  trans: Translation;
  /** the chips open now, by `key:k` (kept by the caller across redraws) */
  open: Set<string>;
  key: string;
}

/**
 * A question as typed, for the conversation: its words rendered as Markdown with a chip
 * where each substitution stood, and under them, folded, what was sent in each chip's
 * place (a table, a file, a traceback, a quoted branch): a click on the chip opens it,
 * rendered through the Markdown component. A chip for an image or a document opens
 * nothing: the image is shown as its thumbnail beside.
 */
export function renderTyped(options: TypedOptions): HTMLElement {
  const { pieces, text, markdown, trans, open, key } = options;
  const chips: Array<{ chip: Chip; sent: string | null; slot: string }> = [];
  let source = '';
  pieces.forEach((piece, k) => {
    if (typeof piece === 'string') {
      source += piece.replace(MARKS, '');
      return;
    }
    chips.push({ chip: piece, sent: chipText(piece, text), slot: `${key}:${k}` });
    source += `${SLOT_START}${chips.length - 1}${SLOT_END}` + (isTyped(piece) ? '' : ' ');
  });
  const bodies = h('div', { class: 'jtc-chip-bodies' });
  const buttons = chips.map(({ chip, sent, slot }, n) => {
    const label = chipLabel(chip, trans);
    if (sent === null) {
      return h('span', { class: 'jtc-typed-chip', title: trans.__('what went in here is shown beside') }, label);
    }
    const body = h('div', { class: 'jtc-chip-body', id: `jtc-chip-${cssId(slot)}`, 'data-chip-body': n });
    const isOpen = open.has(slot);
    if (isOpen) {
      fillBody(body, label, sent, markdown);
    } else {
      body.hidden = true;
    }
    bodies.append(body);
    return h(
      'button',
      {
        class: 'jtc-typed-chip jtc-typed-chip-opens',
        'data-chip': n,
        'aria-expanded': String(isOpen),
        'aria-controls': body.id,
        title: isOpen ? trans.__('Fold what was sent in its place') : trans.__('Show what was sent in its place')
      },
      label
    );
  });
  const words = markdown.element(source, holder => placeChips(holder, buttons));
  words.classList.add('jtc-typed');
  const element = h('div', { class: 'jtc-typed-question' }, words, bodies);
  element.addEventListener('click', event => {
    const target = (event.target as HTMLElement).closest<HTMLElement>('[data-chip]');
    if (!target || !element.contains(target)) {
      return;
    }
    const n = Number(target.dataset.chip);
    const { chip, sent, slot } = chips[n];
    const body = bodies.querySelector<HTMLElement>(`[data-chip-body="${n}"]`);
    if (!body || sent === null) {
      return;
    }
    const opening = body.hidden;
    if (opening) {
      open.add(slot);
      if (!body.childNodes.length) {
        fillBody(body, chipLabel(chip, trans), sent, markdown);
      }
    } else {
      open.delete(slot);
    }
    body.hidden = !opening;
    target.setAttribute('aria-expanded', String(opening));
    target.title = opening ? trans.__('Fold what was sent in its place') : trans.__('Show what was sent in its place');
  });
  return element;
}

function fillBody(body: HTMLElement, label: string, sent: string, markdown: Markdown): void {
  body.replaceChildren(h('div', { class: 'jtc-chip-body-title' }, label), markdown.element(sent));
}

function cssId(text: string): string {
  return text.replace(/[^A-Za-z0-9_-]/g, '_');
}

/** Put each chip where its slot stands in the rendered words (text nodes only). */
function placeChips(holder: HTMLElement, chips: HTMLElement[]): void {
  const walker = document.createTreeWalker(holder, NodeFilter.SHOW_TEXT);
  const found: Text[] = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if ((node.textContent ?? '').includes(SLOT_START)) {
      found.push(node as Text);
    }
  }
  const slot = new RegExp(`${SLOT_START}(\\d+)${SLOT_END}`);
  for (const node of found) {
    const fragment = document.createDocumentFragment();
    for (const [k, segment] of (node.textContent ?? '').split(slot).entries()) {
      const chip = k % 2 === 1 ? chips[Number(segment)] : undefined;
      fragment.append(k % 2 === 0 ? segment.replace(MARKS, '') : chip ?? '');
    }
    node.replaceWith(fragment);
  }
}
