/**
 * The session view shared by the JupyterLab file viewer and the anywidget panel: the tree,
 * the selected node's path as a conversation, sibling answers side by side with word
 * differences marked, the node's details and the file's problems.
 *
 * Framework-free. The host injects `renderMarkdown`, which must return SANITIZED html
 * (JupyterLab's sanitizer in the viewer); every other string reaches the DOM as text.
 */

import { wordDiff } from './diff';
import { h } from './dom';
import { ChatNode, ChatSession, emptySession, formatProblem } from './format';
import { neutraliseRemote, setSanitizedHtml } from './safety';
import {
  childrenOf,
  deepestLeaf,
  firstLine,
  partsOf,
  pathTo,
  plainText,
  roleOf,
  shortId,
  siblingPosition,
  siblingsOf
} from './tree';

export type RenderMarkdown = (text: string) => Promise<string> | string;

export interface SessionViewOptions {
  /** Markdown to SANITIZED html. The view still blocks remote images in the result. */
  renderMarkdown: RenderMarkdown;
  /** Called when the user selects a node. */
  onSelect?: (id: string | null) => void;
}

const MAX_INDENT = 24;
const MAX_COMPARE = 4;

export class SessionView {
  readonly node: HTMLElement;
  private session: ChatSession = emptySession();
  private selected: string | null = null;
  private collapsed = new Set<string>();
  private title = '';
  private generation = 0;
  private readonly htmlCache = new Map<string, string>();
  private readonly options: SessionViewOptions;
  private readonly onClick = (event: Event): void => this.handleClick(event);
  private readonly onKey = (event: KeyboardEvent): void => this.handleKey(event);

  constructor(host: HTMLElement, options: SessionViewOptions) {
    this.options = options;
    this.node = h('div', { class: 'jtc-view' });
    this.node.addEventListener('click', this.onClick);
    this.node.addEventListener('keydown', this.onKey);
    host.append(this.node);
    this.render();
  }

  /** Show a session; the selection survives a reload while its node exists. */
  setSession(session: ChatSession, title = this.title): void {
    this.session = session;
    this.title = title;
    if (this.selected === null || !session.nodes.has(this.selected)) {
      this.selected = session.leaf;
    }
    this.render();
  }

  get selection(): string | null {
    return this.selected;
  }

  select(id: string | null): void {
    if (id !== null && !this.session.nodes.has(id)) {
      return;
    }
    this.selected = id;
    this.render();
    this.options.onSelect?.(id);
    if (id !== null) {
      const row = this.node.querySelector<HTMLElement>(`.jtc-row[data-id="${CSS.escape(id)}"]`);
      row?.scrollIntoView?.({ block: 'nearest' });
    }
  }

  dispose(): void {
    this.generation++;
    this.node.removeEventListener('click', this.onClick);
    this.node.removeEventListener('keydown', this.onKey);
    this.node.remove();
  }

  // -- events -------------------------------------------------------------------------

  private handleClick(event: Event): void {
    const target = (event.target as HTMLElement | null)?.closest<HTMLElement>('[data-action]');
    if (!target || !this.node.contains(target)) {
      return;
    }
    const id = target.dataset.id ?? null;
    switch (target.dataset.action) {
      case 'select':
        this.select(id);
        break;
      case 'toggle':
        if (id !== null) {
          if (this.collapsed.has(id)) {
            this.collapsed.delete(id);
          } else {
            this.collapsed.add(id);
          }
          this.render();
        }
        break;
      case 'follow':
        if (id !== null) {
          this.select(deepestLeaf(this.session, id));
        }
        break;
    }
  }

  private handleKey(event: KeyboardEvent): void {
    const row = (event.target as HTMLElement | null)?.closest<HTMLElement>('.jtc-row');
    if (!row || (event.key !== 'ArrowDown' && event.key !== 'ArrowUp')) {
      return;
    }
    const rows = Array.from(this.node.querySelectorAll<HTMLElement>('.jtc-row'));
    const next = rows[rows.indexOf(row) + (event.key === 'ArrowDown' ? 1 : -1)];
    if (next) {
      event.preventDefault();
      this.select(next.dataset.id ?? null);
      next.querySelector<HTMLElement>('.jtc-row-main')?.focus();
    }
  }

  // -- rendering ----------------------------------------------------------------------

  private render(): void {
    const generation = ++this.generation;
    const s = this.session;
    const branches = Array.from(s.nodes.keys()).filter(id => childrenOf(s, id).length === 0);
    const header = h(
      'div',
      { class: 'jtc-header' },
      h('span', { class: 'jtc-title' }, this.title || 'Chat session'),
      h(
        'span',
        { class: 'jtc-counts' },
        `${s.nodes.size} node${s.nodes.size === 1 ? '' : 's'} · ${branches.length} branch` +
          `${branches.length === 1 ? '' : 'es'}` +
          (s.leaf ? ` · current leaf ${shortId(s.leaf)}` : '')
      ),
      s.problems.length
        ? h(
            'span',
            { class: 'jtc-badge jtc-badge-problem' },
            `${s.problems.length} problem${s.problems.length === 1 ? '' : 's'}`
          )
        : null
    );
    const right = h('div', { class: 'jtc-right' });
    const selectedNode = this.selected === null ? undefined : s.nodes.get(this.selected);
    if (selectedNode) {
      right.append(this.renderDetails(selectedNode));
      const compare = this.renderCompare(selectedNode);
      if (compare) {
        right.append(compare);
      }
    }
    right.append(this.renderConversation(generation));
    this.node.replaceChildren(
      header,
      this.renderProblems(),
      h('div', { class: 'jtc-main' }, this.renderTree(), right)
    );
  }

  private renderProblems(): HTMLElement {
    const problems = this.session.problems;
    const section = h('section', { class: 'jtc-problems', 'aria-label': 'Problems in the file' });
    if (!problems.length) {
      section.classList.add('jtc-empty');
      return section;
    }
    const list = h('ul', { class: 'jtc-problem-list' });
    for (const problem of problems) {
      list.append(
        h('li', { class: 'jtc-problem', 'data-line': problem.line }, formatProblem(problem))
      );
    }
    section.append(
      h(
        'details',
        { open: true },
        h('summary', {}, `${problems.length} problem${problems.length === 1 ? '' : 's'} in the file`),
        list
      )
    );
    return section;
  }

  private renderTree(): HTMLElement {
    const s = this.session;
    const tree = h('div', { class: 'jtc-tree', role: 'tree', 'aria-label': 'Session tree' });
    const onPath = new Set(pathTo(s, s.leaf));
    const selectedPath = new Set(pathTo(s, this.selected));
    // iterative depth-first walk; indentation grows only below a branch point
    const stack: Array<{ id: string; indent: number }> = [];
    const roots = childrenOf(s, null);
    for (let i = roots.length - 1; i >= 0; i--) {
      stack.push({ id: roots[i], indent: roots.length > 1 ? 1 : 0 });
    }
    if (!roots.length) {
      tree.append(h('div', { class: 'jtc-empty-note' }, 'No messages.'));
    }
    while (stack.length) {
      const { id, indent } = stack.pop()!;
      const node = s.nodes.get(id)!;
      const kids = childrenOf(s, id);
      const branching = kids.length > 1;
      const collapsed = this.collapsed.has(id);
      tree.append(this.renderRow(node, indent, kids.length, collapsed, onPath, selectedPath));
      if (collapsed) {
        continue;
      }
      for (let i = kids.length - 1; i >= 0; i--) {
        stack.push({ id: kids[i], indent: branching ? indent + 1 : indent });
      }
    }
    return tree;
  }

  private renderRow(
    node: ChatNode,
    indent: number,
    childCount: number,
    collapsed: boolean,
    onPath: Set<string>,
    selectedPath: Set<string>
  ): HTMLElement {
    const s = this.session;
    const classes = ['jtc-row', `jtc-role-${cssToken(roleOf(node))}`];
    if (onPath.has(node.id)) {
      classes.push('jtc-on-path');
    }
    if (selectedPath.has(node.id)) {
      classes.push('jtc-on-selected-path');
    }
    if (node.id === this.selected) {
      classes.push('jtc-selected');
    }
    const label = s.labels.get(node.id);
    const position = siblingPosition(s, node.id);
    const row = h(
      'div',
      {
        class: classes.join(' '),
        role: 'treeitem',
        'data-id': node.id,
        'aria-level': indent + 1,
        'aria-selected': node.id === this.selected ? 'true' : 'false',
        'aria-expanded': childCount > 1 ? String(!collapsed) : undefined,
        style: `--jtc-indent: ${Math.min(indent, MAX_INDENT)}`
      },
      childCount > 1
        ? h(
            'button',
            {
              class: 'jtc-toggle',
              'data-action': 'toggle',
              'data-id': node.id,
              title: collapsed ? `Expand ${childCount} branches` : `Collapse ${childCount} branches`
            },
            collapsed ? '▸' : '▾'
          )
        : h('span', { class: 'jtc-toggle-space' }),
      h(
        'button',
        {
          class: 'jtc-row-main',
          'data-action': 'select',
          'data-id': node.id,
          title: node.id
        },
        h('span', { class: 'jtc-id' }, shortId(node.id)),
        h('span', { class: 'jtc-role' }, roleOf(node)),
        position ? h('span', { class: 'jtc-position', title: 'position among siblings' }, position) : null,
        label ? h('span', { class: 'jtc-label' }, label) : null,
        node.meta?.interrupted === true ? h('span', { class: 'jtc-interrupted' }, 'interrupted') : null,
        node.id === s.leaf ? h('span', { class: 'jtc-leaf-mark' }, 'current') : null,
        h('span', { class: 'jtc-first-line' }, firstLine(node.message)),
        collapsed ? h('span', { class: 'jtc-hidden-count' }, `+${childCount} branches`) : null
      )
    );
    return row;
  }

  private renderConversation(generation: number): HTMLElement {
    const s = this.session;
    const section = h('section', { class: 'jtc-conversation', 'aria-label': 'Conversation' });
    const path = pathTo(s, this.selected);
    section.append(
      h('h3', { class: 'jtc-section-title' }, `Path to ${this.selected ? shortId(this.selected) : '—'} (${path.length} messages)`)
    );
    for (const id of path) {
      const node = s.nodes.get(id)!;
      const siblings = siblingsOf(s, id);
      const index = siblings.indexOf(id);
      const header = h(
        'div',
        { class: 'jtc-msg-header' },
        h('span', { class: 'jtc-role' }, roleOf(node)),
        h('button', { class: 'jtc-id jtc-link', 'data-action': 'select', 'data-id': id, title: id }, shortId(id)),
        siblings.length > 1
          ? h(
              'span',
              { class: 'jtc-switcher' },
              h(
                'button',
                {
                  class: 'jtc-link',
                  'data-action': 'follow',
                  'data-id': siblings[(index + siblings.length - 1) % siblings.length],
                  title: 'previous sibling'
                },
                '‹'
              ),
              h('span', {}, `${index + 1}/${siblings.length}`),
              h(
                'button',
                {
                  class: 'jtc-link',
                  'data-action': 'follow',
                  'data-id': siblings[(index + 1) % siblings.length],
                  title: 'next sibling'
                },
                '›'
              )
            )
          : null,
        s.labels.get(id) ? h('span', { class: 'jtc-label' }, s.labels.get(id)!) : null,
        node.meta?.interrupted === true ? h('span', { class: 'jtc-interrupted' }, 'interrupted') : null
      );
      const body = h('div', { class: 'jtc-msg-body' });
      for (const part of partsOf(node.message)) {
        if (part.kind === 'text') {
          const holder = h('div', { class: 'jtc-markdown' });
          body.append(holder);
          this.fillMarkdown(holder, part.text, generation);
        } else {
          body.append(
            h(
              'details',
              { class: `jtc-part jtc-part-${part.kind}` },
              h('summary', {}, part.title),
              h('pre', {}, part.text)
            )
          );
        }
      }
      section.append(
        h(
          'article',
          {
            class: `jtc-msg jtc-role-${cssToken(roleOf(node))}${id === this.selected ? ' jtc-selected' : ''}`,
            'data-id': id
          },
          header,
          body
        )
      );
    }
    return section;
  }

  private fillMarkdown(holder: HTMLElement, text: string, generation: number): void {
    const cached = this.htmlCache.get(text);
    if (cached !== undefined) {
      setSanitizedHtml(holder, cached);
      return;
    }
    holder.textContent = text; // shown as text until the rendered version arrives
    holder.classList.add('jtc-pending');
    Promise.resolve()
      .then(() => this.options.renderMarkdown(text))
      .then(html => {
        const safe = neutraliseRemote(html);
        if (this.htmlCache.size > 2000) {
          this.htmlCache.clear();
        }
        this.htmlCache.set(text, safe);
        if (generation === this.generation || holder.isConnected) {
          holder.classList.remove('jtc-pending');
          setSanitizedHtml(holder, safe);
          if (text.trim() && isVisuallyEmpty(holder)) {
            // the sanitizer removed everything: show what was written, as text
            holder.replaceChildren(
              h('pre', { class: 'jtc-plain jtc-stripped', title: 'shown as text: nothing in it could be rendered safely' }, text)
            );
          }
        }
      })
      .catch(error => {
        holder.classList.remove('jtc-pending');
        holder.classList.add('jtc-render-error');
        holder.title = `could not render Markdown: ${error}`;
      });
  }

  private renderCompare(selected: ChatNode): HTMLElement | null {
    const s = this.session;
    let ids = siblingsOf(s, selected.id);
    let reference = selected.id;
    let caption = 'Siblings side by side';
    if (ids.length < 2) {
      ids = childrenOf(s, selected.id);
      if (ids.length < 2) {
        return null;
      }
      const onPath = new Set(pathTo(s, s.leaf));
      reference = ids.find(id => onPath.has(id)) ?? ids[0];
      caption = 'Answers side by side';
    }
    const shown = [reference, ...ids.filter(id => id !== reference)].slice(0, MAX_COMPARE);
    const refText = plainText(s.nodes.get(reference)!.message);
    const columns = h('div', { class: 'jtc-compare-columns', style: `--jtc-columns: ${shown.length}` });
    for (const id of shown) {
      const node = s.nodes.get(id)!;
      const text = plainText(node.message);
      let segments: Array<{ text: string; changed: boolean }>;
      if (id === reference) {
        const other = shown.length === 2 ? plainText(s.nodes.get(shown[1])!.message) : null;
        segments = other === null ? [{ text, changed: false }] : wordDiff(text, other).a;
      } else {
        segments = wordDiff(refText, text).b;
      }
      const body = h('div', { class: 'jtc-compare-text' });
      for (const segment of segments) {
        body.append(segment.changed ? h('mark', { class: 'jtc-diff' }, segment.text) : segment.text);
      }
      const meta = node.meta ?? {};
      columns.append(
        h(
          'div',
          { class: `jtc-compare-column${id === reference ? ' jtc-reference' : ''}`, 'data-id': id },
          h(
            'div',
            { class: 'jtc-compare-header' },
            h('button', { class: 'jtc-id jtc-link', 'data-action': 'follow', 'data-id': id, title: id }, shortId(id)),
            h('span', { class: 'jtc-position' }, siblingPosition(s, id)),
            typeof meta.model === 'string' ? h('span', { class: 'jtc-model' }, meta.model) : null,
            tokensSummary(meta) ? h('span', { class: 'jtc-tokens' }, tokensSummary(meta)) : null,
            meta.interrupted === true ? h('span', { class: 'jtc-interrupted' }, 'interrupted') : null
          ),
          body
        )
      );
    }
    const more = ids.length > shown.length ? ` (first ${shown.length} of ${ids.length})` : '';
    return h(
      'section',
      { class: 'jtc-compare', 'aria-label': caption },
      h('h3', { class: 'jtc-section-title' }, caption + more),
      columns
    );
  }

  private renderDetails(node: ChatNode): HTMLElement {
    const s = this.session;
    const meta = node.meta ?? {};
    const usage = isObject(meta.usage) ? meta.usage : {};
    const rows: Array<[string, string]> = [
      ['id', node.id],
      ['parent', node.parentId ?? '(root)'],
      ['role', roleOf(node)]
    ];
    if (node.line) {
      rows.push(['line', String(node.line)]);
    }
    const position = siblingPosition(s, node.id);
    if (position) {
      rows.push(['sibling', position]);
    }
    rows.push(['children', String(childrenOf(s, node.id).length)]);
    const label = s.labels.get(node.id);
    if (label) {
      rows.push(['label', label]);
    }
    const timestamp = node.message.timestamp;
    if (typeof timestamp === 'number' && Number.isFinite(timestamp)) {
      const ms = timestamp > 1e12 ? timestamp : timestamp * 1000;
      const date = new Date(ms);
      rows.push(['time', Number.isNaN(date.getTime()) ? String(timestamp) : date.toISOString()]);
    }
    for (const key of ['model', 'provider', 'stop_reason', 'cell_id']) {
      if (meta[key] !== undefined && meta[key] !== null) {
        rows.push([key.replace('_', ' '), display(meta[key])]);
      }
    }
    rows.push(['interrupted', meta.interrupted === true ? 'yes' : 'no']);
    for (const [key, value] of Object.entries(usage)) {
      rows.push([key.replace(/_/g, ' '), display(value)]);
    }
    for (const [key, value] of Object.entries(meta)) {
      if (!['model', 'provider', 'stop_reason', 'cell_id', 'interrupted', 'usage'].includes(key)) {
        rows.push([key, display(value)]);
      }
    }
    const list = h('dl', { class: 'jtc-details-list' });
    for (const [key, value] of rows) {
      list.append(h('dt', {}, key), h('dd', { 'data-key': key }, value));
    }
    return h(
      'section',
      { class: 'jtc-details', 'aria-label': 'Node details' },
      h('h3', { class: 'jtc-section-title' }, `Node ${shortId(node.id)}`),
      list
    );
  }
}

function isVisuallyEmpty(element: HTMLElement): boolean {
  return (
    !(element.textContent ?? '').trim() &&
    !element.querySelector('img, svg, video, audio, picture, canvas, hr, table, [data-jtc-blocked-src]')
  );
}

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

function tokensSummary(meta: Record<string, unknown>): string {
  const usage = isObject(meta.usage) ? meta.usage : null;
  if (!usage) {
    return '';
  }
  const parts: string[] = [];
  if (typeof usage.input_tokens === 'number') {
    parts.push(`${usage.input_tokens} in`);
  }
  if (typeof usage.output_tokens === 'number') {
    parts.push(`${usage.output_tokens} out`);
  }
  if (typeof usage.cache_read_input_tokens === 'number' && usage.cache_read_input_tokens) {
    parts.push(`${usage.cache_read_input_tokens} cached`);
  }
  return parts.join(' · ');
}

function cssToken(text: string): string {
  return text.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 32) || 'unknown';
}
