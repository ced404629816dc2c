/**
 * Where the widget's code is found on a page: one entry on `globalThis` under the
 * registered symbol `Symbol.for('jupyter-tree-chat:widget')`.
 *
 * Every `TreePanel` and `TurnControl` carries only a small loader as its `_esm`
 * (jupyter_tree_chat/widget/loader.js), not this bundle. The lab extension, which
 * bundles the same front end, puts it here when it activates; the loader takes it from
 * here when its `protocol` is the kernel's (the messages both sides speak), and otherwise
 * asks its kernel for the code once per page. Bump `WIDGET_PROTOCOL` (and loader.js's
 * `PROTOCOL`, and `widget/loader.py`'s) when the kernel's messages or traits change.
 */

export const WIDGET_KEY: symbol = Symbol.for('jupyter-tree-chat:widget');
export const WIDGET_PROTOCOL = 1;

/** What anywidget calls: `initialize` once per model, `render` once per view. */
export interface WidgetDefinition {
  initialize(context: { model: any }): unknown;
  render(context: { model: any; el: HTMLElement }): unknown;
}

/** Put the widget's code on the page (the lab extension, once, when it activates). */
export function registerWidget(widget: WidgetDefinition): void {
  const entry = Object.freeze({ protocol: WIDGET_PROTOCOL, widget });
  Object.defineProperty(globalThis, WIDGET_KEY, { value: entry, configurable: true, enumerable: false, writable: false });
}
