/**
 * The search box above the tree, in the panel, the viewer and an exported page: find a
 * node on any branch. Typing marks every match in the list and the picture; Enter goes
 * to the next match and Shift+Enter to the one before, each shown as the view shows a
 * clicked node (the viewer and a page: its path; the panel: its branch); Escape clears.
 * Text inside thinking and tool results counts; case is ignored unless asked (`Aa`);
 * `.*` reads the text as a regular expression. Matches in hidden branches are counted
 * and a button shows those branches.
 *
 * Who answers is the view's `Finder`: the file's source in the browser (find.ts), the
 * kernel for the panel (its answer may come later; an answer to an older query is
 * dropped). The component only asks, counts and moves; what marking and showing mean
 * is the view's.
 */

import { h, listen } from './dom';
import { FindQuery, FindResult, Finder } from './find';
import { Translation } from './translate';

export interface SearchHost {
  finder: Finder;
  /** the hidden branches the view folds away now */
  folds(): readonly string[];
  /** mark these matches (`current`: the one Enter went to, or null); null clears */
  mark(ids: readonly string[] | null, current: string | null): void;
  /** show this match as a click on its row would */
  show(id: string): void;
  /** whether the view lists hidden branches; and make it list them */
  showingHidden(): boolean;
  showHidden(): void;
}

export class SearchBox {
  readonly node: HTMLElement;
  private readonly input: HTMLInputElement;
  private readonly count: HTMLElement;
  private readonly hiddenButton: HTMLElement;
  private regex = false;
  private caseSensitive = false;
  private result: FindResult = { ids: [], hidden: 0 };
  private current = -1;
  private asked = 0;
  private readonly stopListening: () => void;

  constructor(
    private readonly trans: Translation,
    private readonly host: SearchHost
  ) {
    this.input = h('input', {
      class: 'jtc-search-input',
      type: 'search',
      placeholder: trans.__('Find in every branch'),
      'aria-label': trans.__('Find in every branch'),
      title: trans.__('Enter: next match · Shift+Enter: previous · Escape: clear'),
      spellcheck: 'false'
    }) as HTMLInputElement;
    const toggle = (action: string, text: string, title: string): HTMLElement =>
      h('button', { class: 'jtc-button jtc-quiet jtc-search-option', 'data-search': action, 'aria-pressed': 'false', title }, text);
    this.count = h('span', { class: 'jtc-search-count', 'aria-live': 'polite' });
    this.hiddenButton = h('button', { class: 'jtc-button jtc-quiet jtc-search-hidden', 'data-search': 'hidden', hidden: true });
    this.node = h(
      'div',
      { class: 'jtc-search', role: 'search' },
      this.input,
      toggle('case', trans._p('search option', 'Aa'), trans.__('Match case')),
      toggle('regex', trans._p('search option', '.*'), trans.__('Regular expression')),
      this.count,
      h('button', { class: 'jtc-button jtc-quiet jtc-search-step', 'data-search': 'previous', title: trans.__('Previous match (Shift+Enter)') }, trans._p('arrow', '↑')),
      h('button', { class: 'jtc-button jtc-quiet jtc-search-step', 'data-search': 'next', title: trans.__('Next match (Enter)') }, trans._p('arrow', '↓')),
      this.hiddenButton
    );
    this.stopListening = listen(this.node, {
      focusin: () => this.host.finder.prepare?.(),
      input: () => this.run(),
      keydown: event => this.handleKey(event),
      click: event => this.handleClick(event)
    });
  }

  dispose(): void {
    this.stopListening();
  }

  /** The text being searched for. */
  get text(): string {
    return this.input.value;
  }

  /** The matches now, in the tree's order. */
  get matches(): readonly string[] {
    return this.result.ids;
  }

  /** Search again (the tree grew, hidden branches were shown or folded). */
  refresh(): void {
    if (this.input.value) {
      this.run(false);
    }
  }

  /** Empty the box and take the marks away. */
  clear(): void {
    this.input.value = '';
    this.asked++;
    this.result = { ids: [], hidden: 0 };
    this.current = -1;
    this.host.mark(null, null);
    this.renderCount();
    this.node.dataset.answered = '';
  }

  private query(): FindQuery {
    return {
      text: this.input.value,
      regex: this.regex,
      caseSensitive: this.caseSensitive,
      role: null,
      includeHidden: this.host.showingHidden()
    };
  }

  /** Ask the finder; `fresh`: a new query (the place in the matches starts over). */
  private run(fresh = true): void {
    if (!this.input.value) {
      this.clear();
      return;
    }
    const asked = ++this.asked;
    const keep = fresh ? null : this.result.ids[this.current] ?? null;
    const answered = (result: FindResult): void => {
      if (asked !== this.asked) {
        return; // the text changed since: a newer answer is coming
      }
      this.result = result;
      this.current = keep === null ? -1 : result.ids.indexOf(keep);
      this.host.mark(result.ids, this.currentId());
      this.renderCount();
      this.node.dataset.answered = this.input.value; // what the marks are for (tests, benchmarks)
    };
    const found = this.host.finder.find(this.query(), this.host.folds());
    if (found instanceof Promise) {
      found.then(answered, (error: unknown) => answered({ ids: [], hidden: 0, error: String(error) }));
    } else {
      answered(found);
    }
  }

  private currentId(): string | null {
    return this.current >= 0 ? this.result.ids[this.current] ?? null : null;
  }

  /** Go to the next (`1`) or previous (`-1`) match, round the end. */
  step(by: 1 | -1): void {
    const ids = this.result.ids;
    if (!ids.length) {
      return;
    }
    this.current = this.current < 0 ? (by > 0 ? 0 : ids.length - 1) : (this.current + by + ids.length) % ids.length;
    const id = ids[this.current];
    this.host.mark(ids, id);
    this.renderCount();
    this.host.show(id);
  }

  private renderCount(): void {
    const { trans } = this;
    const { ids, hidden, error } = this.result;
    this.node.classList.toggle('jtc-search-error', Boolean(error));
    if (error) {
      this.count.textContent = trans.__('not a regular expression');
      this.count.title = error;
    } else if (!this.input.value) {
      this.count.textContent = '';
      this.count.title = '';
    } else if (!ids.length) {
      this.count.textContent = trans.__('no match');
      this.count.title = '';
    } else {
      this.count.textContent =
        this.current >= 0 ? trans.__('%1 of %2', this.current + 1, ids.length) : trans._n('%1 match', '%1 matches', ids.length);
      this.count.title = '';
    }
    this.hiddenButton.hidden = !hidden;
    this.hiddenButton.textContent = hidden ? trans._n('+%1 in a hidden branch', '+%1 in hidden branches', hidden) : '';
    this.hiddenButton.title = trans.__('Show the hidden branches (they are folded away, never deleted)');
  }

  private handleKey(event: KeyboardEvent): void {
    if (event.target !== this.input) {
      return;
    }
    if (event.key === 'Enter') {
      event.preventDefault();
      this.step(event.shiftKey ? -1 : 1);
    } else if (event.key === 'Escape') {
      event.preventDefault();
      event.stopPropagation(); // the view's own Escape (close the compare) waits for the next one
      this.clear();
    }
  }

  private handleClick(event: Event): void {
    const button = (event.target as HTMLElement).closest<HTMLElement>('[data-search]');
    if (!button) {
      return;
    }
    const action = button.dataset.search;
    if (action === 'next' || action === 'previous') {
      this.step(action === 'next' ? 1 : -1);
    } else if (action === 'hidden') {
      this.host.showHidden();
    } else if (action === 'regex' || action === 'case') {
      if (action === 'regex') {
        this.regex = !this.regex;
      } else {
        this.caseSensitive = !this.caseSensitive;
      }
      button.setAttribute('aria-pressed', String(action === 'regex' ? this.regex : this.caseSensitive));
      this.run();
    }
  }
}
