/**
 * Which part of a session tree the picture shows: the rules of the kernel's
 * `jupyter_tree_chat/picture/fold.py`, written again for the browser (the viewer has no
 * kernel). Hidden branches, wide fans, a node budget and long chains fold into items
 * that stand for what they hide, with a count; a fold's key is the same as in Python,
 * and an opened key shows `PAGE` more nodes. `tests/test_picture_front_end.py` runs
 * both on the same files and compares every item and coordinate.
 */

import { SessionTree } from '../model';

export const WIDTH = 6;
export const BUDGET = 400;
export const CHAIN_END = 3;
export const CHAIN_MIN = 4;
export const PAGE = 50;

export type ItemKind = 'node' | 'chain' | 'more' | 'hidden';

/** One thing the picture draws: a node (`node`: its index in the tree) or a fold. */
export interface Item {
  key: string;
  kind: ItemKind;
  /** the parent item's index, -1 for a root of the picture */
  parent: number;
  depth: number;
  node: number;
  /** folds: how many nodes it stands for; `more`/`hidden`: in how many branches */
  count: number;
  branches: number;
  children: number[];
}

export interface FoldOptions {
  leaf: string | null;
  /** a node the view selected: always shown */
  reveal?: string | null;
  labelled(id: string): boolean;
  hidden: ReadonlySet<string>;
  /** compaction root id -> the leaf it summarised (both ends stay in sight) */
  links: ReadonlyMap<string, string>;
  showHidden?: boolean;
  opened?: ReadonlySet<string>;
  width?: number;
  budget?: number;
}

export interface Folded {
  items: Item[];
  /** tree indices of the current path (drawn bold) */
  onPath: Set<number>;
}

export function fold(tree: SessionTree, options: FoldOptions): Folded {
  const width = options.width ?? WIDTH;
  const budget = options.budget ?? BUDGET;
  const opened = options.opened ?? new Set<string>();
  const onPath = indices(tree, tree.pathTo(options.leaf));
  const keep = new Set([...onPath, ...indices(tree, tree.pathTo(options.reveal ?? null))]);
  const keepers = new Set<string>([...options.links.values()]);
  for (const id of [options.leaf, options.reveal]) {
    if (id) {
      keepers.add(id);
    }
  }
  const isKeeper = (i: number): boolean => keepers.has(tree.ids[i]) || options.labelled(tree.ids[i]);
  const items: Item[] = [];
  let shown = 0;
  const idOf = (i: number): string => (i < 0 ? '' : tree.ids[i]);
  const kidsOf = (i: number): number[] => (i < 0 ? tree.roots : tree.children[i]);
  const foldsAway = (i: number, parent: number): boolean =>
    options.hidden.has(tree.ids[i]) &&
    !options.showHidden &&
    !keep.has(i) &&
    !opened.has(`hidden:${idOf(parent)}`);

  const add = (item: Item): number => {
    items.push(item);
    if (item.parent >= 0) {
      items[item.parent].children.push(items.length - 1);
    }
    return items.length - 1;
  };
  const depthUnder = (item: number): number => (item < 0 ? 0 : items[item].depth + 1);
  const make = (key: string, kind: ItemKind, parent: number, node = -1): Item => ({
    key,
    kind,
    parent,
    depth: depthUnder(parent),
    node,
    count: 0,
    branches: 0,
    children: []
  });

  /** `first` and its chain of single children, the middle folded; returns [last node, its item]. */
  const addRun = (first: number, parentItem: number): [number, number] => {
    const run = [first];
    for (;;) {
      const kids = kidsOf(run[run.length - 1]);
      if (kids.length !== 1 || foldsAway(kids[0], run[run.length - 1])) {
        break;
      }
      run.push(kids[0]);
    }
    const last = run.length - 1;
    let index = parentItem;
    let at = 0;
    while (at <= last) {
      let end = at;
      while (CHAIN_END <= end && end <= last - CHAIN_END && !isKeeper(run[end])) {
        end++;
      }
      let stop = Math.max(end, at + 1);
      if (end - at >= CHAIN_MIN) {
        const key = `chain:${tree.ids[run[at]]}`;
        if (!opened.has(key)) {
          const item = make(key, 'chain', index);
          item.count = end - at;
          index = add(item);
          at = end;
          continue;
        }
        stop = at + PAGE;
      }
      for (const node of run.slice(at, stop)) {
        index = add(make(tree.ids[node], 'node', index, node));
        shown++;
      }
      at = stop;
    }
    return [run[last], index];
  };

  const subtreeSize = (start: number[]): number => {
    const stack = [...start];
    let size = 0;
    while (stack.length) {
      size++;
      stack.push(...tree.children[stack.pop()!]);
    }
    return size;
  };
  const addFold = (key: string, kind: ItemKind, parentItem: number, nodes: number[]): void => {
    if (!nodes.length) {
      return;
    }
    const item = make(key, kind, parentItem);
    item.count = subtreeSize(nodes);
    item.branches = nodes.length;
    add(item);
  };

  const queue: Array<[number, number]> = [[-1, -1]];
  for (let head = 0; head < queue.length; head++) {
    const [parent, parentItem] = queue[head];
    const kids: number[] = [];
    const hid: number[] = [];
    for (const kid of kidsOf(parent)) {
      (foldsAway(kid, parent) ? hid : kids).push(kid);
    }
    const openedAt = openedPages(opened, `more:${idOf(parent)}@`);
    const room = shown < budget;
    const whole = kids.length <= width;
    const taken: number[] = [];
    const more: number[] = [];
    let firstFolded = -1;
    kids.forEach((kid, i) => {
      if (keep.has(kid) || openedAt.some(start => start <= i && i < start + PAGE) || (room && (whole || i < width - 1))) {
        taken.push(kid);
      } else {
        more.push(kid);
        firstFolded = firstFolded < 0 ? i : firstFolded;
      }
    });
    for (const kid of taken) {
      queue.push(addRun(kid, parentItem));
    }
    addFold(`hidden:${idOf(parent)}`, 'hidden', parentItem, hid);
    addFold(`more:${idOf(parent)}@${firstFolded}`, 'more', parentItem, more);
  }
  return { items, onPath };
}

function indices(tree: SessionTree, ids: string[]): Set<number> {
  return new Set(ids.map(id => tree.index.get(id)).filter((i): i is number => i !== undefined));
}

function openedPages(opened: ReadonlySet<string>, prefix: string): number[] {
  const starts: number[] = [];
  for (const key of opened) {
    const rest = key.startsWith(prefix) ? key.slice(prefix.length) : '';
    if (/^\d+$/.test(rest)) {
      starts.push(Number(rest));
    }
  }
  return starts;
}
