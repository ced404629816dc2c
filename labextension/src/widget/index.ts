/**
 * The anywidget front end of jupyter-tree-chat (`TreePanel` and `TurnControl` in
 * jupyter_tree_chat/widget.py). Built by `npm run build:widget` into
 * jupyter_tree_chat/static/widget.js.
 *
 * `initialize` runs once per model and owns the store, so every view of one widget
 * shares what the kernel sent; `render` draws one view (the panel or the per-turn
 * control, by the `mode` trait). Both return their cleanup.
 */

import { KernelMessage, Store, WidgetModel } from './model';
import { PanelView } from './panel';
import { TurnView } from './turn';

const stores = new WeakMap<WidgetModel, Store>();

function storeFor(model: WidgetModel): Store {
  let store = stores.get(model);
  if (!store) {
    store = new Store(model);
    stores.set(model, store);
  }
  return store;
}

export function initialize({ model }: { model: WidgetModel }): () => void {
  const store = storeFor(model);
  const onMessage = (message: KernelMessage): void => store.handle(message);
  const onTree = (): void => {
    if (store.stream?.done) {
      store.stream = null; // the stored reply has taken the streamed one's place
    }
    store.emit('tree');
  };
  const onStatus = (): void => store.emit('status');
  model.on('msg:custom', onMessage);
  model.on('change:leaf', onTree);
  model.on('change:labels', onTree);
  model.on('change:turn', onTree);
  model.on('change:busy', onTree);
  model.on('change:error', onStatus);
  return () => {
    model.off('msg:custom', onMessage);
    model.off('change:leaf', onTree);
    model.off('change:labels', onTree);
    model.off('change:turn', onTree);
    model.off('change:busy', onTree);
    model.off('change:error', onStatus);
    store.dispose();
    stores.delete(model);
  };
}

export function render({ model, el }: { model: WidgetModel; el: HTMLElement }): () => void {
  const store = storeFor(model);
  const view = model.get('mode') === 'turn' ? new TurnView(el, store) : new PanelView(el, store);
  return () => view.dispose();
}

export default { initialize, render };
