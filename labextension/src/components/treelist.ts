/**
 * The tree list: every node as a row, indented only below a branch point, the current
 * branch and the shown path marked. The tree is flattened by an iterative walk; past
 * `ALL_ROWS_UP_TO` rows only the rows in view are in the DOM (a virtual list), which is
 * what lets a 10,000-node session open in a few milliseconds.
 *
 * Keys: ↑/↓ move between rows, Enter or a click activates one, ←/→ go to a sibling; what
 * activating and going to a sibling mean is the view's (switch or select). A right click
 * or the context-menu key opens the view's node menu (the panel: hide a branch).
 *
 * A hidden branch (a `hidden` record) is left out, and its parent's row says how many it
 * lost; with `showHidden` it is listed, marked hidden.
 */

import { headLine } from './chips';
import { h, listen } from './dom';
import { SessionSource, shortId } from './model';
import { Translation } from './translate';
import { hiddenBadge, interruptedBadge, labelBadge, position, roleName, summaryLine } from './vocabulary';

export const ROW_HEIGHT = 24;
/** Trees up to this many shown rows are in the DOM whole (find in page, screen readers). */
export const ALL_ROWS_UP_TO = 1000;
const OVERSCAN = 12;
const MAX_INDENT = 16;

export interface TreeListOptions {
  /** a row was clicked or Enter pressed on it */
  activate(id: string): void;
  /** ←/→ on a row: the previous / next sibling */
  sibling(id: string, step: -1 | 1): void;
  /** ↑/↓ moved the focus to this row */
  focused?(id: string): void;
  /** the node menu, at this point of the page */
  menu?(id: string, x: number, y: number): void;
  /** the last line of a row's tooltip: what a click does here */
  hint: string;
  /** shown when the session has no node */
  emptyText: string;
}

/** Which rows are marked: the path to the session's current leaf and to the shown node. */
export interface TreeMarks {
  leaf: string | null;
  shown: string | null;
  /** list hidden branches too (marked) instead of leaving them out */
  showHidden?: boolean;
}

interface DrawnRow {
  key: string;
  node: HTMLElement;
}

const ON_BRANCH = 1;
const ON_SHOWN = 2;
/** beside those two in a row's key: the row is the shown node's, the leaf's */
const IS_SHOWN = 4;
const IS_LEAF = 8;

export class TreeList {
  readonly node: HTMLElement;
  private readonly spacer: HTMLElement;
  private readonly window: HTMLElement;
  private flat = new Int32Array(0);
  /** what the rows were flattened for (the tree's size, and the hidden folds); '': again */
  private flattened = '';
  private indents = new Uint16Array(0);
  /** how many hidden children each node's row left out */
  private hiddenKids = new Map<number, number>();
  private collapsed = new Set<number>();
  /** per node: ON_BRANCH, ON_SHOWN, both or neither (a walk up the parents, no lookups) */
  private onPaths = new Uint8Array(0);
  private leafIndex = -1;
  private shownIndex = -1;
  private focusIndex = -1;
  private marks: TreeMarks = { leaf: null, shown: null };
  /** the search box's matches by tree index, and the one it went to (-1: none) */
  private matched: ReadonlySet<number> = new Set();
  private matchedNow = -1;
  /** the rows in the DOM by their place in the list, with the key each was drawn for */
  private drawn = new Map<number, DrawnRow>();
  private drawnFor: SessionSource['tree'] | null = null;
  private drawnSize = 0;
  private frame = 0;
  private readonly stopListening: () => void;

  constructor(
    private readonly source: SessionSource,
    private readonly trans: Translation,
    private readonly options: TreeListOptions
  ) {
    this.window = h('div', { class: 'jtc-tree-window' });
    this.spacer = h('div', { class: 'jtc-tree-spacer' }, this.window);
    this.node = h(
      'div',
      { class: 'jtc-tree', role: 'tree', 'aria-label': trans.__('Session tree'), tabindex: -1 },
      this.spacer
    );
    this.stopListening = listen(this.node, {
      scroll: () => this.schedule(),
      click: event => this.handleClick(event),
      keydown: event => this.handleKey(event),
      contextmenu: event => this.handleMenu(event)
    });
  }

  dispose(): void {
    cancelAnimationFrame(this.frame);
    this.stopListening();
  }

  /** Mark the paths and redraw; flatten again only if nodes were added or a branch was
   * collapsed or expanded (a switch on a 100,000-node tree only moves the marks). */
  update(marks: TreeMarks = this.marks): void {
    const tree = this.source.tree;
    this.marks = marks;
    const onPaths = new Uint8Array(tree.size);
    const walk = (id: string | null, bit: number): number => {
      const end = id === null ? -1 : tree.index.get(id) ?? -1;
      for (let i = end; i >= 0; i = tree.parents[i]) {
        onPaths[i] |= bit;
      }
      return end;
    };
    this.leafIndex = walk(marks.leaf, ON_BRANCH);
    this.shownIndex = walk(marks.shown, ON_SHOWN);
    this.onPaths = onPaths;
    const key = this.flattenKey();
    if (this.flattened !== key) {
      this.flattened = key;
      this.flatten();
    }
    this.draw();
  }

  /** Rows change with the tree's size and with which hidden branches fold away (one on
   * a marked path never does): a switch re-flattens only if it unfolds or folds one. */
  private flattenKey(): string {
    const { hidden, tree } = this.source;
    const size = String(tree.size);
    if (!hidden.size || this.marks.showHidden) {
      return size;
    }
    const folded = [...hidden].filter(id => {
      const i = tree.index.get(id);
      return i !== undefined && !this.onPaths[i];
    });
    return `${size} ${folded.join(' ')}`;
  }

  private flatten(): void {
    const tree = this.source.tree;
    const flat = new Int32Array(tree.size);
    const indents = new Uint16Array(tree.size);
    let count = 0;
    const stack: number[] = [];
    const stackIndent: number[] = [];
    const hidden = this.source.hidden;
    const showHidden = this.marks.showHidden;
    const foldsAway = (i: number): boolean => !showHidden && hidden.has(tree.ids[i]) && !this.onPaths[i];
    const shownKids = (kids: number[], i: number): number[] => {
      if (!hidden.size) {
        return kids;
      }
      const kept = kids.filter(k => !foldsAway(k));
      if (kept.length < kids.length) {
        this.hiddenKids.set(i, kids.length - kept.length);
      }
      return kept;
    };
    this.hiddenKids = new Map();
    const roots = shownKids(tree.roots, -1);
    for (let k = roots.length - 1; k >= 0; k--) {
      stack.push(roots[k]);
      stackIndent.push(tree.roots.length > 1 ? 1 : 0);
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
      const kids = shownKids(tree.children[i], i);
      const next = kids.length > 1 ? indent + 1 : indent;
      for (let k = kids.length - 1; k >= 0; k--) {
        stack.push(kids[k]);
        stackIndent.push(next);
      }
    }
    this.flat = flat.subarray(0, count);
    this.indents = indents.subarray(0, count);
    this.spacer.style.height = `${count * ROW_HEIGHT}px`;
  }

  /** Mark the search box's matches (null: none) and the one it went to; redraw. */
  setMatches(ids: readonly string[] | null, current: string | null): void {
    const index = this.source.tree.index;
    const found = new Set<number>();
    for (const id of ids ?? []) {
      const i = index.get(id);
      if (i !== undefined) {
        found.add(i);
      }
    }
    this.matched = found;
    this.matchedNow = current === null ? -1 : index.get(current) ?? -1;
    this.draw();
  }

  /** Whether `id` is on a marked path (the current branch, or the shown path). */
  isMarked(id: string): boolean {
    const i = this.source.tree.index.get(id);
    return i !== undefined && this.onPaths[i] !== 0;
  }

  /** Scroll so the row of `id` is in view (expanding nothing: it must be visible). */
  reveal(id: string): void {
    const i = this.source.tree.index.get(id);
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
    if (this.flat.length <= ALL_ROWS_UP_TO) {
      return;
    }
    cancelAnimationFrame(this.frame);
    this.frame = requestAnimationFrame(() => this.draw());
  }

  private draw(): void {
    let first = 0;
    let last = this.flat.length;
    if (last > ALL_ROWS_UP_TO) {
      const view = this.node.clientHeight || 400;
      first = Math.max(0, Math.floor(this.node.scrollTop / ROW_HEIGHT) - OVERSCAN);
      last = Math.min(last, Math.ceil((this.node.scrollTop + view) / ROW_HEIGHT) + OVERSCAN);
    }
    const tree = this.source.tree;
    if (tree !== this.drawnFor || tree.size !== this.drawnSize) {
      [this.drawnFor, this.drawnSize] = [tree, tree.size]; // new nodes: counts and places move
      this.drawn = new Map();
    }
    const rows: HTMLElement[] = [];
    const drawn = new Map<number, DrawnRow>();
    const focusAt = this.focusAt();
    const hadFocus = this.node.contains(document.activeElement); // a redrawn row loses it
    for (let at = first; at < last; at++) {
      const i = this.flat[at];
      const key = this.rowKey(i, this.indents[at], at === focusAt);
      const before = this.drawn.get(at);
      const row = before && before.key === key ? before.node : this.row(i, this.indents[at], at, at === focusAt);
      drawn.set(at, { key, node: row });
      rows.push(row);
    }
    this.drawn = drawn;
    this.window.style.transform = `translateY(${first * ROW_HEIGHT}px)`;
    if (!this.flat.length) {
      this.window.replaceChildren(h('div', { class: 'jtc-empty-note' }, this.options.emptyText));
      return;
    }
    keepInPlace(this.window, rows);
    if (hadFocus && !this.node.contains(document.activeElement)) {
      // the focused row was redrawn (a switch moved its marks): the keys keep working
      this.window.querySelector<HTMLElement>(`.jtc-row[data-at="${focusAt}"] .jtc-row-main`)?.focus();
    }
  }

  /** All a row is drawn from besides the tree itself: a row whose key has not changed is
   * kept as it is (a switch redraws only the rows whose marks moved). */
  private rowKey(i: number, indent: number, focused: boolean): string {
    const id = this.source.tree.ids[i];
    const marks = this.onPaths[i] | (i === this.shownIndex ? IS_SHOWN : 0) | (i === this.leafIndex ? IS_LEAF : 0);
    const folds = `${this.collapsed.has(i) ? 1 : 0}${this.source.hidden.has(id) ? 1 : 0}${this.hiddenKids.get(i) ?? 0}`;
    const match = this.matched.has(i) ? (i === this.matchedNow ? 2 : 1) : 0;
    return `${i} ${indent} ${marks} ${focused ? 1 : 0} ${folds} ${match} ${this.source.label(id) ?? ''}`;
  }

  private row(i: number, indent: number, at: number, focused: boolean): HTMLElement {
    const { tree } = this.source;
    const trans = this.trans;
    const id = tree.ids[i];
    const kids = tree.children[i].length;
    const parent = tree.parents[i];
    const siblings = parent < 0 ? tree.roots : tree.children[parent];
    const role = tree.roles[i];
    const classes = ['jtc-row', `jtc-role-${role}`];
    if (this.onPaths[i] & ON_BRANCH) {
      classes.push('jtc-on-path');
    }
    if (this.onPaths[i] & ON_SHOWN) {
      classes.push('jtc-on-selected-path');
    }
    if (i === this.shownIndex) {
      classes.push('jtc-selected');
    }
    if (i === this.leafIndex) {
      classes.push('jtc-leaf');
    }
    if (this.matched.has(i)) {
      classes.push(i === this.matchedNow ? 'jtc-match jtc-match-current' : 'jtc-match'); // not for translation: class names
    }
    const summary = tree.summaries[i];
    const label = this.source.label(id);
    const collapsed = this.collapsed.has(i);
    const isHidden = this.source.hidden.has(id);
    if (isHidden) {
      classes.push('jtc-hidden-node');
    }
    const leftOut = this.hiddenKids.get(i) ?? 0;
    const title = [id, summaryLine(summary, trans), this.options.hint].filter(Boolean).join('\n');
    return h(
      'div',
      {
        class: classes.join(' '),
        role: 'treeitem',
        'data-id': id,
        'data-at': at,
        'aria-level': indent + 1,
        'aria-selected': i === this.shownIndex ? 'true' : 'false',
        'aria-expanded': kids > 1 ? String(!collapsed) : undefined,
        style: `--jtc-indent: ${Math.min(indent, MAX_INDENT)}`
      },
      kids > 1
        ? h(
            'button',
            {
              class: 'jtc-toggle',
              'data-toggle': i,
              tabindex: -1,
              title: collapsed
                ? trans._n('Expand %1 branch', 'Expand %1 branches', kids)
                : trans._n('Collapse %1 branch', 'Collapse %1 branches', kids)
            },
            collapsed ? trans._p('arrow', '▸') : trans._p('arrow', '▾')
          )
        : h('span', { class: 'jtc-toggle-space' }),
      h(
        'button',
        { class: 'jtc-row-main', tabindex: focused ? 0 : -1, title },
        h('span', { class: 'jtc-id' }, shortId(id)),
        h('span', { class: 'jtc-role' }, roleName(role, trans)),
        siblings.length > 1
          ? h(
              'span',
              { class: 'jtc-position', title: trans.__('position among siblings') },
              position(siblings.indexOf(i) + 1, siblings.length, trans)
            )
          : null,
        label ? labelBadge(label, trans) : null,
        summary?.interrupted ? interruptedBadge(trans) : null,
        isHidden ? hiddenBadge(trans) : null,
        i === this.leafIndex
          ? h('span', { class: 'jtc-leaf-mark', title: trans.__('the end of the current branch') }, trans.__('current'))
          : null,
        headLine(tree.heads[i]),
        collapsed ? h('span', { class: 'jtc-hidden-count' }, trans._n('+%1 branch', '+%1 branches', kids)) : null,
        leftOut
          ? h(
              'span',
              { class: 'jtc-hidden-count jtc-hidden-kids', title: trans.__('hidden branches are kept in the file') },
              trans._n('%1 hidden', '%1 hidden', leftOut)
            )
          : null
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
    const home = this.shownIndex >= 0 ? this.shownIndex : this.leafIndex;
    return home >= 0 ? Math.max(0, this.flat.indexOf(home)) : 0;
  }

  private handleClick(event: Event): void {
    const target = event.target as HTMLElement;
    const toggle = target.closest<HTMLElement>('[data-toggle]');
    if (toggle) {
      const i = Number(toggle.dataset.toggle);
      if (!this.collapsed.delete(i)) {
        this.collapsed.add(i);
      }
      this.flattened = '';
      this.update();
      return;
    }
    const row = target.closest<HTMLElement>('.jtc-row');
    if (row?.dataset.id) {
      this.focusIndex = this.source.tree.index.get(row.dataset.id) ?? -1;
      this.options.activate(row.dataset.id);
    }
  }

  private handleMenu(event: MouseEvent): void {
    const row = (event.target as HTMLElement).closest<HTMLElement>('.jtc-row');
    if (row?.dataset.id && this.options.menu) {
      event.preventDefault();
      this.options.menu(row.dataset.id, event.clientX, event.clientY);
    }
  }

  private handleKey(event: KeyboardEvent): void {
    const row = (event.target as HTMLElement).closest<HTMLElement>('.jtc-row');
    if (!row?.dataset.id) {
      return;
    }
    const id = row.dataset.id;
    if ((event.key === 'ContextMenu' || (event.key === 'F10' && event.shiftKey)) && this.options.menu) {
      event.preventDefault();
      const box = row.getBoundingClientRect();
      this.options.menu(id, box.left + 40, box.bottom);
      return;
    }
    const at = Number(row.dataset.at);
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      const next = at + (event.key === 'ArrowDown' ? 1 : -1);
      if (next >= 0 && next < this.flat.length) {
        event.preventDefault();
        this.focusIndex = this.flat[next];
        const nextId = this.source.tree.ids[this.focusIndex];
        this.options.focused?.(nextId);
        this.reveal(nextId);
        this.window.querySelector<HTMLElement>(`.jtc-row[data-at="${next}"] .jtc-row-main`)?.focus();
      }
    } else if (event.key === 'ArrowLeft' || event.key === 'ArrowRight') {
      event.preventDefault();
      const siblings = this.source.tree.siblings(id);
      const next = siblings[siblings.indexOf(id) + (event.key === 'ArrowLeft' ? -1 : 1)];
      if (next !== undefined) {
        this.focusIndex = this.source.tree.index.get(next) ?? this.focusIndex; // the focus follows
      }
      this.options.sibling(id, event.key === 'ArrowLeft' ? -1 : 1);
    } else if (event.key === 'Enter') {
      event.preventDefault();
      this.options.activate(id);
    }
  }
}

/** Make `host`'s children `rows`, in order, without moving a row that stays: the rows
 * gone are removed first, then the new ones are put in their places. */
function keepInPlace(host: HTMLElement, rows: HTMLElement[]): void {
  const keep = new Set(rows);
  for (const child of [...host.children]) {
    if (!keep.has(child as HTMLElement)) {
      child.remove();
    }
  }
  rows.forEach((row, k) => {
    const there = host.children[k];
    if (there !== row) {
      host.insertBefore(row, there ?? null);
    }
  });
}
