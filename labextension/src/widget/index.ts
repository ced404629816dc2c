/**
 * The anywidget front end (a minimal first version: a colleague extends it). It draws the
 * `tree` trait with the shared `SessionView`. Built by `npm run build:widget` with
 * esbuild into `jupyter_tree_chat/static/widget.js` (ESM, dependencies bundled).
 *
 * Markdown: until a sanitizing renderer is bundled here, text is shown as escaped plain
 * text (`plainTextHtml`), which is safe by construction.
 */

import css from '../../style/base.css';
import { SessionView, TreeData, fromTreeData, plainTextHtml } from '../render';

/** The synced traits this front end reads. */
interface Model {
  get(name: 'tree'): TreeData | null;
  get(name: 'title'): string | undefined;
  on(event: 'change:tree', callback: () => void): void;
  off(event: 'change:tree', callback: () => void): void;
}

function render({ model, el }: { model: Model; el: HTMLElement }): () => void {
  const style = document.createElement('style');
  style.textContent = css;
  el.append(style);
  el.classList.add('jtc-widget');
  const view = new SessionView(el, { renderMarkdown: plainTextHtml });
  const update = (): void => view.setSession(fromTreeData(model.get('tree')), model.get('title') ?? '');
  update();
  model.on('change:tree', update);
  return () => {
    model.off('change:tree', update);
    view.dispose();
    style.remove();
  };
}

export default { render };
