/**
 * The small controls the views share: a button that names its action (`data-act`, read
 * by one click handler per view), the `‹ 2/3 ›` switcher between siblings, and the bar
 * under an inline edit box.
 *
 * An action that changes the session (`edit`, `retry`, `switch`, `label`) only exists in
 * the kernel-connected panel; the read-only viewer's switcher and compare `select`.
 */

import { typedSource } from './chips';
import { h } from './dom';
import { SessionSource } from './model';
import { Translation } from './translate';
import { position } from './vocabulary';

export interface ButtonOptions {
  act: string;
  id?: string;
  title?: string;
  disabled?: boolean;
  /** `primary` (the default action of a bar) or `quiet` (secondary, no frame) */
  look?: 'primary' | 'quiet';
  attrs?: Record<string, string | number | boolean | undefined>;
}

export function button(label: string, options: ButtonOptions): HTMLElement {
  const look = options.look ? ` jtc-${options.look}` : '';
  return h(
    'button',
    {
      class: `jtc-button${look}`,
      'data-act': options.act,
      'data-id': options.id,
      title: options.title,
      disabled: options.disabled,
      ...options.attrs
    },
    label
  );
}

/** How moving to a sibling is done: the panel switches the session, the viewer selects. */
export type Navigate = 'switch' | 'select';

/** What the switcher moves between, which its titles say. */
export type SwitchWhat = 'version' | 'question' | 'answer';

function arrowTitles(what: SwitchWhat, trans: Translation): [string, string] {
  switch (what) {
    case 'question':
      return [trans.__('previous question (←)'), trans.__('next question (→)')];
    case 'answer':
      return [trans.__('previous answer (←)'), trans.__('next answer (→)')];
    default:
      return [trans.__('previous version (←)'), trans.__('next version (→)')];
  }
}

export interface SwitcherOptions {
  pos: number;
  count: number;
  act: Navigate;
  what: SwitchWhat;
  id?: string;
  /** which switcher of a turn control (`q` question, `r` answer) */
  side?: string;
  /** a word before the arrows */
  hint?: string;
}

/** `‹ 2/3 ›`: its buttons carry `data-act`, `data-id`, `data-side` and `data-step` (±1). */
export function switcher(options: SwitcherOptions, trans: Translation): HTMLElement {
  const { pos, count, act, id, side } = options;
  const [previous, next] = arrowTitles(options.what, trans);
  const arrow = (step: -1 | 1, title: string, glyph: string, disabled: boolean): HTMLElement =>
    h(
      'button',
      { class: 'jtc-arrow', 'data-act': act, 'data-id': id, 'data-side': side, 'data-step': step, title, disabled },
      glyph
    );
  return h(
    'span',
    { class: 'jtc-switcher', 'data-side': side },
    options.hint ? h('span', { class: 'jtc-hint' }, options.hint) : null,
    arrow(-1, previous, trans._p('arrow', '‹'), pos <= 1),
    h('span', { class: 'jtc-position', 'data-side': side }, position(pos, count, trans)),
    arrow(1, next, trans._p('arrow', '›'), pos >= count)
  );
}

/** Under an edit box: what the keys do, Save and Cancel; for a question kept as typed
 * (`box`, see `editBox`), the switch between editing it as typed and what was sent. */
export function editBar(trans: Translation, id?: string, box?: HTMLTextAreaElement): HTMLElement {
  let toggle: HTMLElement | null = null;
  if (box) {
    const check = h('input', { type: 'checkbox', class: 'jtc-edit-sent', checked: editsSent(box) }) as HTMLInputElement;
    check.addEventListener('change', () => {
      const texts = editTexts.get(box);
      if (!texts) {
        return;
      }
      texts[editsSent(box) ? 'sent' : 'typed'] = box.value; // kept for the way back
      box.value = check.checked ? texts.sent : texts.typed;
      box.dataset.raw = check.checked ? '1' : '';
      box.focus();
    });
    toggle = h(
      'label',
      { class: 'jtc-hint jtc-edit-sent-label', title: trans.__('As typed, its {fields} are filled in again from the kernel; what was sent is sent as written') },
      check,
      trans.__('edit what was sent')
    );
    const shown = toggle;
    shown.hidden = !editTexts.has(box); // a question kept as typed; its text may come later
    box.addEventListener(TYPED_KNOWN, () => (shown.hidden = false), { once: true });
  }
  return h(
    'div',
    { class: 'jtc-edit-bar' },
    h('span', { class: 'jtc-hint' }, trans.__('Enter saves as a new branch · Shift+Enter new line · Escape cancels')),
    toggle,
    button(trans.__('Save'), { act: 'save', id, look: 'primary' }),
    button(trans.__('Cancel'), { act: 'cancel', id })
  );
}

/** What an edit box says when it learns that its question keeps its typed text. */
const TYPED_KNOWN = 'jtc-typed-known';

/** The two texts of an edit box whose question keeps its typed text. */
const editTexts = new WeakMap<HTMLTextAreaElement, { typed: string; sent: string }>();

/** Whether the box edits what was sent (else the question as typed, where it keeps one). */
export function editsSent(box: HTMLTextAreaElement): boolean {
  return box.dataset.raw === '1';
}

/**
 * An inline edit box for the message `id`, holding its text: a question as typed, with
 * its `{fields}` (components/chips.ts), where it keeps one, else the text that was sent.
 * Until the full text is known the box holds `preview` (a row's summary: cut, and plain);
 * the full text replaces it when it arrives, unless it was typed over.
 */
export function editBox(source: SessionSource, id: string, preview: string, ariaLabel: string): HTMLTextAreaElement {
  const box = h('textarea', { class: 'jtc-edit-box', rows: 3, 'aria-label': ariaLabel }) as HTMLTextAreaElement;
  const textOf = (): string | undefined => {
    const content = source.content(id);
    if (!content) {
      return undefined;
    }
    const sent = content.parts.filter(p => p.kind === 'text').map(p => p.text).join('\n\n');
    const typed = typedSource(content.meta);
    if (typed !== null && !editTexts.has(box)) {
      editTexts.set(box, { typed, sent });
      box.dispatchEvent(new Event(TYPED_KNOWN));
    }
    return typed ?? sent;
  };
  const shown = preview.replace(/[\u2068\u2069]/g, '');
  const known = textOf();
  box.value = known ?? shown;
  if (known === undefined) {
    source.requestContent([id]);
    const stop = source.subscribe(what => {
      const text = what === 'texts' ? textOf() : undefined;
      if (text !== undefined) {
        if (box.value === shown) {
          box.value = text;
        }
        stop();
      }
    });
  }
  return box;
}
