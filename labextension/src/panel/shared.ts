/**
 * Whether a reply is being written in a session, read from one model that every view of
 * the session on the page shares: the kernel's `SessionState` (jupyter_tree_chat/widget/
 * base.py), a plain widget model with a `busy` trait. Each view's `session_state` trait
 * names it (`IPY_MODEL_<id>`); anywidget's `widget_manager` finds it. So a reply's start
 * and end are one message each, however many turn controls the notebook has. A view
 * saved by an older version has no `session_state` but a `busy` of its own (store.ts,
 * `replying`), and so has a view on a page without a widget manager.
 */

/** The session's `SessionState` as the page's widget manager holds it: `busy`, and
 * (protocol 3) `places`, what the turn controls sharing a place of the tree show. */
export interface SharedState {
  get(name: 'busy' | 'places'): unknown;
  on(event: 'change:busy' | 'change:places', callback: () => void): void;
  off(event: 'change:busy' | 'change:places', callback: () => void): void;
}

/** What this needs of a view's model (store.ts's `WidgetModel`). */
interface Referring {
  get(name: 'session_state'): string | undefined;
  widget_manager?: { get_model(id: string): Promise<SharedState> };
}

const REFERENCE = 'IPY_MODEL_';

/**
 * Find the shared state `model` names: `found` gets it, then `changed` runs once and
 * again on each change of `busy`, and `placed` on each change of `places`. Returns the
 * cleanup.
 */
export function followSessionState(
  model: Referring,
  found: (state: SharedState) => void,
  changed: () => void,
  placed: () => void = () => {}
): () => void {
  const ref = model.get('session_state');
  const manager = model.widget_manager;
  if (typeof ref !== 'string' || !ref.startsWith(REFERENCE) || !manager) {
    return () => {};
  }
  let stopped = false;
  let state: SharedState | null = null;
  manager.get_model(ref.slice(REFERENCE.length)).then(
    shared => {
      if (stopped) {
        return;
      }
      state = shared;
      found(shared);
      shared.on('change:busy', changed);
      shared.on('change:places', placed);
      changed();
    },
    () => {} // not on this page (saved without it): the view's own `busy` stays
  );
  return () => {
    stopped = true;
    state?.off('change:busy', changed);
    state?.off('change:places', placed);
  };
}
