/**
 * A node's details: where it sits in the tree and everything its `meta` holds (model,
 * provider, stop reason, cell id, interrupted, token usage, the thinking it was asked
 * with, and any other key), and its cost where the source knows it, as a definition list. Each value carries `data-key` (the English key) for tests and styles.
 */

import { typedSource } from './chips';
import { h } from './dom';
import { SessionSource, siblingPlace } from './model';
import { Translation } from './translate';
import { position, roleName } from './vocabulary';

const KNOWN = ['model', 'provider', 'stop_reason', 'cell_id', 'interrupted', 'usage'];

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function display(value: unknown): string {
  if (typeof value === 'string') {
    return value;
  }
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * What the details' keys are called: the tree's, and every `meta` key this project writes
 * (a new one gets its name here); any other key, from another tool's file, as written.
 */
function keyNames(trans: Translation): Map<string, string> {
  // every name is spelled out, so a catalog extractor finds it; three to a line, a table
  return new Map(Object.entries({
    id: trans._p('detail', 'id'), parent: trans._p('detail', 'parent'), role: trans._p('detail', 'role'),
    line: trans._p('detail', 'line'), sibling: trans._p('detail', 'sibling'), children: trans._p('detail', 'children'),
    label: trans._p('detail', 'label'), time: trans._p('detail', 'time'), model: trans._p('detail', 'model'),
    provider: trans._p('detail', 'provider'), stop_reason: trans._p('detail', 'stop reason'),
    cell_id: trans._p('detail', 'cell id'), interrupted: trans._p('detail', 'interrupted'),
    input_tokens: trans._p('detail', 'input tokens'), output_tokens: trans._p('detail', 'output tokens'),
    cache_read_input_tokens: trans._p('detail', 'cache read input tokens'),
    cache_creation_input_tokens: trans._p('detail', 'cache creation input tokens'),
    duration_ms: trans._p('detail', 'duration ms'), error: trans._p('detail', 'error'),
    edited_from: trans._p('detail', 'edited from'), compacted_from: trans._p('detail', 'compacted from'),
    typed: trans._p('detail', 'typed as'), synthetic: trans._p('detail', 'synthetic'), thinking: trans._p('detail', 'thinking'), cost: trans._p('detail', 'cost')
  }));
}

export function renderDetails(source: SessionSource, id: string, trans: Translation): HTMLElement {
  const { tree } = source;
  const content = source.content(id);
  const meta = content?.meta ?? {};
  const names = keyNames(trans);
  // [key, value]: the key names the row (`data-key`, in English, `_` as a space)
  const rows: Array<[string, string]> = [
    ['id', id],
    ['parent', tree.parentOf(id) ?? trans.__('(root)')],
    ['role', roleName(tree.role(id), trans)]
  ];
  if (content?.line) {
    rows.push(['line', String(content.line)]);
  }
  const place = siblingPlace(tree, id);
  if (place.count > 1) {
    rows.push(['sibling', position(place.pos, place.count, trans)]);
  }
  rows.push(['children', String(tree.childIds(id).length)]);
  const label = source.label(id);
  if (label) {
    rows.push(['label', label]);
  }
  const timestamp = content?.timestamp;
  if (typeof timestamp === 'number' && Number.isFinite(timestamp)) {
    const date = new Date(timestamp > 1e12 ? timestamp : timestamp * 1000);
    rows.push(['time', Number.isNaN(date.getTime()) ? String(timestamp) : date.toISOString()]);
  }
  if (content) {
    for (const key of ['model', 'provider', 'stop_reason', 'cell_id']) {
      if (meta[key] !== undefined && meta[key] !== null) {
        rows.push([key, display(meta[key])]);
      }
    }
    rows.push(['interrupted', meta.interrupted === true ? trans.__('yes') : trans.__('no')]);
    for (const [key, value] of Object.entries(isObject(meta.usage) ? meta.usage : {})) {
      rows.push([key, display(value)]);
    }
    const cost = tree.summary(id)?.cost;
    if (cost) {
      rows.push(['cost', cost]);
    }
    for (const [key, value] of Object.entries(meta)) {
      if (!KNOWN.includes(key)) {
        rows.push([key, key === 'typed' ? typedSource(meta) ?? display(value) : display(value)]);
      }
    }
  }
  const list = h('dl', { class: 'jtc-details-list' });
  for (const [key, value] of rows) {
    const shown = key.replace(/_/g, ' ');
    list.append(h('dt', {}, names.get(key) ?? shown), h('dd', { 'data-key': shown }, value));
  }
  return h(
    'section',
    { class: 'jtc-details', 'aria-label': trans.__('Node details') },
    content ? null : h('div', { class: 'jtc-pending' }, trans.__('loading the details…')),
    list
  );
}
