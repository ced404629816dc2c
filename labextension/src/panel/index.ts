/**
 * The anywidget front end of jupyter-tree-chat (`TreePanel` and `TurnControl` in
 * jupyter_tree_chat/widget/widgets.py). Built by `npm run build:widget` into
 * jupyter_tree_chat/widget/static/widget.js.
 *
 * `initialize` runs once per model and owns the store, so every view of one widget
 * shares what the kernel sent; `render` draws one view (the session view with its
 * actions, or the per-turn control, by the `mode` trait), speaking the lab's language
 * when the lab extension's bridge is there (bridge.ts), and tells the kernel that
 * language, so its footers and notices follow. A turn control that carries cells the
 * notebook server's `insert` proposed puts them below its cell, once. Both return their
 * cleanup.
 */

import { canInsertBelow, hostLanguage, hostTranslation, insertCodeBelow, insertProposedCells } from '../bridge';
import { Markdown } from '../components/markdown';
import { SessionView } from '../components/sessionview';
import { sanitizedMarkdown } from '../sanitize/markdown';
import { foldFooterWhileShown } from './footer';
import { followSessionState } from './shared';
import { KernelMessage, Store, WidgetModel } from './store';
import { GridView } from './grid';
import { TurnView } from './turn';

/**
 * Stores by the widget's `uid` trait: anywidget hands `initialize` and each `render`
 * a different proxy of the same model, so the proxy itself cannot be the key.
 */
const stores = new Map<string, Store>();

export function initialize({ model }: { model: WidgetModel }): () => void {
  const uid = model.get('uid');
  const store = new Store(model);
  stores.set(uid, store);
  const onMessage = (message: KernelMessage): void => store.handle(message);
  const onTree = (): void => {
    if (store.stream?.done) {
      store.stream = null; // the stored reply has taken the streamed one's place
    }
    store.emit('tree');
  };
  const onBusy = (): void => {
    if (!store.replying) {
      store.replyEnded();
    }
    onTree();
  };
  const onStatus = (): void => store.emit('status');
  const listeners: Array<[string, (...args: any[]) => void]> = [
    ['msg:custom', onMessage],
    ['change:leaf', onTree],
    ['change:labels', onTree],
    ['change:context', () => store.emit('context')], // the header alone: no redraw
    ['change:hidden', onTree],
    ['change:grades', onTree],
    ['change:links', onTree],
    ['change:turn', onTree],
    ['change:busy', onBusy], // a view saved by an older version; else the shared state's
    ['change:error', onStatus]
  ];
  for (const [event, listener] of listeners) {
    model.on(event, listener);
  }
  const unfollow = followSessionState(model, state => (store.shared = state), onBusy, onTree);
  return () => {
    unfollow();
    for (const [event, listener] of listeners) {
      model.off(event, listener);
    }
    store.dispose();
    if (stores.get(uid) === store) {
      stores.delete(uid);
    }
  };
}

export function render({ model, el }: { model: WidgetModel; el: HTMLElement }): () => void {
  // a host that does not call `initialize` gets a store of the view's own
  const own = stores.has(model.get('uid')) ? null : initialize({ model });
  const store = stores.get(model.get('uid'))!;
  const language = hostLanguage();
  if (language) {
    // the kernel speaks the lab's language too, and knows the lab can insert cells
    model.send({ a: 'language', code: language, ...(canInsertBelow() ? { insert: 1 } : {}) });
  }
  const trans = store.translation(hostTranslation()); // or the language set in the kernel
  const markdown = new Markdown(sanitizedMarkdown, trans);
  const code = { insert: insertCodeBelow(answer => store.text(answer)?.cell) };
  const mode = model.get('mode');
  const view =
    mode === 'turn'
      ? new TurnView(el, store, trans, markdown, code)
      : mode === 'grid'
        ? new GridView(el, store, trans, markdown)
        : new SessionView(el, store, {
          trans,
          markdown,
          code,
          actions: store,
          finder: store,
          exportHtml: () => store.exportHtml(),
          fallbackTitle: trans.__('Chat session'),
          emptyText: trans.__('No messages yet: run a %1 cell.', '%%chat')
        });
  const unfold = model.get('mode') === 'turn' ? foldFooterWhileShown(el, store) : null;
  const proposed = model.get('inserts');
  if (model.get('mode') === 'turn' && proposed?.codes?.length && model.set && model.save_changes) {
    if (insertProposedCells(proposed.codes, proposed.cell ?? '', el)) {
      model.set('inserts', {}); // inserted once: not again when the notebook is reopened
      model.save_changes();
    }
  }
  return () => {
    unfold?.();
    view.dispose();
    own?.();
  };
}

export default { initialize, render };
