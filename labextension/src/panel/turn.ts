/**
 * The compact control under a `%%chat` turn: `‹ 2/3 ›` between answers (and between
 * versions of the question once it was edited), Retry, Edit and Compare (the sibling
 * answers side by side, rendered, differences a toggle, "Use this" to continue from one),
 * and the answer's code blocks, each with "Insert below" (a new cell under this one) and
 * "Copy". When the user switches to another answer here, it is shown below the control in
 * place of the printed one (folded away meanwhile: the cell shows one answer at a time),
 * and a retry started here streams into it. A switch made elsewhere (the panel, another
 * cell) only says in the bar which answer the cell shows, with "Show it here".
 */

import { CodeActions, codeBlocks, codeButtons, codeOf, languageOf, runCodeAction } from '../components/code';
import { renderCompare } from '../components/compare';
import { button, editBar, editBox, editsSent, switcher } from '../components/controls';
import { h, listen } from '../components/dom';
import { saveOrCancel } from '../components/keys';
import { Markdown } from '../components/markdown';
import { renderStatus } from '../components/status';
import { Translation } from '../components/translate';
import { summaryLine } from '../components/vocabulary';
import { Store, TurnInfo, summaryOf } from './store';

/** `chosenHere` while a retry asked here is written: its answer is shown once it lands. */
const RETRIED_HERE = '\u0000retry';

export class TurnView {
  readonly node: HTMLElement;
  private readonly bar: HTMLElement;
  private readonly codeRow: HTMLElement;
  /** the code blocks of the answer the control is about, as rendered */
  private blocks: HTMLElement[] = [];
  private readonly status: HTMLElement;
  private readonly body: HTMLElement;
  private editing: HTMLTextAreaElement | null = null;
  private comparing = false;
  private differences = false;
  /** the answer the user switched to in this control: shown in place of the printed one
   * (a switch made elsewhere, in the panel or another cell, changes only the bar) */
  private chosenHere: string | null = null;
  /** the switch to `chosenHere` has reached this control (the kernel answered it) */
  private chosenLanded = false;
  /** the cell's own outputs folded while another answer is shown here */
  private folded: HTMLElement[] = [];
  private frame = 0;
  private readonly unsubscribe: () => void;
  private readonly stopListening: () => void;

  constructor(
    host: HTMLElement,
    private readonly store: Store,
    private readonly trans: Translation,
    private readonly markdown: Markdown,
    private readonly code: CodeActions = {}
  ) {
    this.bar = h('div', { class: 'jtc-turn-bar', tabindex: 0, 'aria-label': trans.__('Answer switcher: arrow keys switch answers') });
    this.status = h('div', { class: 'jtc-status-host' });
    this.body = h('div', { class: 'jtc-turn-body' });
    this.codeRow = h('div', { class: 'jtc-turn-code' });
    this.node = h('div', { class: 'jtc-root jtc-turn' }, this.bar, this.codeRow, this.status, this.body);
    this.stopListening = listen(this.node, {
      click: event => this.handleClick(event),
      keydown: event => this.handleKey(event)
    });
    host.append(this.node);
    this.unsubscribe = store.subscribe(what => this.update(what));
    this.update('all');
  }

  dispose(): void {
    cancelAnimationFrame(this.frame);
    this.fold([]);
    this.unsubscribe();
    this.stopListening();
    this.node.remove();
  }

  private get turn(): TurnInfo | null {
    return this.store.turnInfo();
  }

  private update(what: string): void {
    if (what === 'delta') {
      cancelAnimationFrame(this.frame);
      this.frame = requestAnimationFrame(() => this.renderBody());
      return;
    }
    this.status.replaceChildren(renderStatus(this.store.status(), this.trans));
    if (what !== 'status') {
      this.renderBar();
      this.renderCode();
      this.renderBody();
    }
  }

  private renderBar(): void {
    const turn = this.turn;
    const trans = this.trans;
    if (!turn) {
      this.bar.replaceChildren();
      return;
    }
    const { q, r } = turn;
    const busy = this.store.replying;
    const wait = trans.__('A reply is being written in this session; wait for it to finish');
    const summary = summaryLine(summaryOf(r?.meta ?? null), trans);
    const parts: Array<HTMLElement | null> = [
      q.count > 1 ? switcher({ pos: q.pos, count: q.count, act: 'switch', what: 'question', side: 'q', hint: trans.__('question') }, trans) : null,
      r
        ? switcher({ pos: r.pos, count: r.count, act: 'switch', what: 'answer', side: 'r', hint: trans.__('answer') }, trans)
        : h('span', { class: 'jtc-meta' }, trans.__('no answer yet')),
      button(trans.__('↻ Retry'), { act: 'retry', disabled: busy, title: busy ? wait : trans.__('A new answer beside this one') }),
      button(trans.__('✎ Edit'), { act: 'edit', disabled: busy, title: busy ? wait : trans.__('Edit the question: a new branch') }),
      r && r.count > 1
        ? button(trans.__('Compare'), {
            act: 'compare',
            title: trans.__('The answers side by side'),
            attrs: { 'aria-pressed': String(this.comparing) }
          })
        : null,
      summary ? h('span', { class: 'jtc-meta' }, summary) : null,
      this.printedHint(turn),
      turn.onPath
        ? null
        : h(
            'span',
            { class: 'jtc-hint', title: trans.__('Another branch is current; switching here makes this one current') },
            trans.__('not on the current branch')
          )
    ];
    this.bar.replaceChildren(...parts.filter((part): part is HTMLElement => part !== null));
  }

  /** One line per code block of the answer: its first line, Insert below, Copy. */
  private renderCode(): void {
    const answer = this.turn?.r;
    const full = answer ? this.store.text(answer.id) : undefined;
    if (answer && !full) {
      this.store.requestTexts([answer.id]);
    }
    this.blocks = answer && full ? codeBlocks(this.markdown.element(full.text)) : [];
    if (!answer || !this.blocks.length) {
      this.codeRow.replaceChildren();
      return;
    }
    const insert = this.code.insert !== undefined;
    this.codeRow.replaceChildren(
      ...this.blocks.map((pre, index) => {
        const first = codeOf(pre).split('\n', 1)[0] ?? '';
        return h(
          'div',
          { class: 'jtc-code-bar' },
          languageOf(pre) ? h('span', { class: 'jtc-code-language' }, languageOf(pre)) : null,
          h('code', { class: 'jtc-code-head' }, first.length > 60 ? first.slice(0, 59) + '…' : first),
          ...codeButtons(this.trans, answer.id, index, insert)
        );
      })
    );
  }

  private renderBody(): void {
    const turn = this.turn;
    const store = this.store;
    const trans = this.trans;
    const stream = store.stream;
    if (this.editing) {
      if (!this.body.contains(this.editing)) {
        this.body.replaceChildren(this.editing, editBar(trans, undefined, this.editing));
        this.editing.focus();
      }
      return;
    }
    if (this.comparing && turn?.r && turn.r.count > 1) {
      this.body.replaceChildren(this.compareView(turn.r.id, turn.r.sibs));
      return;
    }
    if (stream && !(stream.done && turn?.r && store.text(turn.r.id))) {
      const holder = h('div', { class: 'jtc-markdown' });
      this.markdown.fill(holder, stream.text, { cache: false });
      const state = stream.done
        ? stream.error
          ? trans.__('failed: %1', stream.error)
          : trans.__('new answer')
        : trans.__('new answer, writing…');
      this.body.replaceChildren(h('div', { class: 'jtc-hint' }, state), holder);
      return;
    }
    if (this.chosenHere === RETRIED_HERE && turn?.r && turn.r.id !== turn.shown) {
      this.chosenHere = turn.r.id; // the answer a retry started here wrote
    } else if (this.chosenHere !== null && turn?.r?.id === this.chosenHere) {
      this.chosenLanded = true;
    } else if (this.chosenLanded) {
      this.chosenHere = null; // moved elsewhere since: a later switch there only tells the bar
      this.chosenLanded = false;
    }
    if (!turn?.r || turn.r.id === turn.shown || turn.r.id !== this.chosenHere) {
      this.body.replaceChildren(); // the printed answer, or one chosen elsewhere: the bar says
      this.fold([]);
      return;
    }
    this.fold(this.printedOutputs());
    const full = store.text(turn.r.id);
    if (!full) {
      store.requestTexts([turn.r.id]);
      this.body.replaceChildren(h('div', { class: 'jtc-pending' }, trans.__('loading this answer…')));
      return;
    }
    this.body.replaceChildren(
      h('div', { class: 'jtc-hint' }, trans.__('Answer %1/%2, shown in place of the one this cell printed (hidden until you switch back)', turn.r.pos, turn.r.count)),
      this.markdown.element(full.text)
    );
  }

  /** `the cell shows answer 2 · Show 1/2 here` in the bar, where the current answer is not
   * the printed one and was not chosen here: one line, so the notebook neither grows nor
   * jumps when a switch elsewhere moves this turn. */
  private printedHint(turn: TurnInfo): HTMLElement | null {
    const r = turn.r;
    if (!r || !turn.shown || r.id === turn.shown || r.id === this.chosenHere) {
      return null;
    }
    const printed = r.sibs.indexOf(turn.shown) + 1;
    return h(
      'span',
      { class: 'jtc-hint jtc-printed-hint' },
      printed > 0 ? this.trans.__('the cell shows answer %1', printed) : this.trans.__('the cell shows another answer'),
      ' ',
      button(this.trans.__('Show %1/%2 here', r.pos, r.count), { act: 'show', title: this.trans.__('Show the current answer in place of the printed one') })
    );
  }

  /** The outputs this cell printed above the control (its answer, footer, notes). */
  private printedOutputs(): HTMLElement[] {
    const mine = this.node.closest<HTMLElement>('.jp-OutputArea-child');
    const area = mine?.parentElement;
    if (!mine || !area) {
      return [];
    }
    const children = Array.from(area.children) as HTMLElement[];
    return children.slice(0, children.indexOf(mine)).filter(child => !child.querySelector('.jp-RenderedText'));
  }

  /** Fold `outputs` away (and unfold the ones folded before): one answer shows at a time. */
  private fold(outputs: HTMLElement[]): void {
    for (const output of this.folded) {
      if (!outputs.includes(output)) {
        output.classList.remove('jtc-folded-by-turn');
      }
    }
    for (const output of outputs) {
      output.classList.add('jtc-folded-by-turn');
    }
    this.folded = outputs;
  }

  private compareView(shown: string, sibs: string[]): HTMLElement {
    const ids = [shown, ...sibs.filter(id => id !== shown)];
    return renderCompare(this.store, ids, this.trans, {
      navigate: 'switch',
      markdown: this.markdown,
      differences: this.differences,
      toggleDifferences: () => {
        this.differences = !this.differences;
        this.renderBody();
      },
      choose: id => {
        this.chosenHere = id;
        this.chosenLanded = false;
        this.store.act({ a: 'switch', id });
      },
      close: () => {
        this.comparing = false;
        this.renderBar();
        this.renderBody();
      },
      place: id => ({ pos: sibs.indexOf(id) + 1, count: sibs.length })
    });
  }

  private startEdit(): void {
    const turn = this.turn;
    if (!turn) {
      return;
    }
    this.editing = editBox(this.store, turn.q.id, turn.q.head, this.trans.__('Edit the question'));
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
    this.store.edit(turn.q.id, box.value, editsSent(box));
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
      this.chosenHere = side === 'r' ? next : null;
      this.chosenLanded = false;
      this.store.act({ a: 'switch', id: next });
    }
  }

  private handleClick(event: Event): void {
    const target = (event.target as HTMLElement).closest<HTMLElement>('[data-act]');
    const turn = this.turn;
    if (!target || !turn || runCodeAction(target, this.blocks, this.code)) {
      return;
    }
    switch (target.dataset.act) {
      case 'retry':
        this.chosenHere = RETRIED_HERE;
        this.store.act({ a: 'retry', id: turn.r ? turn.r.id : turn.q.id });
        break;
      case 'edit':
        this.startEdit();
        break;
      case 'compare':
        this.comparing = !this.comparing;
        this.renderBar();
        this.renderBody();
        break;
      case 'save':
        this.save();
        break;
      case 'cancel':
        this.editing = null;
        this.renderBody();
        break;
      case 'switch':
        this.step(target.dataset.side === 'q' ? 'q' : 'r', Number(target.dataset.step));
        break;
      case 'show':
        this.chosenHere = turn.r ? turn.r.id : null;
        this.renderBar();
        this.renderBody();
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
