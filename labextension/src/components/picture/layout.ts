/**
 * Where each item of a folded picture sits: d3-hierarchy's tidy tree (`tree()`, node
 * size 1: siblings 1 apart, cousins 2), as a pure function of the items. The picture's
 * roots hang under one unseen root, as in the kernel's `picture.place`, so the numbers
 * are the same on both sides (tests/test_picture_front_end.py).
 */

import { hierarchy, tree } from 'd3-hierarchy';
import { Folded } from './fold';

/** The tidy-tree x of every item, in layout units; the depth is the item's own. */
export function place(folded: Folded): Float64Array {
  const { items } = folded;
  const roots: number[] = [];
  items.forEach((item, i) => {
    if (item.parent < 0) {
      roots.push(i);
    }
  });
  const root = hierarchy<number>(-1, i => (i < 0 ? roots : items[i].children));
  tree<number>().nodeSize([1, 1])(root);
  const x = new Float64Array(items.length);
  root.each(node => {
    if (node.data >= 0) {
      x[node.data] = node.x ?? 0;
    }
  });
  return x;
}
