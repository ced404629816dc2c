/**
 * The tree as a picture: the component the panel and the viewer both show beside (or
 * instead of) the tree list. `fold` chooses what is drawn, `place` where (d3-hierarchy),
 * and this file only draws it and handles the pointer and the keys:
 *
 * - hover a node: its first line, id and model; click: `activate` (the panel switches,
 *   the viewer selects); click a fold: it opens a page (the rest folds again);
 * - wheel and drag: zoom and pan (d3-zoom);
 * - keys on the focused node: ←/→ parent / child, ↑/↓ siblings, Enter activates,
 *   the context-menu key (or Shift+F10) opens the view's node menu.
 *
 * The shapes themselves are drawn by shapes.ts.
 */

import { select } from 'd3-selection';
import { ZoomBehavior, zoom, zoomIdentity, zoomTransform } from 'd3-zoom';
import { listen } from '../dom';
import { SessionSource } from '../model';
import { Translation } from '../translate';
import { Folded, fold } from './fold';
import { place } from './layout';
import { BREADTH_STEP, DEPTH_STEP, MARGIN, curve, describe, foldShape, modelColours, nodeShape, svgElement } from './shapes';

export interface PictureOptions {
  /** a node was clicked or Enter pressed on it */
  activate(id: string): void;
  /** the keys moved the focus to this node */
  focused?(id: string): void;
  /** the node menu, at this point of the page (the panel's hide / show again) */
  menu?(id: string, x: number, y: number): void;
  /** the last line of a node's tooltip: what a click does here */
  hint: string;
  emptyText: string;
}

/** What is marked besides the session's current branch (the picture follows the
 * source's leaf): the path being shown, and whether hidden branches are listed. */
export interface PictureMarks {
  shownPath: string[];
  showHidden: boolean;
}

export class TreePicture {
  readonly node: HTMLElement;
  private readonly svg: SVGSVGElement;
  private readonly view: SVGGElement;
  private readonly tip: HTMLElement;
  private readonly zoomer: ZoomBehavior<SVGSVGElement, unknown>;
  private readonly opened = new Set<string>();
  private marks: PictureMarks = { shownPath: [], showHidden: false };
  private folded: Folded = { items: [], onPath: new Set() };
  /** tree indices of the shown path */
  private onShown = new Set<number | undefined>();
  private x = new Float64Array(0);
  /** the smallest x, which sits at the top margin */
  private top = 0;
  private focusKey: string | null = null;
  /** the search box's matches by tree index, and the one it went to (-1: none) */
  private matched: ReadonlySet<number> = new Set();
  private matchedNow = -1;
  private drawnOnce = false;
  private readonly stopListening: () => void;

  constructor(
    private readonly source: SessionSource,
    private readonly trans: Translation,
    private readonly options: PictureOptions
  ) {
    this.svg = svgElement('svg', {
      class: 'jtc-picture-svg',
      tabindex: 0,
      role: 'img',
      'aria-label': trans.__('Session tree as a picture')
    }) as SVGSVGElement;
    this.view = svgElement('g', { class: 'jtc-picture-view' }) as SVGGElement;
    this.svg.append(this.view);
    this.tip = document.createElement('div');
    this.tip.className = 'jtc-picture-tip';
    this.tip.hidden = true;
    this.node = document.createElement('div');
    this.node.className = 'jtc-picture';
    this.node.append(this.svg, this.tip);
    this.zoomer = zoom<SVGSVGElement, unknown>()
      .scaleExtent([0.05, 4])
      .extent(() => [
        [0, 0],
        [this.svg.clientWidth || 600, this.svg.clientHeight || 400]
      ])
      .clickDistance(4)
      .on('zoom', event => this.view.setAttribute('transform', event.transform.toString()));
    select(this.svg).call(this.zoomer).on('dblclick.zoom', null);
    this.stopListening = listen(this.node, {
      click: event => this.handleClick(event),
      keydown: event => this.handleKey(event),
      contextmenu: event => this.handleMenu(event),
      pointerover: event => this.showTip(event),
      pointerout: () => (this.tip.hidden = true)
    });
  }

  dispose(): void {
    this.stopListening();
    select(this.svg).on('.zoom', null);
  }

  /** Whether `id` is on a marked path (the current branch, or the shown path). */
  isMarked(id: string): boolean {
    const i = this.source.tree.index.get(id);
    return i !== undefined && (this.folded.onPath.has(i) || this.onShown.has(i));
  }

  /** Mark the search box's matches (null: none) and the one it went to; redraw if shown. */
  setMatches(ids: readonly string[] | null, current: string | null): void {
    const index = this.source.tree.index;
    this.matched = new Set((ids ?? []).map(id => index.get(id)).filter((i): i is number => i !== undefined));
    this.matchedNow = current === null ? -1 : index.get(current) ?? -1;
    if (!this.node.hidden) {
      this.draw();
    }
  }

  update(marks: PictureMarks = this.marks): void {
    this.marks = marks;
    const source = this.source;
    const shown = marks.shownPath;
    this.onShown = new Set(shown.map(id => source.tree.index.get(id)));
    this.folded = fold(source.tree, {
      leaf: source.leaf,
      reveal: shown.length ? shown[shown.length - 1] : null,
      labelled: id => source.label(id) !== undefined,
      hidden: source.hidden,
      links: source.links,
      showHidden: marks.showHidden,
      opened: this.opened
    });
    this.x = place(this.folded);
    this.top = this.x.length ? Math.min(...this.x) : 0;
    this.draw();
  }

  /** Pan so the node `id` is in view (it is always drawn when it is on the shown path). */
  reveal(id: string): void {
    const at = this.folded.items.findIndex(item => item.kind === 'node' && this.source.tree.ids[item.node] === id);
    if (at >= 0) {
      this.focusKey = this.folded.items[at].key;
      this.centre(at, false);
    }
  }

  private draw(): void {
    const { items, onPath } = this.folded;
    const tree = this.source.tree;
    const onShown = this.onShown;
    const at = (i: number): [number, number] => this.at(i);
    const colours = modelColours(this.source, items);
    const edges = svgElement('g', { class: 'jtc-picture-edges' });
    const links = svgElement('g', { class: 'jtc-picture-links' });
    const shapes = svgElement('g', { class: 'jtc-picture-nodes' });
    const bold = (i: number): boolean => {
      const item = items[i];
      return item.kind === 'chain' ? item.parent >= 0 && bold(item.parent) : item.kind === 'node' && onPath.has(item.node);
    };
    const where = new Map<string, number>();
    items.forEach((item, i) => {
      if (item.kind === 'node') {
        where.set(tree.ids[item.node], i);
      }
      if (item.parent >= 0) {
        const kind = bold(item.parent) && bold(i) ? ' jtc-edge-path' : onShown.has(items[item.parent].node) && onShown.has(item.node) ? ' jtc-edge-shown' : '';
        edges.append(svgElement('path', { class: `jtc-edge${kind}`, d: curve(at(item.parent), at(i)) }));
      }
    });
    for (const [root, target] of this.source.links) {
      const from = where.get(target);
      const to = where.get(root);
      if (from !== undefined && to !== undefined) {
        const [x1, y1] = at(from);
        const [x2, y2] = at(to);
        links.append(svgElement('path', { class: 'jtc-compaction', d: `M${x1},${y1}C${x1 + 60},${y1} ${x2 - 60},${y2} ${x2},${y2}` }));
      }
    }
    items.forEach((item, i) => {
      const [px, py] = at(i);
      const group =
        item.kind === 'node'
          ? nodeShape(this.source, item, { onPath, onShown, selected: this.marks.shownPath[this.marks.shownPath.length - 1] ?? null }, colours)
          : foldShape(item, this.trans);
      group.setAttribute('transform', `translate(${px},${py})`);
      group.dataset.item = String(i);
      if (item.kind === 'node' && this.matched.has(item.node)) {
        group.classList.add('jtc-match');
        group.classList.toggle('jtc-match-current', item.node === this.matchedNow);
      }
      if (item.key === this.focusKey) {
        group.classList.add('jtc-focus');
        group.prepend(svgElement('circle', { class: 'jtc-focus-ring', r: item.kind === 'node' ? 15 : 12 }));
      }
      shapes.append(group);
    });
    this.view.replaceChildren(edges, links, shapes);
    if (!items.length) {
      const empty = svgElement('text', { class: 'jtc-empty-note', x: MARGIN, y: MARGIN });
      empty.textContent = this.options.emptyText;
      this.view.append(empty);
    }
    if (!this.drawnOnce && items.length) {
      this.drawnOnce = true;
      const leaf = this.source.leaf;
      const home = leaf === null ? -1 : where.get(leaf) ?? -1;
      this.centre(home >= 0 ? home : 0, true);
    }
  }

  /** The item under an event, if any. */
  private itemAt(event: Event): number {
    const group = (event.target as Element).closest?.('[data-item]') as SVGElement | null;
    return group ? Number(group.dataset.item) : -1;
  }

  private handleClick(event: MouseEvent): void {
    const i = this.itemAt(event);
    if (i < 0) {
      return;
    }
    this.act(i);
  }

  private act(i: number): void {
    const item = this.folded.items[i];
    this.focusKey = item.key;
    if (item.kind === 'node') {
      this.options.activate(this.source.tree.ids[item.node]);
    } else {
      this.opened.add(item.key);
      this.update();
    }
  }

  private handleMenu(event: MouseEvent): void {
    const i = this.itemAt(event);
    const item = this.folded.items[i];
    if (!this.options.menu || !item || item.kind !== 'node') {
      return;
    }
    event.preventDefault();
    this.focusKey = item.key;
    this.options.menu(this.source.tree.ids[item.node], event.clientX, event.clientY);
  }

  private handleKey(event: KeyboardEvent): void {
    const items = this.folded.items;
    if (!items.length) {
      return;
    }
    let current = items.findIndex(item => item.key === this.focusKey);
    if (current < 0) {
      const leaf = this.source.leaf;
      current = Math.max(0, items.findIndex(item => item.kind === 'node' && this.source.tree.ids[item.node] === leaf));
    }
    const item = items[current];
    const siblings = item.parent < 0 ? items.flatMap((it, k) => (it.parent < 0 ? [k] : [])) : items[item.parent].children;
    let next = -1;
    if (event.key === 'ArrowLeft') {
      next = item.parent;
    } else if (event.key === 'ArrowRight') {
      const onPath = item.children.find(k => items[k].kind === 'node' && this.folded.onPath.has(items[k].node));
      next = onPath ?? item.children[0] ?? -1;
    } else if (event.key === 'ArrowUp' || event.key === 'ArrowDown') {
      next = siblings[siblings.indexOf(current) + (event.key === 'ArrowUp' ? -1 : 1)] ?? -1;
    } else if (event.key === 'Enter') {
      event.preventDefault();
      this.act(current);
      return;
    } else if ((event.key === 'ContextMenu' || (event.key === 'F10' && event.shiftKey)) && item.kind === 'node' && this.options.menu) {
      event.preventDefault();
      const box = (this.view.querySelector(`[data-item="${current}"]`) as SVGGraphicsElement | null)?.getBoundingClientRect();
      this.options.menu(this.source.tree.ids[item.node], box?.right ?? 0, box?.bottom ?? 0);
      return;
    } else {
      return;
    }
    event.preventDefault();
    if (next < 0) {
      return;
    }
    this.focusKey = items[next].key;
    if (items[next].kind === 'node') {
      this.options.focused?.(this.source.tree.ids[items[next].node]);
    }
    this.draw();
    this.centre(next, false);
  }

  /** Where item `i` sits in the picture, before zoom and pan. */
  private at(i: number): [number, number] {
    return [MARGIN + this.folded.items[i].depth * DEPTH_STEP, MARGIN + (this.x[i] - this.top) * BREADTH_STEP];
  }

  /**
   * Pan so item `i` is in view. The first time: the whole picture if it fits at a
   * readable scale, else `i` (the current leaf) near the right edge, the path leading
   * to it on its left. Later only when `i` is off screen.
   */
  private centre(i: number, first: boolean): void {
    const width = this.svg.clientWidth || 600;
    const height = this.svg.clientHeight || 400;
    const [x, y] = this.at(i);
    const svg = select(this.svg);
    if (first) {
      const deepest = Math.max(0, ...this.folded.items.map(item => item.depth));
      const spread = this.x.length ? Math.max(...this.x) - this.top : 0;
      const scale = Math.min(1, width / (deepest * DEPTH_STEP + 2 * MARGIN + 100), height / (spread * BREADTH_STEP + 2 * MARGIN + 30));
      if (scale >= 0.4) {
        svg.call(this.zoomer.transform, zoomIdentity.scale(scale));
      } else {
        svg.call(this.zoomer.transform, zoomIdentity.translate(width - 140 - x * 0.8, height / 2 - y * 0.8).scale(0.8));
      }
      return;
    }
    const [sx, sy] = zoomTransform(this.svg).apply([x, y]);
    if (sx < 40 || sx > width - 40 || sy < 30 || sy > height - 30) {
      svg.call(this.zoomer.translateTo, x, y);
    }
  }

  private showTip(event: PointerEvent): void {
    const i = this.itemAt(event);
    const item = this.folded.items[i];
    if (!item) {
      this.tip.hidden = true;
      return;
    }
    const lines = describe(this.source, item, this.trans, this.options.hint);
    this.tip.textContent = lines.filter(Boolean).join('\n');
    const box = this.node.getBoundingClientRect();
    this.tip.style.left = `${event.clientX - box.left + 12}px`;
    this.tip.style.top = `${event.clientY - box.top + 12}px`;
    this.tip.hidden = false;
  }
}

