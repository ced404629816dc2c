/**
 * The session tree as a virtual list: the tree is flattened once (an iterative walk,
 * indentation growing only below a branch point) and only the rows in view are in the
 * DOM. That is what lets a 10,000-node session open in a few milliseconds.
 */

import { h } from '../render/dom';
import { Store, metaLine, shortId } from './model';

export const ROW_HEIGHT = 24;
const OVERSCAN = 12;
const MAX_INDENT = 16;

export interface TreeListCallbacks {
  /** a row was clicked or Enter pressed on it */
  activate(id: string): void;
  /** ArrowLeft / ArrowRight on a row: the previous / next sibling */
  sibling(id: string, step: -1 | 1): void;
}

export class TreeList {
  readonly node: HTMLElement;
  private readonly spacer: HTMLElement;
  private readonly window: HTMLElement;
  private flat = new Int32Array(0);
  private indents = new Uint16Array(0);
  private collapsed = new Set<number>();
  private onPath = new Set<number>();
  private leafIndex = -1;
  private focusIndex = -1;
  private frame = 0;
  private readonly onScroll = (): void => this.schedule();
  private readonly onClick = (event: Event): void => this.handleClick(event);
  private readonly onKey = (event: KeyboardEvent): void => this.handleKey(event);

  constructor(
    private readonly store: Store,
    private readonly callbacks: TreeListCallbacks
  ) {
    this.window = h('div', { class: 'jtw-tree-window' });
    this.spacer = h('div', { class: 'jtw-tree-spacer' }, this.window);
    this.node = h(
      'div',
      { class: 'jtw-tree', role: 'tree', 'aria-label': 'Session tree', tabindex: -1 },
      this.spacer
    );
    this.node.addEventListener('scroll', this.onScroll);
    this.node.addEventListener('click', this.onClick);
    this.node.addEventListener('keydown', this.onKey);
  }

  dispose(): void {
    cancelAnimationFrame(this.frame);
    this.node.removeEventListener('scroll', this.onScroll);
    this.node.removeEventListener('click', this.onClick);
    this.node.removeEventListener('keydown', this.onKey);
  }

  /** Re-flatten (after nodes were added or a branch collapsed) and redraw. */
  update(pathIds: string[]): void {
    const s = this.store;
    this.onPath = new Set(pathIds.map(id => s.index.get(id)!).filter(i => i !== undefined));
    this.leafIndex = pathIds.length ? s.index.get(pathIds[pathIds.length - 1]) ?? -1 : -1;
    const flat = new Int32Array(s.size);
    const indents = new Uint16Array(s.size);
    let count = 0;
    const stack: number[] = [];
    const stackIndent: number[] = [];
    const roots = s.roots;
    for (let k = roots.length - 1; k >= 0; k--) {
      stack.push(roots[k]);
      stackIndent.push(roots.length > 1 ? 1 : 0);
    }
    while (stack.length) {
      const i = stack.pop()!;
      const indent = stackIndent.pop()!;
      flat[count] = i;
      indents[count] = indent;
      count++;
      if (this.collapsed.has(i)) {
        continue;
      }
      const kids = s.children[i];
      const next = kids.length > 1 ? indent + 1 : indent;
      for (let k = kids.length - 1; k >= 0; k--) {
        stack.push(kids[k]);
        stackIndent.push(next);
      }
    }
    this.flat = flat.subarray(0, count);
    this.indents = indents.subarray(0, count);
    this.spacer.style.height = `${count * ROW_HEIGHT}px`;
    this.draw();
  }

  /** Scroll so the row of `id` is in view (expanding nothing: it must be visible). */
  reveal(id: string): void {
    const i = this.store.index.get(id);
    const at = i === undefined ? -1 : this.flat.indexOf(i);
    if (at < 0) {
      return;
    }
    const top = at * ROW_HEIGHT;
    const view = this.node.clientHeight || 400;
    if (top < this.node.scrollTop || top + ROW_HEIGHT > this.node.scrollTop + view) {
      this.node.scrollTop = Math.max(0, top - view / 2);
    }
    this.draw();
  }

  private schedule(): void {
    cancelAnimationFrame(this.frame);
    this.frame = requestAnimationFrame(() => this.draw());
  }

  private draw(): void {
    const s = this.store;
    const view = this.node.clientHeight || 400;
    const first = Math.max(0, Math.floor(this.node.scrollTop / ROW_HEIGHT) - OVERSCAN);
    const last = Math.min(this.flat.length, Math.ceil((this.node.scrollTop + view) / ROW_HEIGHT) + OVERSCAN);
    const labels = s.labels;
    const rows: HTMLElement[] = [];
    const focusAt = this.focusAt();
    for (let at = first; at < last; at++) {
      rows.push(this.row(this.flat[at], this.indents[at], at, at === focusAt, labels));
    }
    this.window.style.transform = `translateY(${first * ROW_HEIGHT}px)`;
    this.window.replaceChildren(...rows);
    if (!this.flat.length) {
      this.window.append(h('div', { class: 'jtw-empty-note' }, 'No messages yet.'));
    }
  }

  private row(
    i: number,
    indent: number,
    at: number,
    focused: boolean,
    labels: Record<string, string>
  ): HTMLElement {
    const s = this.store;
    const id = s.ids[i];
    const kids = s.children[i].length;
    const parent = s.parents[i];
    const siblings = parent < 0 ? s.roots : s.children[parent];
    const role = s.roles[i];
    const classes = ['jtw-row', `jtw-role-${role}`];
    if (this.onPath.has(i)) {
      classes.push('jtw-on-path');
    }
    if (i === this.leafIndex) {
      classes.push('jtw-leaf');
    }
    const meta = s.metas[i];
    const label = labels[id];
    return h(
      'div',
      {
        class: classes.join(' '),
        role: 'treeitem',
        'data-id': id,
        'data-at': at,
        'aria-level': indent + 1,
        'aria-selected': this.onPath.has(i) ? 'true' : 'false',
        'aria-expanded': kids > 1 ? String(!this.collapsed.has(i)) : undefined,
        style: `--jtw-indent: ${Math.min(indent, MAX_INDENT)}`
      },
      kids > 1
        ? h(
            'button',
            {
              class: 'jtw-toggle',
              'data-toggle': i,
              tabindex: -1,
              title: this.collapsed.has(i) ? `Expand ${kids} branches` : `Collapse ${kids} branches`
            },
            this.collapsed.has(i) ? '▸' : '▾'
          )
        : h('span', { class: 'jtw-toggle-space' }),
      h(
        'button',
        {
          class: 'jtw-row-main',
          tabindex: focused ? 0 : -1,
          title: `${id}${meta ? '\n' + metaLine(meta) : ''}\nclick: show this branch · ←/→: siblings`
        },
        h('span', { class: 'jtw-id' }, shortId(id)),
        h('span', { class: 'jtw-role' }, role === 'a' ? 'AI' : role === 't' ? 'tool' : 'you'),
        siblings.length > 1
          ? h('span', { class: 'jtw-position' }, `${siblings.indexOf(i) + 1}/${siblings.length}`)
          : null,
        label ? h('span', { class: 'jtw-label' }, label) : null,
        meta && meta[4] ? h('span', { class: 'jtw-interrupted' }, 'cut') : null,
        h('span', { class: 'jtw-first-line' }, s.heads[i]),
        this.collapsed.has(i) ? h('span', { class: 'jtw-hidden-count' }, `+${kids}`) : null
      )
    );
  }

  private focusAt(): number {
    if (this.focusIndex >= 0) {
      const at = this.flat.indexOf(this.focusIndex);
      if (at >= 0) {
        return at;
      }
    }
    return this.leafIndex >= 0 ? this.flat.indexOf(this.leafIndex) : 0;
  }

  private handleClick(event: Event): void {
    const target = event.target as HTMLElement;
    const toggle = target.closest<HTMLElement>('[data-toggle]');
    if (toggle) {
      const i = Number(toggle.dataset.toggle);
      if (this.collapsed.has(i)) {
        this.collapsed.delete(i);
      } else {
        this.collapsed.add(i);
      }
      this.update(this.store.pathTo(this.store.leaf));
      return;
    }
    const row = target.closest<HTMLElement>('.jtw-row');
    if (row?.dataset.id) {
      this.focusIndex = this.store.index.get(row.dataset.id) ?? -1;
      this.callbacks.activate(row.dataset.id);
    }
  }

  private handleKey(event: KeyboardEvent): void {
    const row = (event.target as HTMLElement).closest<HTMLElement>('.jtw-row');
    if (!row?.dataset.id) {
      return;
    }
    const id = row.dataset.id;
    const at = Number(row.dataset.at);
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      const next = at + (event.key === 'ArrowDown' ? 1 : -1);
      if (next >= 0 && next < this.flat.length) {
        event.preventDefault();
        this.focusIndex = this.flat[next];
        this.reveal(this.store.ids[this.focusIndex]);
        this.window
          .querySelector<HTMLElement>(`.jtw-row[data-at="${next}"] .jtw-row-main`)
          ?.focus();
      }
    } else if (event.key === 'ArrowLeft' || event.key === 'ArrowRight') {
      event.preventDefault();
      this.callbacks.sibling(id, event.key === 'ArrowLeft' ? -1 : 1);
    } else if (event.key === 'Enter') {
      event.preventDefault();
      this.callbacks.activate(id);
    }
  }
}
