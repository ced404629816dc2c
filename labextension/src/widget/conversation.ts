/**
 * The active path as a conversation: each message with its place among its siblings
 * (`‹ 2/3 ›`), inline edit for the user's messages, retry, label, details and compare.
 * Only the last messages are drawn at first and their full text is fetched when drawn;
 * a reply being written is shown at the end as it streams.
 */

import { h } from '../render/dom';
import { setSanitizedHtml } from '../render/safety';
import { saveOrCancel } from './keys';
import { renderMarkdown } from './markdown';
import { Action, Store, WAIT_TITLE, metaLine, shortId } from './model';

export const FIRST_SHOWN = 30;

export interface ConversationCallbacks {
  act(action: Action): void;
  compare(id: string): void;
}

export class Conversation {
  readonly node: HTMLElement;
  shown = FIRST_SHOWN;
  private editing: { id: string; box: HTMLTextAreaElement } | null = null;
  private labeling: { id: string; box: HTMLInputElement } | null = null;
  private details = new Set<string>();
  private streamBody: HTMLElement | null = null;
  private frame = 0;
  private focusDepth = -1;
  private readonly onClick = (event: Event): void => this.handleClick(event);
  private readonly onKey = (event: KeyboardEvent): void => this.handleKey(event);

  constructor(
    private readonly store: Store,
    private readonly callbacks: ConversationCallbacks
  ) {
    this.node = h('section', { class: 'jtw-conversation', 'aria-label': 'Conversation' });
    this.node.addEventListener('click', this.onClick);
    this.node.addEventListener('keydown', this.onKey);
  }

  dispose(): void {
    cancelAnimationFrame(this.frame);
    this.node.removeEventListener('click', this.onClick);
    this.node.removeEventListener('keydown', this.onKey);
  }

  /** The leaf whose path is shown: the reply's parent while one streams. */
  leaf(): string | null {
    const stream = this.store.stream;
    return stream ? stream.parent : this.store.leaf;
  }

  render(): void {
    const s = this.store;
    const path = s.pathTo(this.leaf());
    const start = Math.max(0, path.length - this.shown);
    const visible = path.slice(start);
    s.requestTexts(visible);
    const children: HTMLElement[] = [
      h(
        'h3',
        { class: 'jtw-section-title' },
        `Current branch · ${path.length} message${path.length === 1 ? '' : 's'}`
      )
    ];
    if (start > 0) {
      children.push(
        h('button', { class: 'jtw-button jtw-earlier', 'data-act': 'earlier' }, `Show ${Math.min(start, FIRST_SHOWN)} earlier of ${start}`)
      );
    }
    visible.forEach((id, k) => children.push(this.message(id, start + k)));
    this.streamBody = null;
    if (s.stream) {
      children.push(this.streaming());
    }
    if (!path.length && !s.stream) {
      children.push(h('p', { class: 'jtw-empty-note' }, 'No messages yet: run a %%chat cell.'));
    }
    this.node.replaceChildren(...children);
    if (this.editing) {
      this.editing.box.focus();
    } else if (this.labeling) {
      this.labeling.box.focus();
    } else if (this.focusDepth >= 0) {
      this.node.querySelector<HTMLElement>(`.jtw-msg[data-depth="${this.focusDepth}"]`)?.focus();
      this.focusDepth = -1;
    }
  }

  /** Scroll the message `id` into view, drawing earlier messages if needed. */
  reveal(id: string): void {
    const path = this.store.pathTo(this.leaf());
    const at = path.indexOf(id);
    if (at >= 0 && at < path.length - this.shown) {
      this.shown = path.length - at;
      this.render();
    }
    this.node.querySelector<HTMLElement>(`.jtw-msg[data-id="${CSS.escape(id)}"]`)?.scrollIntoView?.({ block: 'nearest' });
  }

  /** New streamed text: redraw only the streaming body, once per frame. */
  delta(): void {
    cancelAnimationFrame(this.frame);
    this.frame = requestAnimationFrame(() => {
      if (this.streamBody && this.store.stream) {
        setSanitizedHtml(this.streamBody, renderMarkdown(this.store.stream.text));
      }
    });
  }

  private message(id: string, depth: number): HTMLElement {
    const s = this.store;
    const i = s.index.get(id)!;
    const role = s.roles[i];
    const siblings = s.siblings(id);
    const pos = siblings.indexOf(id);
    const full = s.text(id);
    const label = s.labels[id];
    const meta = s.metas[i];
    const answered = s.children[i].length > 0;
    const replying = s.replying;
    const actions: Array<HTMLElement | null> = [
      role === 'u'
        ? h('button', { class: 'jtw-button', 'data-act': 'edit', 'data-id': id, disabled: replying, title: replying ? WAIT_TITLE : 'Edit this message: saving makes a new branch' }, 'Edit')
        : null,
      role === 'a' || !answered || id === s.leaf // the leaf: a failed reply left it unanswered here
        ? h('button', { class: 'jtw-button', 'data-act': 'retry', 'data-id': id, disabled: replying, title: replying ? WAIT_TITLE : 'Ask again: a new answer beside this one' }, 'Retry')
        : null,
      siblings.length > 1
        ? h('button', { class: 'jtw-button', 'data-act': 'compare', 'data-id': id, title: 'These versions side by side' }, `Compare ${siblings.length}`)
        : null,
      h('button', { class: 'jtw-button jtw-quiet', 'data-act': 'label', 'data-id': id, title: 'Name this node' }, 'Label'),
      h('button', { class: 'jtw-button jtw-quiet', 'data-act': 'details', 'data-id': id, title: 'Node details', 'aria-expanded': String(this.details.has(id)) }, 'Info')
    ];
    const header = h(
      'div',
      { class: 'jtw-msg-header' },
      h('span', { class: 'jtw-role' }, role === 'a' ? 'Assistant' : role === 't' ? 'Tool results' : 'You'),
      h('span', { class: 'jtw-id', title: id }, shortId(id)),
      siblings.length > 1 ? this.switcher(siblings, pos, id) : null,
      label ? h('span', { class: 'jtw-label' }, label) : null,
      meta ? h('span', { class: 'jtw-meta' }, metaLine(meta)) : null,
      meta && meta[4] ? h('span', { class: 'jtw-interrupted' }, 'cut short') : null,
      h('span', { class: 'jtw-actions' }, ...actions)
    );
    const body = h('div', { class: 'jtw-msg-body' });
    if (this.editing?.id === id) {
      body.append(
        this.editing.box,
        h(
          'div',
          { class: 'jtw-edit-bar' },
          h('span', { class: 'jtw-hint' }, 'Enter saves as a new branch · Shift+Enter new line · Escape cancels'),
          h('button', { class: 'jtw-button jtw-primary', 'data-act': 'save', 'data-id': id }, 'Save'),
          h('button', { class: 'jtw-button', 'data-act': 'cancel', 'data-id': id }, 'Cancel')
        )
      );
    } else if (full) {
      const holder = h('div', { class: 'jtw-markdown' });
      setSanitizedHtml(holder, renderMarkdown(full.text));
      body.append(holder);
    } else {
      body.append(h('div', { class: 'jtw-pending', title: 'loading the full text' }, s.heads[i]));
    }
    if (this.labeling?.id === id) {
      body.append(
        h('div', { class: 'jtw-edit-bar' }, this.labeling.box, h('span', { class: 'jtw-hint' }, 'Enter saves · empty removes · Escape cancels'))
      );
    }
    if (this.details.has(id)) {
      body.append(this.detailsList(id));
    }
    return h(
      'article',
      {
        class: `jtw-msg jtw-role-${role}${id === s.leaf ? ' jtw-leaf' : ''}`,
        'data-id': id,
        'data-depth': depth,
        tabindex: 0,
        'aria-label': `${role === 'a' ? 'assistant' : 'user'} message ${shortId(id)}` + (siblings.length > 1 ? `, ${pos + 1} of ${siblings.length} (arrow keys switch)` : '')
      },
      header,
      body
    );
  }

  private switcher(siblings: string[], pos: number, id: string): HTMLElement {
    return h(
      'span',
      { class: 'jtw-switcher' },
      h('button', { class: 'jtw-arrow', 'data-act': 'sib', 'data-id': id, 'data-step': -1, title: 'previous version (←)', disabled: pos === 0 }, '‹'),
      h('span', { class: 'jtw-position' }, `${pos + 1}/${siblings.length}`),
      h('button', { class: 'jtw-arrow', 'data-act': 'sib', 'data-id': id, 'data-step': 1, title: 'next version (→)', disabled: pos === siblings.length - 1 }, '›')
    );
  }

  private streaming(): HTMLElement {
    const stream = this.store.stream!;
    this.streamBody = h('div', { class: 'jtw-markdown' });
    setSanitizedHtml(this.streamBody, renderMarkdown(stream.text));
    return h(
      'article',
      { class: 'jtw-msg jtw-role-a jtw-streaming', 'data-stream': stream.parent },
      h(
        'div',
        { class: 'jtw-msg-header' },
        h('span', { class: 'jtw-role' }, 'Assistant'),
        h('span', { class: 'jtw-meta' }, stream.done ? (stream.error ? 'failed' : 'done') : 'writing…'),
        stream.error ? h('span', { class: 'jtw-status-error' }, stream.error) : null
      ),
      h('div', { class: 'jtw-msg-body' }, this.streamBody)
    );
  }

  private detailsList(id: string): HTMLElement {
    const full = this.store.text(id);
    const rows: Array<[string, string]> = [
      ['id', id],
      ['parent', this.store.parentOf(id) ?? '(root)'],
      ['children', String(this.store.childIds(id).length)]
    ];
    for (const [key, value] of Object.entries(full?.meta ?? {})) {
      rows.push([key, typeof value === 'string' ? value : JSON.stringify(value)]);
    }
    const list = h('dl', { class: 'jtw-details' });
    for (const [key, value] of rows) {
      list.append(h('dt', {}, key), h('dd', { 'data-key': key }, value));
    }
    return list;
  }

  // -- events --------------------------------------------------------------------------

  private startEdit(id: string): void {
    const box = h('textarea', { class: 'jtw-edit-box', rows: 3, 'aria-label': 'Edit the message' }) as HTMLTextAreaElement;
    const full = this.store.text(id);
    box.value = full ? full.text : this.store.heads[this.store.index.get(id)!];
    if (!full) {
      // the row's summary is cut and plain (no Markdown): the whole text replaces it when
      // it arrives, unless typed over
      this.store.requestTexts([id]);
      const initial = box.value;
      const stop = this.store.subscribe(what => {
        const got = this.store.text(id);
        if (what === 'texts' && got) {
          if (box.value === initial) {
            box.value = got.text;
          }
          stop();
        }
      });
    }
    this.editing = { id, box };
    this.render();
    box.setSelectionRange(box.value.length, box.value.length);
  }

  private save(): void {
    const editing = this.editing;
    if (!editing) {
      return;
    }
    const text = editing.box.value;
    if (!text.trim()) {
      return;
    }
    if (this.store.replying) {
      this.store.refuseWhileReplying(); // keep the box and its text: save once the reply is done
      return;
    }
    this.editing = null;
    this.callbacks.act({ a: 'edit', id: editing.id, text });
    this.render();
  }

  private cancel(): void {
    this.editing = null;
    this.labeling = null;
    this.render();
  }

  private sibling(id: string, step: number): void {
    const siblings = this.store.siblings(id);
    const next = siblings[siblings.indexOf(id) + step];
    if (next !== undefined) {
      this.callbacks.act({ a: 'switch', id: next });
    }
  }

  private handleClick(event: Event): void {
    const target = (event.target as HTMLElement).closest<HTMLElement>('[data-act]');
    if (!target) {
      return;
    }
    const id = target.dataset.id ?? '';
    switch (target.dataset.act) {
      case 'earlier':
        this.shown += FIRST_SHOWN;
        this.render();
        break;
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
        this.callbacks.act({ a: 'retry', id });
        break;
      case 'compare':
        this.callbacks.compare(id);
        break;
      case 'sib':
        this.sibling(id, Number(target.dataset.step));
        break;
      case 'details':
        if (this.details.has(id)) {
          this.details.delete(id);
        } else {
          this.details.add(id);
        }
        this.render();
        break;
      case 'label': {
        const box = h('input', { class: 'jtw-label-box', 'aria-label': 'Label', placeholder: 'label' }) as HTMLInputElement;
        box.value = this.store.labels[id] ?? '';
        this.labeling = { id, box };
        this.render();
        break;
      }
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
      const saveLabel = () => {
        this.labeling = null;
        this.callbacks.act({ a: 'label', id: labeling.id, label: labeling.box.value.trim() });
        this.render();
      };
      saveOrCancel(event, saveLabel, () => this.cancel(), { multiline: false });
      return;
    }
    const message = target.closest<HTMLElement>('.jtw-msg[data-id]');
    if (message && target === message && (event.key === 'ArrowLeft' || event.key === 'ArrowRight')) {
      event.preventDefault();
      this.focusDepth = Number(message.dataset.depth);
      this.sibling(message.dataset.id!, event.key === 'ArrowLeft' ? -1 : 1);
    }
  }
}
