/**
 * A long table drawn only where its scroller shows it. An experiment's grid has a line
 * per row (2,000 answers and more); with every line in the page, a keystroke in its
 * filter box that hid or showed most of them cost a layout and a paint of them all, and
 * every frame of the page a walk over them (docs/speed.md, bench_experiment_grid.py).
 * Here the lines to show are a list of keys; only those in view, and a screen's worth
 * around, are rows of the table, between two spacer rows that keep the scroll bar true.
 * A line's height is measured when it is drawn and estimated (the mean of those
 * measured) until then. A line's row is built once, on its first showing, and kept.
 */

import { h } from './dom';

/** How far beyond the scroller's view lines are drawn, in pixels. */
const AROUND = 300;
/** A line's height before any has been measured, in pixels. */
const FIRST_GUESS = 48;

/** Where a window's lines were: kept by its caller across redraws (as a filter's text), so
 * that a table drawn again opens where the old one was, its lines' heights known. */
export interface WindowPlace {
  /** whose lines these are (another table's start over) */
  of: string;
  scrollTop: number;
  /** the lines' measured heights, by key, at `width` */
  heights: Map<number, number>;
  width: number;
}

export function newPlace(of = ''): WindowPlace {
  return { of, scrollTop: 0, heights: new Map(), width: 0 };
}

export class RowWindow {
  private keys: readonly number[] = [];
  private readonly heights: Map<number, number>;
  private restored = false;
  private readonly built = new Map<number, HTMLElement>();
  private readonly before: HTMLElement;
  private readonly after: HTMLElement;
  private first = 0;
  private last = -1;

  /** `draw(key)` builds line `key`'s row; `columns`: the table's, for the spacers; `kept`:
   * where the caller's table of these lines was (updated here as it scrolls). */
  constructor(
    private readonly scroller: HTMLElement,
    private readonly body: HTMLElement,
    columns: number,
    private readonly draw: (key: number) => HTMLElement,
    private readonly kept: WindowPlace = newPlace()
  ) {
    this.heights = kept.heights;
    const spacer = (): HTMLElement => h('tr', { class: 'jtc-row-spacer', 'aria-hidden': 'true' }, h('td', { colspan: columns }));
    this.before = spacer();
    this.after = spacer();
    const scrolled = (): void => {
      if (scroller.isConnected) {
        // (a table taken out of the page is scrolled to its top: not where it was)
        kept.scrollTop = scroller.scrollTop;
        this.place();
      }
    };
    scroller.addEventListener('scroll', scrolled, { passive: true });
    // laid out for the first time (appended to the page), or resized: draw what it shows
    if (typeof ResizeObserver !== 'undefined') {
      new ResizeObserver(() => this.place()).observe(scroller);
    }
  }

  /** Show these lines, in this order (a filter's matches, a sort's order). */
  show(keys: readonly number[]): void {
    this.keys = keys;
    this.last = -1; // drawn again whatever the range
    this.place();
  }

  /** Draw the lines in view (nothing, if the same ones are drawn already); once more if
   * the lines drawn, measured, change the estimate of those not drawn (`again`). */
  place(again = 1): void {
    const { scroller, body } = this;
    const laidOut = body.isConnected && scroller.clientHeight > 0;
    if (laidOut && scroller.clientWidth !== this.kept.width) {
      this.kept.width = scroller.clientWidth; // lines wrap anew at another width
      this.heights.clear();
    }
    if (laidOut && !this.restored) {
      this.restored = true; // where the table drawn before this one was scrolled to
      this.sizeSpacers();
      scroller.scrollTop = this.kept.scrollTop;
    }
    const guess = this.guess();
    // how far the list's top is above the top of the scroller's view
    const above = laidOut ? scroller.getBoundingClientRect().top - body.getBoundingClientRect().top : 0;
    const from = above - AROUND;
    const to = above + (laidOut ? scroller.clientHeight : window.innerHeight) + AROUND;
    let y = 0;
    let first = this.keys.length;
    let last = -1;
    for (let k = 0; k < this.keys.length && y < to; k++) {
      const height = this.heights.get(this.keys[k]) ?? guess;
      if (y + height > from && first > k) {
        first = k;
      }
      last = k;
      y += height;
    }
    if (first >= this.keys.length && this.keys.length) {
      // the view is past the end (fewer lines than before): the last ones, which it
      // shows once the browser has pulled the scroll back
      last = this.keys.length - 1;
      for (let span = 0; first > 0 && span < to - from; ) {
        first--;
        span += this.heights.get(this.keys[first]) ?? guess;
      }
    }
    first = Math.min(first, last + 1);
    if (first === this.first && last === this.last) {
      return;
    }
    this.first = first;
    this.last = last;
    const rows: HTMLElement[] = [];
    for (let k = first; k <= last; k++) {
      rows.push(this.row(k));
    }
    this.arrange(rows);
    if (laidOut) {
      this.measure(rows);
    }
    this.sizeSpacers();
    if (laidOut && again > 0 && Math.abs(this.guess() - guess) > 1) {
      this.last = -1;
      this.place(again - 1);
    }
  }

  /** Make the body's rows these, between the spacers, leaving in place the rows that stay
   * (a row taken out and put back is laid out and its text shaped again). */
  private arrange(rows: HTMLElement[]): void {
    const { body, before, after } = this;
    if (before.parentNode !== body) {
      body.replaceChildren(before, after);
    }
    const wanted = new Set(rows);
    for (const row of [...body.children]) {
      if (row !== before && row !== after && !wanted.has(row as HTMLElement)) {
        row.remove();
      }
    }
    // the rows that stay keep their order (the lines' order is the same): only new ones go in
    let at = before.nextSibling;
    for (const row of rows) {
      if (row === at) {
        at = at.nextSibling;
      } else {
        body.insertBefore(row, at);
      }
    }
  }

  private row(k: number): HTMLElement {
    const key = this.keys[k];
    let row = this.built.get(key);
    if (!row) {
      row = this.draw(key);
      this.built.set(key, row);
    }
    row.setAttribute('aria-rowindex', String(k + 2)); // the header is row 1
    return row;
  }

  /** The heights of the rows drawn (one layout for them all; a line's may have changed
   * since it was last drawn: a grade, a note). */
  private measure(rows: HTMLElement[]): void {
    rows.forEach((row, n) => {
      const height = row.getBoundingClientRect().height;
      if (height > 0) {
        this.heights.set(this.keys[this.first + n], height);
      }
    });
  }

  private guess(): number {
    if (!this.heights.size) {
      return FIRST_GUESS;
    }
    let sum = 0;
    for (const height of this.heights.values()) {
      sum += height;
    }
    return sum / this.heights.size;
  }

  private sizeSpacers(): void {
    const guess = this.guess();
    let above = 0;
    let below = 0;
    this.keys.forEach((key, k) => {
      const height = this.heights.get(key) ?? guess;
      if (k < this.first) {
        above += height;
      } else if (k > this.last) {
        below += height;
      }
    });
    this.before.hidden = above === 0;
    this.before.style.height = `${above}px`;
    this.after.hidden = below === 0;
    this.after.style.height = `${below}px`;
  }
}
