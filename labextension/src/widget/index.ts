/**
 * The anywidget front end of jupyter-tree-chat (`TreePanel` and `TurnControl` in
 * jupyter_tree_chat/widget/widgets.py). Built by `npm run build:widget` into
 * jupyter_tree_chat/static/widget.js.
 *
 * `initialize` runs once per model and owns the store, so every view of one widget
 * shares what the kernel sent; `render` draws one view (the panel or the per-turn
 * control, by the `mode` trait). Both return their cleanup.
 */

import { KernelMessage, Store, WidgetModel } from './model';
import { PanelView } from './panel';
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
  model.on('msg:custom', onMessage);
  model.on('change:leaf', onTree);
  model.on('change:labels', onTree);
  model.on('change:turn', onTree);
  model.on('change:busy', onBusy);
  model.on('change:error', onStatus);
  return () => {
    model.off('msg:custom', onMessage);
    model.off('change:leaf', onTree);
    model.off('change:labels', onTree);
    model.off('change:turn', onTree);
    model.off('change:busy', onBusy);
    model.off('change:error', onStatus);
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
  const view = model.get('mode') === 'turn' ? new TurnView(el, store) : new PanelView(el, store);
  return () => {
    view.dispose();
    own?.();
  };
}

export default { initialize, render };
