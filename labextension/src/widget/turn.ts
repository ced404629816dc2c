/**
 * The compact control under a `%%chat` turn: `‹ 2/3 ›` between answers (and between
 * versions of the question once it was edited), Retry and Edit. When the answer on the
 * current branch is not the one the cell printed, it is shown below the control, and a
 * retry started here streams into it.
 */

import { h } from '../render/dom';
import { setSanitizedHtml } from '../render/safety';
import { saveOrCancel } from './keys';
import { renderMarkdown } from './markdown';
import { Store, TurnInfo, WAIT_TITLE, metaLine } from './model';
import { renderStatus } from './status';

export class TurnView {
  readonly node: HTMLElement;
  private readonly bar: HTMLElement;
  private readonly status: HTMLElement;
  private readonly body: HTMLElement;
  private editing: HTMLTextAreaElement | null = null;
  private frame = 0;
  private readonly unsubscribe: () => void;
  private readonly onClick = (event: Event): void => this.handleClick(event);
  private readonly onKey = (event: KeyboardEvent): void => this.handleKey(event);

  constructor(host: HTMLElement, private readonly store: Store) {
    this.bar = h('div', { class: 'jtw-turn-bar', tabindex: 0, 'aria-label': 'Answer switcher: arrow keys switch answers' });
    this.status = h('div', { class: 'jtw-status-host' });
    this.body = h('div', { class: 'jtw-turn-body' });
    this.node = h('div', { class: 'jtw-widget jtw-turn' }, this.bar, this.status, this.body);
    this.node.addEventListener('click', this.onClick);
    this.node.addEventListener('keydown', this.onKey);
    host.append(this.node);
    this.unsubscribe = store.subscribe(what => this.update(what));
    this.update('all');
  }

  dispose(): void {
    cancelAnimationFrame(this.frame);
    this.unsubscribe();
    this.node.removeEventListener('click', this.onClick);
    this.node.removeEventListener('keydown', this.onKey);
    this.node.remove();
  }

  private get turn(): TurnInfo | null {
    const turn = this.store.model.get('turn');
    return turn && turn.q ? turn : null;
  }

  private update(what: string): void {
    if (what === 'delta') {
      cancelAnimationFrame(this.frame);
      this.frame = requestAnimationFrame(() => this.renderBody());
      return;
    }
    this.status.replaceChildren(renderStatus(this.store));
    if (what !== 'status') {
      this.renderBar();
      this.renderBody();
    }
  }

  private renderBar(): void {
    const turn = this.turn;
    if (!turn) {
      this.bar.replaceChildren();
      return;
    }
    const { q, r } = turn;
    const busy = this.store.model.get('busy');
    const parts: Array<HTMLElement | null> = [
      q.count > 1 ? this.switcher('question', 'q', q.pos, q.count) : null,
      r ? this.switcher('answer', 'r', r.pos, r.count) : h('span', { class: 'jtw-meta' }, 'no answer yet'),
      h('button', { class: 'jtw-button', 'data-act': 'retry', disabled: busy, title: busy ? WAIT_TITLE : 'A new answer beside this one' }, '↻ Retry'),
      h('button', { class: 'jtw-button', 'data-act': 'edit', disabled: busy, title: busy ? WAIT_TITLE : 'Edit the question: a new branch' }, '✎ Edit'),
      r?.meta ? h('span', { class: 'jtw-meta' }, metaLine(r.meta)) : null,
      turn.onPath ? null : h('span', { class: 'jtw-hint', title: 'Another branch is current; switching here makes this one current' }, 'not on the current branch')
    ];
    this.bar.replaceChildren(...parts.filter((part): part is HTMLElement => part !== null));
  }

  private switcher(what: string, side: 'q' | 'r', pos: number, count: number): HTMLElement {
    return h(
      'span',
      { class: 'jtw-switcher', 'data-side': side },
      h('span', { class: 'jtw-hint' }, what),
      h('button', { class: 'jtw-arrow', 'data-act': 'sib', 'data-side': side, 'data-step': -1, disabled: pos <= 1, title: `previous ${what} (←)` }, '‹'),
      h('span', { class: 'jtw-position', 'data-side': side }, `${pos}/${count}`),
      h('button', { class: 'jtw-arrow', 'data-act': 'sib', 'data-side': side, 'data-step': 1, disabled: pos >= count, title: `next ${what} (→)` }, '›')
    );
  }

  private renderBody(): void {
    const turn = this.turn;
    const store = this.store;
    const stream = store.stream;
    if (this.editing) {
      if (!this.body.contains(this.editing)) {
        this.body.replaceChildren(
          this.editing,
          h(
            'div',
            { class: 'jtw-edit-bar' },
            h('span', { class: 'jtw-hint' }, 'Enter saves as a new branch · Shift+Enter new line · Escape cancels'),
            h('button', { class: 'jtw-button jtw-primary', 'data-act': 'save' }, 'Save'),
            h('button', { class: 'jtw-button', 'data-act': 'cancel' }, 'Cancel')
          )
        );
        this.editing.focus();
      }
      return;
    }
    if (stream && !(stream.done && turn?.r && store.text(turn.r.id))) {
      const holder = h('div', { class: 'jtw-markdown' });
      setSanitizedHtml(holder, renderMarkdown(stream.text));
      this.body.replaceChildren(
        h('div', { class: 'jtw-hint' }, stream.done ? (stream.error ? `failed: ${stream.error}` : 'new answer') : 'new answer, writing…'),
        holder
      );
      return;
    }
    if (!turn?.r || turn.r.id === turn.shown) {
      this.body.replaceChildren();
      return;
    }
    const full = store.text(turn.r.id);
    if (!full) {
      store.requestTexts([turn.r.id]);
      this.body.replaceChildren(h('div', { class: 'jtw-pending' }, 'loading this answer…'));
      return;
    }
    const holder = h('div', { class: 'jtw-markdown' });
    setSanitizedHtml(holder, renderMarkdown(full.text));
    this.body.replaceChildren(
      h('div', { class: 'jtw-hint' }, `Answer ${turn.r.pos}/${turn.r.count} (the cell above shows the one it printed)`),
      holder
    );
  }

  private startEdit(): void {
    const turn = this.turn;
    if (!turn) {
      return;
    }
    const box = h('textarea', { class: 'jtw-edit-box', rows: 3, 'aria-label': 'Edit the question' }) as HTMLTextAreaElement;
    const full = this.store.text(turn.q.id);
    box.value = full ? full.text : turn.q.head;
    if (!full) {
      // the head may be cut; fill in the whole text when it arrives, unless typed over
      this.store.requestTexts([turn.q.id]);
      const initial = box.value;
      const stop = this.store.subscribe(what => {
        const got = this.store.text(turn.q.id);
        if (what === 'texts' && got) {
          if (box.value === initial) {
            box.value = got.text;
          }
          stop();
        }
      });
    }
    this.editing = box;
    this.renderBody();
  }

  private save(): void {
    const turn = this.turn;
    const box = this.editing;
    if (!turn || !box || !box.value.trim()) {
      return;
    }
    if (this.store.replying) {
      this.store.refuseWhileReplying(); // keep the box and its text: save once the reply is done
      return;
    }
    this.editing = null;
    this.store.act({ a: 'edit', id: turn.q.id, text: box.value });
    this.renderBody();
  }

  private step(side: 'q' | 'r', step: number): void {
    const turn = this.turn;
    const sibs = side === 'q' ? turn?.q.sibs : turn?.r?.sibs;
    const current = side === 'q' ? turn?.q : turn?.r;
    if (!sibs || !current) {
      return;
    }
    const next = sibs[current.pos - 1 + step];
    if (next !== undefined) {
      this.store.act({ a: 'switch', id: next });
    }
  }

  private handleClick(event: Event): void {
    const target = (event.target as HTMLElement).closest<HTMLElement>('[data-act]');
    const turn = this.turn;
    if (!target || !turn) {
      return;
    }
    switch (target.dataset.act) {
      case 'retry':
        this.store.act({ a: 'retry', id: turn.r ? turn.r.id : turn.q.id });
        break;
      case 'edit':
        this.startEdit();
        break;
      case 'save':
        this.save();
        break;
      case 'cancel':
        this.editing = null;
        this.renderBody();
        break;
      case 'sib':
        this.step(target.dataset.side === 'q' ? 'q' : 'r', Number(target.dataset.step));
        break;
    }
  }

  private handleKey(event: KeyboardEvent): void {
    const target = event.target as HTMLElement;
    if (this.editing && target === this.editing) {
      const cancel = () => {
        this.editing = null;
        this.renderBody();
      };
      saveOrCancel(event, () => this.save(), cancel);
      return;
    }
    if (target === this.bar && (event.key === 'ArrowLeft' || event.key === 'ArrowRight')) {
      event.preventDefault();
      this.step('r', event.key === 'ArrowLeft' ? -1 : 1);
    }
  }
}
