/**
 * The control under a `%%chat --over` cell: its experiment as a grid (the kernel sends
 * it whole as the `grid` trait: widget/experiment_grid.py), the same component as the
 * panel's and the viewer's (components/experiment.ts). A cell switches the session to
 * that answer's branch (a plain next cell continues from it) and opens the answer below
 * the grid, rendered through the sanitizer like any answer.
 */

import { h } from '../components/dom';
import { GridData, renderGrid } from '../components/experiment';
import { Markdown } from '../components/markdown';
import { newPlace } from '../components/rowwindow';
import { Translation } from '../components/translate';
import { Store } from './store';

export class GridView {
  readonly node: HTMLElement;
  private readonly gridHost: HTMLElement;
  private readonly body: HTMLElement;
  private filter = '';
  private readonly place = newPlace();
  private opened: string | null = null;
  private readonly unsubscribe: () => void;
  private readonly redraw = (): void => this.renderGrid();

  constructor(
    host: HTMLElement,
    private readonly store: Store,
    private readonly trans: Translation,
    private readonly markdown: Markdown
  ) {
    this.gridHost = h('div', { class: 'jtc-cell-grid' });
    this.body = h('div', { class: 'jtc-turn-body' });
    this.node = h('div', { class: 'jtc-root jtc-grid-control' }, this.gridHost, this.body);
    host.append(this.node);
    this.unsubscribe = store.subscribe(what => {
      if (what === 'texts' && this.opened) {
        this.renderAnswer();
      }
    });
    store.model.on('change:grid', this.redraw);
    this.renderGrid();
  }

  dispose(): void {
    this.unsubscribe();
    this.store.model.off('change:grid', this.redraw);
    this.node.remove();
  }

  private renderGrid(): void {
    const data = this.store.model.get('grid') as GridData | undefined;
    if (!data || !data.lines) {
      this.gridHost.replaceChildren();
      return;
    }
    this.gridHost.replaceChildren(
      renderGrid(data, this.trans, {
        navigate: 'switch',
        filter: this.filter,
        setFilter: text => {
          this.filter = text;
        },
        place: this.place,
        choose: id => {
          this.store.act({ a: 'switch', id });
          this.opened = id;
          this.renderAnswer();
        }
      })
    );
  }

  private renderAnswer(): void {
    const id = this.opened;
    if (id === null) {
      return;
    }
    const full = this.store.text(id);
    if (!full) {
      this.store.requestTexts([id]);
      this.body.replaceChildren(h('div', { class: 'jtc-pending' }, this.trans.__('loading this answer…')));
      return;
    }
    this.body.replaceChildren(this.markdown.element(full.text));
  }
}
