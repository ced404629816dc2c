/**
 * The shapes of the tree picture, as SVG elements made here: every text from the
 * session goes in as `textContent`, never as markup. The sizes and colours are those
 * of the kernel's SVG export (jupyter_tree_chat/picture/svg.py), so both draw alike.
 */

import { plainHead } from '../chips';
import { SessionSource, shortId } from '../model';
import { Translation } from '../translate';
import { joinItems, roleName, summaryLine } from '../vocabulary';
import { Item } from './fold';

export const DEPTH_STEP = 64;
export const BREADTH_STEP = 46;
export const MARGIN = 28;
const SVG_NS = 'http://www.w3.org/2000/svg';
export const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];
const NO_MODEL = '#9aa0a6';
const TAG_CHARS = 12;

/** What marks a node: the current path, the path being shown, the selected node. */
export interface NodeMarks {
  onPath: Set<number>;
  onShown: Set<number | undefined>;
  selected: string | null;
}

/** A message node: its shape (question circle, answer square in its model's colour, tool
 * result small circle), the leaf's ring, its short id, its label as a tag. */
export function nodeShape(source: SessionSource, item: Item, marks: NodeMarks, colours: Map<string, string>): SVGElement {
  const tree = source.tree;
  const id = tree.ids[item.node];
  const role = tree.roles[item.node];
  const summary = tree.summaries[item.node];
  const classes = ['jtc-pnode', `jtc-role-${role}`];
  if (marks.onPath.has(item.node)) {
    classes.push('jtc-on-path');
  }
  if (marks.onShown.has(item.node)) {
    classes.push('jtc-on-selected-path');
  }
  if (id === source.leaf) {
    classes.push('jtc-leaf');
  }
  if (marks.selected === id) {
    classes.push('jtc-selected');
  }
  if (summary?.interrupted) {
    classes.push('jtc-interrupted');
  }
  if (source.hidden.has(id)) {
    classes.push('jtc-hidden-node');
  }
  const group = svgElement('g', { class: classes.join(' '), 'data-id': id });
  if (id === source.leaf) {
    group.append(svgElement('circle', { class: 'jtc-leaf-ring', r: 12 }));
  }
  const model = role === 'assistant' ? summary?.model ?? null : null;
  group.append(
    role === 'assistant'
      ? svgElement('rect', { class: 'jtc-shape', x: -6, y: -6, width: 12, height: 12, rx: 3, fill: model ? colours.get(model) ?? NO_MODEL : NO_MODEL })
      : svgElement('circle', { class: 'jtc-shape', r: role === 'user' ? 7 : 5 })
  );
  const caption = svgElement('text', { class: 'jtc-caption', y: 21, 'text-anchor': 'middle' });
  caption.textContent = shortId(id);
  group.append(caption);
  const label = source.label(id);
  if (label) {
    const tag = svgElement('g', { class: 'jtc-tag', transform: 'translate(-6,-15)' });
    const shown = label.length <= TAG_CHARS ? label : label.slice(0, TAG_CHARS - 1) + '…';
    const text = svgElement('text', { x: 4, y: 0.5 });
    text.textContent = shown;
    tag.append(svgElement('rect', { y: -9, height: 12, rx: 3, width: 5 * shown.length + 8 }), text);
    group.append(tag);
  }
  return group;
}

/** A fold: a pill with what it stands for (`⋯ 12`, `+57`, `2 hidden`). */
export function foldShape(item: Item, trans: Translation): SVGElement {
  const group = svgElement('g', { class: `jtc-pfold jtc-pfold-${item.kind}`, 'data-key': item.key });
  const text =
    item.kind === 'chain'
      ? trans.__('⋯ %1', item.count.toLocaleString())
      : item.kind === 'more'
        ? trans.__('+%1', item.count.toLocaleString())
        : trans._n('%1 hidden', '%1 hidden', item.branches);
  const label = svgElement('text', { x: 0, y: 3.5 });
  label.textContent = text;
  group.append(svgElement('rect', { x: -8, y: -8, height: 16, rx: 8, width: 5.6 * text.length + 16 }), label);
  return group;
}

/** What a tooltip says about an item: a node's first line, role and id, model and numbers. */
export function describe(source: SessionSource, item: Item, trans: Translation, hint: string): string[] {
  const tree = source.tree;
  if (item.kind === 'node') {
    const summary = tree.summaries[item.node];
    return [
      plainHead(tree.heads[item.node]) || trans.__('(empty)'),
      joinItems([roleName(tree.roles[item.node], trans), tree.ids[item.node]], trans),
      summaryLine(summary, trans),
      source.hidden.has(tree.ids[item.node]) ? trans.__('hidden branch (kept in the file)') : '',
      hint
    ];
  } else if (item.kind === 'chain') {
    return [trans._n('%1 message folded', '%1 messages folded', item.count), trans.__('click: show them')];
  } else if (item.kind === 'more') {
    return [joinItems([trans._n('%1 more branch', '%1 more branches', item.branches), trans._n('%1 message', '%1 messages', item.count)], trans), trans.__('click: show them')];
  } else {
    return [trans._n('%1 hidden branch, not deleted', '%1 hidden branches, not deleted', item.branches), trans.__('click: show them')];
  }
}

/** A colour per model, in the order models first appear among the drawn answers (as in the SVG export). */
export function modelColours(source: SessionSource, items: Item[]): Map<string, string> {
  const colours = new Map<string, string>();
  for (const item of items) {
    if (item.kind !== 'node' || source.tree.roles[item.node] !== 'assistant') {
      continue;
    }
    const model = source.tree.summaries[item.node]?.model;
    if (model && !colours.has(model)) {
      colours.set(model, PALETTE[colours.size % PALETTE.length]);
    }
  }
  return colours;
}

export function curve([x1, y1]: [number, number], [x2, y2]: [number, number]): string {
  const middle = (x1 + x2) / 2;
  return `M${x1},${y1}C${middle},${y1} ${middle},${y2} ${x2},${y2}`;
}

export function svgElement(tag: string, attrs: Record<string, string | number>): SVGElement {
  const element = document.createElementNS(SVG_NS, tag) as SVGElement;
  for (const [name, value] of Object.entries(attrs)) {
    element.setAttribute(name, String(value));
  }
  return element;
}
