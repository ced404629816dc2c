/**
 * Where the widget's code is found on a page: one entry on `globalThis` under the
 * registered symbol `Symbol.for('jupyter-tree-chat:widget')`.
 *
 * Every `TreePanel` and `TurnControl` carries only a small loader as its `_esm`
 * (jupyter_tree_chat/widget/loader.js), not this bundle. The lab extension, which
 * bundles the same front end, puts it here when it activates; the loader takes it from
 * here when it speaks the kernel's protocol (the messages both sides speak), and otherwise
 * asks its kernel for the code once per page. Bump `WIDGET_PROTOCOL` (and loader.js's
 * `PROTOCOL`, and `widget/loader.py`'s) when the kernel's messages or traits change, and
 * keep in `WIDGET_PROTOCOLS` each older one this code still reads.
 */

export const WIDGET_KEY: symbol = Symbol.for('jupyter-tree-chat:widget');
export const WIDGET_PROTOCOL = 3;
/**
 * Every protocol this code speaks. Protocol 1's views (a notebook saved by an earlier
 * version) have a `busy` trait each; protocol 2's read it from the session's shared
 * `SessionState` (shared.ts); protocol 3's turn controls that share a place of the tree
 * read what they show from its `places` too (store.ts, `turnInfo`). This code reads
 * each, so their saved loaders use it too.
 */
export const WIDGET_PROTOCOLS: readonly number[] = Object.freeze([1, 2, WIDGET_PROTOCOL]);

/** What anywidget calls: `initialize` once per model, `render` once per view. */
export interface WidgetDefinition {
  initialize(context: { model: any }): unknown;
  render(context: { model: any; el: HTMLElement }): unknown;
}

/**
 * Put the widget's code on the page (the lab extension, once, when it activates). A
 * protocol 1 loader reads only `protocol`, so that is the oldest spoken; later loaders
 * look for theirs in `protocols`.
 */
export function registerWidget(widget: WidgetDefinition): void {
  const entry = Object.freeze({ protocol: WIDGET_PROTOCOLS[0], protocols: WIDGET_PROTOCOLS, widget });
  Object.defineProperty(globalThis, WIDGET_KEY, { value: entry, configurable: true, enumerable: false, writable: false });
}
