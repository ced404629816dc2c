/**
 * The full panel: header and status, the tree on the left, the compare view and the
 * active path on the right. It only reads the store and sends actions; what changes
 * comes back as store events, whichever view (or `%%chat` cell) caused it.
 */

import { h } from '../render/dom';
import { renderCompare } from './compare';
import { Conversation } from './conversation';
import { Action, Store } from './model';
import { renderStatus } from './status';
import { TreeList } from './treelist';

export class PanelView {
  readonly node: HTMLElement;
  private readonly header: HTMLElement;
  private readonly status: HTMLElement;
  private readonly compareHost: HTMLElement;
  private readonly tree: TreeList;
  private readonly conversation: Conversation;
  private compareIds: string[] | null = null;
  private readonly unsubscribe: () => void;
  private readonly onKey = (event: KeyboardEvent): void => {
    if (event.key === 'Escape' && this.compareIds) {
      this.closeCompare();
    }
  };

  constructor(host: HTMLElement, private readonly store: Store) {
    const act = (action: Action): void => store.act(action);
    this.tree = new TreeList(store, {
      activate: id => this.activate(id),
      sibling: (id, step) => {
        const siblings = store.siblings(id);
        const next = siblings[siblings.indexOf(id) + step];
        if (next !== undefined) {
          act({ a: 'switch', id: next });
        }
      }
    });
    this.conversation = new Conversation(store, { act, compare: id => this.openCompare(id) });
    this.header = h('div', { class: 'jtw-header' });
    this.status = h('div', { class: 'jtw-status-host' });
    this.compareHost = h('div', { class: 'jtw-compare-host' });
    this.node = h(
      'div',
      { class: 'jtw-widget jtw-panel' },
      this.header,
      this.status,
      h('div', { class: 'jtw-main' }, this.tree.node, h('div', { class: 'jtw-right' }, this.compareHost, this.conversation.node))
    );
    this.node.addEventListener('keydown', this.onKey);
    host.append(this.node);
    this.unsubscribe = store.subscribe(what => this.update(what));
    this.update('all');
  }

  dispose(): void {
    this.unsubscribe();
    this.tree.dispose();
    this.conversation.dispose();
    this.node.removeEventListener('keydown', this.onKey);
    this.node.remove();
  }

  private update(what: string): void {
    if (what === 'delta') {
      this.conversation.delta();
      return;
    }
    if (what === 'status') {
      this.status.replaceChildren(renderStatus(this.store));
      return;
    }
    if (what !== 'texts') {
      this.renderHeader();
      this.tree.update(this.store.pathTo(this.store.leaf));
      this.status.replaceChildren(renderStatus(this.store));
    }
    this.conversation.render();
    this.renderCompare();
  }

  private renderHeader(): void {
    const s = this.store;
    let leaves = 0;
    for (const kids of s.children) {
      if (!kids.length) {
        leaves++;
      }
    }
    const title = s.model.get('title');
    this.header.replaceChildren(
      h('span', { class: 'jtw-title' }, title || 'Chat session'),
      h(
        'span',
        { class: 'jtw-counts' },
        `${s.size} node${s.size === 1 ? '' : 's'} · ${leaves} branch${leaves === 1 ? '' : 'es'}`
      )
    );
  }

  /** A click on a tree row: show it if it is on the current branch, else switch to it. */
  private activate(id: string): void {
    const path = this.store.pathTo(this.store.leaf);
    if (path.includes(id)) {
      this.conversation.reveal(id);
    } else {
      this.store.act({ a: 'switch', id });
    }
  }

  private openCompare(id: string): void {
    const siblings = this.store.siblings(id);
    this.compareIds = [id, ...siblings.filter(other => other !== id)];
    this.renderCompare();
    this.compareHost.scrollIntoView?.({ block: 'nearest' });
  }

  private closeCompare(): void {
    this.compareIds = null;
    this.renderCompare();
  }

  private renderCompare(): void {
    if (!this.compareIds) {
      this.compareHost.replaceChildren();
      return;
    }
    // siblings may have grown (a retry while comparing): keep the reference first
    const [reference] = this.compareIds;
    const siblings = this.store.siblings(reference);
    this.compareIds = [reference, ...siblings.filter(other => other !== reference)];
    this.compareHost.replaceChildren(
      renderCompare(this.store, this.compareIds, {
        choose: id => {
          this.store.act({ a: 'switch', id });
          this.compareIds = [id, ...this.compareIds!.filter(other => other !== id)];
        },
        close: () => this.closeCompare()
      })
    );
  }
}
