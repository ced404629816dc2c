/**
 * A path as a conversation: each message with its place among its siblings (`‹ 2/3 ›`),
 * its model and numbers, Compare and Info, and, where the session can be changed (the
 * panel), inline Edit, Retry and Label. Only the last messages are drawn at first and
 * their content is asked for when drawn; a reply being written is shown at the end as
 * it streams. A reply's thinking is a folded "Thinking" section above its answer (a
 * `<details>`: it opens on a click), rendered like the answer. Revealing a message far
 * up a long path draws a window of messages from it on (never the thousands between it
 * and the end), with a button for the later ones.
 */

import { plainHead, renderTyped, typedPieces } from './chips';
import { CodeActions, addCodeBars, codeBlocks, runCodeAction } from './code';
import { Part, partTitle } from './content';
import { Navigate, button, editBar, editBox, editsSent, switcher } from './controls';
import { renderDetails } from './details';
import { h, listen } from './dom';
import { saveOrCancel } from './keys';
import { Markdown } from './markdown';
import { Unseen, unseenAbove } from './seen';
import { FanoutAsk, SessionSource, shortId, siblingPlace } from './model';
import { experimentOf } from '../format/experiment';
import { thumbs } from './grading';
import { Translation } from './translate';
import { interruptedBadge, labelBadge, numbersLine, roleName } from './vocabulary';

export const FIRST_SHOWN = 30;

/** What a view that can change the session lets the conversation do. */
export interface SessionActions {
  /** a reply is being written in the session: Retry and Edit wait for it */
  readonly replying: boolean;
  retry(id: string): void;
  /** `raw`: edit what was sent, not the question as typed (components/chips.ts) */
  edit(id: string, text: string, raw?: boolean): void;
  setLabel(id: string, label: string): void;
  /** several answers at once beside `id`'s: a retry as a fan-out */
  fanOut(id: string, ask: FanoutAsk): void;
  /** the models and temperatures "Ask other models…" offers */
  choices(): { models: string[]; temperatures: number[] };
  /** say, without asking the kernel, that an action must wait for the reply */
  refuseWhileReplying(): void;
}

/** How many answers "Retry ×N" asks for. */
export const RETRY_N = 3;

export interface ConversationOptions {
  markdown: Markdown;
  /** the panel's actions; `null` in the read-only viewer */
  actions: SessionActions | null;
  navigate: Navigate;
  /** the siblings of `id` side by side (an experiment's question: its grid) */
  compare(id: string): void;
  /** the id in a message's header was clicked */
  select(id: string): void;
  /** ←/→ or an arrow of the switcher */
  sibling(id: string, step: -1 | 1): void;
  emptyText: string;
  /** code blocks of answers get Copy (and Insert below, where the host can); absent: none */
  code?: CodeActions;
}

export class Conversation {
  readonly node: HTMLElement;
  shown = FIRST_SHOWN;
  /** the first message drawn when a window up the path is shown; null: the last ones */
  private windowStart: number | null = null;
  /** the messages whose details are open */
  readonly details = new Set<string>();
  /** the thinking sections a click opened (`id:part`, `stream:parent`): kept across redraws */
  readonly openThinking = new Set<string>();
  /** the chips of questions a click opened (`id:piece`): kept across redraws */
  readonly openChips = new Set<string>();
  private end: string | null = null;
  private editing: { id: string; box: HTMLTextAreaElement } | null = null;
  private labeling: { id: string; box: HTMLInputElement } | null = null;
  /** the message whose "Ask other models…" form is open */
  private asking: string | null = null;
  private streamBody: HTMLElement | null = null;
  private streamThinking: HTMLElement | null = null;
  private frame = 0;
  /** what the last answer on the drawn path did not see (a context budget left it out) */
  private unseen: Unseen | null = null;
  private focusDepth = -1;
  private readonly stopListening: () => void;

  constructor(
    private readonly source: SessionSource,
    private readonly trans: Translation,
    private readonly options: ConversationOptions
  ) {
    this.node = h('section', { class: 'jtc-conversation', 'aria-label': trans.__('Conversation') });
    this.stopListening = listen(this.node, {
      click: event => this.handleClick(event),
      keydown: event => this.handleKey(event)
    });
  }

  dispose(): void {
    cancelAnimationFrame(this.frame);
    this.stopListening();
  }

  /** Draw the path from the root to `end`. */
  render(end: string | null = this.end): void {
    if (end !== this.end) {
      this.windowStart = null; // another end: the path is drawn up to it again
    }
    this.end = end;
    const { source, trans } = this;
    const path = source.tree.pathTo(end);
    const start = this.windowStart ?? Math.max(0, path.length - this.shown);
    const stop = this.windowStart === null ? path.length : Math.min(path.length, start + this.shown);
    const visible = path.slice(start, stop);
    source.requestContent(visible);
    const title = this.options.actions
      ? trans._n('Current branch · %1 message', 'Current branch · %1 messages', path.length)
      : trans._n('Path to %2 · %1 message', 'Path to %2 · %1 messages', path.length, end ? shortId(end) : '—');
    const children: HTMLElement[] = [h('h3', { class: 'jtc-section-title' }, title)];
    this.unseen = unseenAbove(source, path);
    if (this.unseen) {
      const { sent, exchanges } = this.unseen;
      children.push(
        h(
          'p',
          { class: 'jtc-unseen-note' },
          trans._n(
            'The last answer saw %2 of %1 exchange: the greyed messages were left out of its request to fit the context budget.',
            'The last answer saw %2 of %1 exchanges: the greyed messages were left out of its request to fit the context budget.',
            exchanges,
            sent
          )
        )
      );
    }
    if (start > 0) {
      children.push(
        button(trans.__('Show %1 earlier of %2', Math.min(start, FIRST_SHOWN), start), { act: 'earlier', attrs: { class: 'jtc-button jtc-earlier' } })
      );
    }
    visible.forEach((id, k) => children.push(this.message(id, start + k)));
    if (stop < path.length) {
      children.push(
        button(trans.__('Show %1 later of %2', Math.min(path.length - stop, FIRST_SHOWN), path.length - stop), { act: 'later', attrs: { class: 'jtc-button jtc-later' } })
      );
    }
    this.streamBody = null;
    const stream = source.stream;
    if (stream && stop === path.length) {
      children.push(this.streaming());
    }
    if (!path.length && !stream) {
      children.push(h('p', { class: 'jtc-empty-note' }, this.options.emptyText));
    }
    // a switch (← or a click on ‹ ›) redraws the messages: the focus stays at its depth
    const focused = document.activeElement?.closest<HTMLElement>('.jtc-msg[data-depth]');
    if (this.focusDepth < 0 && focused && this.node.contains(focused)) {
      this.focusDepth = Number(focused.dataset.depth);
    }
    this.node.replaceChildren(...children);
    if (this.editing) {
      this.editing.box.focus();
    } else if (this.labeling) {
      this.labeling.box.focus();
    } else if (this.focusDepth >= 0) {
      this.node.querySelector<HTMLElement>(`.jtc-msg[data-depth="${this.focusDepth}"]`)?.focus();
      this.focusDepth = -1;
    }
  }

  /** Scroll the message `id` into view, drawing a window from it on if it is not drawn. */
  reveal(id: string): void {
    const path = this.source.tree.pathTo(this.end);
    const at = path.indexOf(id);
    const start = this.windowStart ?? Math.max(0, path.length - this.shown);
    const stop = this.windowStart === null ? path.length : start + this.shown;
    if (at >= 0 && (at < start || at >= stop)) {
      if (path.length - at <= FIRST_SHOWN * 2) {
        this.windowStart = null; // near the end: draw to the end, as before
        this.shown = path.length - at;
      } else {
        this.windowStart = at;
        this.shown = FIRST_SHOWN;
      }
      this.render();
    }
    this.node.querySelector<HTMLElement>(`.jtc-msg[data-id="${CSS.escape(id)}"]`)?.scrollIntoView?.({ block: 'nearest' });
  }

  /** New streamed text: redraw only the streaming body, once per frame. */
  delta(): void {
    cancelAnimationFrame(this.frame);
    this.frame = requestAnimationFrame(() => {
      const stream = this.source.stream;
      if (this.streamBody && stream) {
        this.options.markdown.fill(this.streamBody, stream.text, { cache: false });
      }
      if (stream?.thinking && this.streamThinking?.isConnected) {
        this.options.markdown.fill(this.streamThinking, stream.thinking, { cache: false });
        const summary = this.streamThinking.parentElement?.querySelector('summary');
        if (summary && stream.text) {
          summary.textContent = this.trans.__('Thinking'); // the answer has begun
        }
      } else if (stream?.thinking && this.streamBody) {
        this.render(); // the first thinking: the section above the answer appears
      }
    });
  }

  private actionButtons(id: string): Array<HTMLElement | null> {
    const { source, trans } = this;
    const { tree } = source;
    const actions = this.options.actions;
    const role = tree.role(id);
    const siblings = tree.siblings(id).length;
    const buttons: Array<HTMLElement | null> = [];
    if (actions) {
      const replying = actions.replying;
      const wait = trans.__('A reply is being written in this session; wait for it to finish');
      const answered = tree.childIds(id).length > 0;
      buttons.push(
        role === 'user'
          ? button(trans.__('Edit'), { act: 'edit', id, disabled: replying, title: replying ? wait : trans.__('Edit this message: saving makes a new branch') })
          : null,
        role === 'assistant' || !answered || id === source.leaf // the leaf: a failed reply left it unanswered
          ? button(trans.__('Retry'), { act: 'retry', id, disabled: replying, title: replying ? wait : trans.__('Ask again: a new answer beside this one') })
          : null
      );
      if (role === 'assistant' || (role === 'user' && !answered)) {
        buttons.push(
          button(trans.__('Retry ×%1', RETRY_N), {
            act: 'retry-n',
            id,
            disabled: replying,
            title: replying ? wait : trans.__('%1 new answers at once, side by side', RETRY_N)
          }),
          button(trans.__('Ask other models…'), {
            act: 'ask',
            id,
            disabled: replying,
            title: replying ? wait : trans.__('Ask other models or temperatures at once, side by side')
          })
        );
      }
    }
    const experiment = role === 'user' && experimentOf(source.content(id)?.meta ?? null) !== null;
    buttons.push(
      experiment
        ? button(trans.__('Grid'), { act: 'compare', id, title: trans.__("The experiment's rows × versions, each opening its branch") })
        : siblings > 1
          ? button(trans._n('Compare %1', 'Compare %1', siblings), { act: 'compare', id, title: trans.__('These versions side by side') })
          : null,
      actions ? button(trans.__('Label'), { act: 'label', id, look: 'quiet', title: trans.__('Name this node') }) : null,
      button(trans.__('Info'), {
        act: 'details',
        id,
        look: 'quiet',
        title: trans.__('Node details'),
        attrs: { 'aria-expanded': String(this.details.has(id)) }
      })
    );
    return buttons;
  }

  private message(id: string, depth: number): HTMLElement {
    const { source, trans } = this;
    const { tree } = source;
    const role = tree.role(id);
    const place = siblingPlace(tree, id);
    const content = source.content(id);
    const label = source.label(id);
    const summary = tree.summary(id);
    const header = h(
      'div',
      { class: 'jtc-msg-header' },
      h('span', { class: 'jtc-role' }, roleName(role, trans)),
      h('button', { class: 'jtc-id jtc-link', 'data-act': 'select', 'data-id': id, title: id }, shortId(id)),
      place.count > 1 ? switcher({ ...place, act: this.options.navigate, what: 'version', id }, trans) : null,
      label ? labelBadge(label, trans) : null,
      summary?.model ? h('span', { class: 'jtc-model' }, summary.model) : null,
      numbersLine(summary, trans) ? h('span', { class: 'jtc-meta' }, numbersLine(summary, trans)) : null,
      summary?.interrupted || content?.meta.interrupted === true ? interruptedBadge(trans) : null,
      role === 'assistant' ? thumbs(source.grades, id, trans, this.options.actions) : null,
      this.unseen?.ids.has(id) ? h('span', { class: 'jtc-unseen-badge', title: trans.__('Left out of the request the last answer was written from') }, trans.__('not sent')) : null,
      h('span', { class: 'jtc-actions' }, ...this.actionButtons(id))
    );
    const body = h('div', { class: 'jtc-msg-body' });
    if (this.editing?.id === id) {
      body.append(this.editing.box, editBar(trans, id, this.editing.box));
    } else if (content && role === 'user' && typedPieces(content.meta)) {
      body.append(...this.typedQuestion(content.parts, content.meta, id));
    } else if (content) {
      body.append(...this.parts(content.parts, id, role === 'assistant'));
    } else {
      const i = tree.index.get(id);
      body.append(h('div', { class: 'jtc-pending', title: trans.__('loading the full text') }, i === undefined ? '' : plainHead(tree.heads[i])));
    }
    if (this.asking === id && this.options.actions) {
      body.append(askForm(this.options.actions.choices(), trans, id));
    }
    if (this.labeling?.id === id) {
      body.append(h('div', { class: 'jtc-edit-bar' }, this.labeling.box, h('span', { class: 'jtc-hint' }, trans.__('Enter saves · empty removes · Escape cancels'))));
    }
    if (this.details.has(id)) {
      body.append(renderDetails(source, id, trans));
    }
    const classes = ['jtc-msg', `jtc-role-${role}`];
    if (id === source.leaf) {
      classes.push('jtc-leaf');
    }
    if (id === this.end) {
      classes.push('jtc-selected');
    }
    if (this.unseen?.ids.has(id)) {
      classes.push('jtc-unseen');
    }
    const ariaLabel =
      place.count > 1
        ? trans.__('%1 message %2, %3 of %4 (arrow keys switch)', roleName(role, trans), shortId(id), place.pos, place.count)
        : trans.__('%1 message %2', roleName(role, trans), shortId(id));
    return h(
      'article',
      { class: classes.join(' '), 'data-id': id, 'data-depth': depth, tabindex: 0, 'aria-label': ariaLabel },
      header,
      body
    );
  }

  private parts(parts: Part[], id: string, answer: boolean): HTMLElement[] {
    const code = this.options.code;
    const decorate = answer && code ? (holder: HTMLElement) => addCodeBars(holder, id, this.trans, code) : undefined;
    return parts.map((part, k) => {
      switch (part.kind) {
        case 'text':
          return this.options.markdown.element(part.text, decorate);
        case 'thinking':
          return this.thinking(`${id}:${k}`, partTitle(part, this.trans), part.text ? this.options.markdown.element(part.text) : null);
        case 'image':
          return part.src
            ? h('img', { class: 'jtc-thumb', src: part.src, alt: partTitle(part, this.trans), title: partTitle(part, this.trans), 'data-act': 'zoom' })
            : h('span', { class: 'jtc-chip jtc-chip-hidden' }, partTitle(part, this.trans));
        case 'document':
          return h('span', { class: 'jtc-chip jtc-chip-document' }, partTitle(part, this.trans));
        default:
          return h(
            'details',
            { class: `jtc-part jtc-part-${part.kind}` },
            h('summary', {}, partTitle(part, this.trans)),
            h('pre', {}, part.text)
          );
      }
    });
  }

  /** A question as typed: its images and documents as always, then its words with a chip
   * where each substitution stood, what was sent there folded under it (chips.ts). */
  private typedQuestion(parts: Part[], meta: Record<string, unknown>, id: string): HTMLElement[] {
    const text = parts.filter(part => part.kind === 'text').map(part => part.text).join('');
    const typed = renderTyped({
      pieces: typedPieces(meta) ?? [],
      text,
      markdown: this.options.markdown,
      trans: this.trans,
      open: this.openChips,
      key: id
    });
    return [...this.parts(parts.filter(part => part.kind !== 'text'), id, false), typed];
  }

  /** The folded "Thinking" section above an answer (open if a click opened it). */
  private thinking(key: string, title: string, body: HTMLElement | null): HTMLElement {
    return h(
      'details',
      { class: 'jtc-part jtc-part-thinking jtc-thinking', open: this.openThinking.has(key) },
      h('summary', { 'data-act': 'thinking', 'data-key': key }, title),
      body
    );
  }

  private streaming(): HTMLElement {
    const stream = this.source.stream!;
    const trans = this.trans;
    this.streamBody = h('div', { class: 'jtc-markdown' });
    this.options.markdown.fill(this.streamBody, stream.text, { cache: false });
    this.streamThinking = null;
    let thinking: HTMLElement | null = null;
    if (stream.thinking) {
      this.streamThinking = h('div', { class: 'jtc-markdown' });
      this.options.markdown.fill(this.streamThinking, stream.thinking, { cache: false });
      const title = stream.text || stream.done ? trans.__('Thinking') : trans.__('Thinking…');
      thinking = this.thinking(`stream:${stream.parent}`, title, this.streamThinking);
    }
    const state = stream.done ? (stream.error ? trans.__('failed') : trans.__('done')) : trans.__('writing…');
    return h(
      'article',
      { class: 'jtc-msg jtc-role-assistant jtc-streaming', 'data-stream': stream.parent },
      h(
        'div',
        { class: 'jtc-msg-header' },
        h('span', { class: 'jtc-role' }, roleName('assistant', trans)),
        h('span', { class: 'jtc-meta' }, state),
        stream.error ? h('span', { class: 'jtc-status-error' }, stream.error) : null
      ),
      h('div', { class: 'jtc-msg-body' }, thinking, this.streamBody)
    );
  }

  // -- events --------------------------------------------------------------------------

  private save(): void {
    const editing = this.editing;
    const actions = this.options.actions;
    if (!editing || !actions || !editing.box.value.trim()) {
      return;
    }
    if (actions.replying) {
      actions.refuseWhileReplying(); // keep the box and its text: save once the reply is done
      return;
    }
    this.editing = null;
    actions.edit(editing.id, editing.box.value, editsSent(editing.box));
    this.render();
  }

  private cancel(): void {
    this.editing = null;
    this.labeling = null;
    this.render();
  }

  private startEdit(id: string): void {
    const i = this.source.tree.index.get(id);
    const preview = i === undefined ? '' : this.source.tree.heads[i];
    const box = editBox(this.source, id, preview, this.trans.__('Edit the message'));
    this.editing = { id, box };
    this.render();
    box.setSelectionRange(box.value.length, box.value.length);
  }

  private startLabel(id: string): void {
    const box = h('input', { class: 'jtc-label-box', 'aria-label': this.trans.__('Label'), placeholder: this.trans.__('label') }) as HTMLInputElement;
    box.value = this.source.label(id) ?? '';
    this.labeling = { id, box };
    this.render();
  }

  private handleClick(event: Event): void {
    const target = (event.target as HTMLElement).closest<HTMLElement>('[data-act]');
    if (!target || !this.node.contains(target)) {
      return;
    }
    const id = target.dataset.id ?? '';
    const actions = this.options.actions;
    const code = this.options.code;
    if (code && runCodeAction(target, codeBlocks(target.closest('.jtc-markdown') ?? this.node), code)) {
      return;
    }
    switch (target.dataset.act) {
      case 'zoom':
        target.classList.toggle('jtc-open');
        break;
      case 'earlier':
        if (this.windowStart !== null) {
          const before = Math.min(this.windowStart, FIRST_SHOWN);
          this.windowStart -= before;
          this.shown += before;
        } else {
          this.shown += FIRST_SHOWN;
        }
        this.render();
        break;
      case 'later': {
        const length = this.source.tree.pathTo(this.end).length;
        this.shown += FIRST_SHOWN;
        if (this.windowStart !== null && this.windowStart + this.shown >= length) {
          this.shown = length - this.windowStart; // the window reached the end
          this.windowStart = null;
        }
        this.render();
        break;
      }
      case 'select':
      case 'switch':
        if (target.dataset.step) {
          this.options.sibling(id, Number(target.dataset.step) < 0 ? -1 : 1);
        } else {
          this.options.select(id);
        }
        break;
      case 'compare':
        this.options.compare(id);
        break;
      case 'details':
        if (!this.details.delete(id)) {
          this.details.add(id);
        }
        this.render();
        break;
      case 'thinking': {
        // the browser opens or closes the section after this click: note what it will be
        const key = target.dataset.key ?? '';
        if (target.closest('details')?.open) {
          this.openThinking.delete(key);
        } else {
          this.openThinking.add(key);
        }
        break;
      }
      case 'edit':
        this.startEdit(id);
        break;
      case 'save':
        this.save();
        break;
      case 'cancel':
        this.cancel();
        break;
      case 'retry':
        actions?.retry(id);
        break;
      case 'retry-n':
        actions?.fanOut(id, { n: RETRY_N, models: [], temperatures: [] });
        break;
      case 'ask':
        this.asking = this.asking === id ? null : id;
        this.render();
        break;
      case 'ask-cancel':
        this.asking = null;
        this.render();
        break;
      case 'ask-send': {
        const form = target.closest<HTMLElement>('.jtc-ask');
        if (form && actions) {
          const ask = readAskForm(form);
          this.asking = null;
          actions.fanOut(id, ask);
          this.render();
        }
        break;
      }
      case 'label':
        this.startLabel(id);
        break;
    }
  }

  private handleKey(event: KeyboardEvent): void {
    const target = event.target as HTMLElement;
    if (this.editing && target === this.editing.box) {
      saveOrCancel(event, () => this.save(), () => this.cancel());
      return;
    }
    const labeling = this.labeling;
    if (labeling && target === labeling.box) {
      const saveLabel = (): void => {
        this.labeling = null;
        this.options.actions?.setLabel(labeling.id, labeling.box.value.trim());
        this.render();
      };
      saveOrCancel(event, saveLabel, () => this.cancel(), { multiline: false });
      return;
    }
    const message = target.closest<HTMLElement>('.jtc-msg[data-id]');
    if (message && target === message && (event.key === 'ArrowLeft' || event.key === 'ArrowRight')) {
      event.preventDefault();
      this.focusDepth = Number(message.dataset.depth);
      this.options.sibling(message.dataset.id!, event.key === 'ArrowLeft' ? -1 : 1);
    }
  }
}

/** The "Ask other models…" form: models and temperatures to tick, samples of each. */
function askForm(choices: { models: string[]; temperatures: number[] }, trans: Translation, id: string): HTMLElement {
  const box = (kind: string, value: string, label: string): HTMLElement =>
    h('label', { class: 'jtc-ask-choice' }, h('input', { type: 'checkbox', 'data-kind': kind, value }), label);
  return h(
    'div',
    { class: 'jtc-ask', role: 'group', 'aria-label': trans.__('Ask other models') },
    h('div', { class: 'jtc-ask-row' }, h('span', { class: 'jtc-hint' }, trans.__('models')), ...choices.models.map(m => box('model', m, m))),
    h(
      'div',
      { class: 'jtc-ask-row' },
      h('span', { class: 'jtc-hint' }, trans.__('temperatures')),
      ...choices.temperatures.map(t => box('temperature', String(t), String(t)))
    ),
    h(
      'div',
      { class: 'jtc-ask-row' },
      h('label', { class: 'jtc-ask-choice' }, trans.__('answers of each'), h('input', { type: 'number', min: 1, max: 12, value: 1, 'data-kind': 'n', class: 'jtc-ask-n' })),
      button(trans.__('Ask'), { act: 'ask-send', id, look: 'primary', title: trans.__('Every combination, at most 12 answers') }),
      button(trans.__('Cancel'), { act: 'ask-cancel', id, look: 'quiet' })
    )
  );
}

function readAskForm(form: HTMLElement): FanoutAsk {
  const ticked = (kind: string): string[] =>
    Array.from(form.querySelectorAll<HTMLInputElement>(`input[data-kind="${kind}"]`))
      .filter(input => input.checked)
      .map(input => input.value);
  const n = Number(form.querySelector<HTMLInputElement>('input[data-kind="n"]')?.value ?? 1);
  return { n: Number.isFinite(n) && n >= 1 ? Math.floor(n) : 1, models: ticked('model'), temperatures: ticked('temperature').map(Number) };
}
