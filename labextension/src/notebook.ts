/**
 * The lab command that puts code from a chat answer into the notebook: a new code cell
 * below the cell that asked. The widget's "Insert below" buttons (a `%%chat` turn's
 * control, the panel) run it through the bridge (bridge.ts, `INSERT_CODE_COMMAND`); it
 * works wherever JupyterLab's notebook tracker is, so in JupyterLab and in Notebook 7.
 *
 * Which cell: the one whose id the answer's question recorded (`cellId`), else the one
 * holding the clicked element (`near`: a turn control sits in the cell that asked),
 * else the active cell. Which notebook: the one holding `near`, else the current one.
 */

import { JupyterFrontEnd } from '@jupyterlab/application';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

import { INSERT_CODE_COMMAND } from './bridge';
import { Translation } from './components/translate';

export function addInsertCodeCommand(app: JupyterFrontEnd, tracker: INotebookTracker, trans: Translation): void {
  app.commands.addCommand(INSERT_CODE_COMMAND, {
    label: trans.__('Insert Code Below'),
    caption: trans.__('Put code from a chat answer into a new cell below the cell that asked'),
    execute: args => insertCode(tracker, args as Record<string, unknown>)
  });
}

/** Insert the cell; says whether there was a notebook to insert it into. */
export function insertCode(tracker: INotebookTracker, args: Record<string, unknown>): boolean {
  const code = typeof args.code === 'string' ? args.code : '';
  const cellId = typeof args.cellId === 'string' ? args.cellId : '';
  const near = args.near instanceof Node ? args.near : null;
  const panel: NotebookPanel | null =
    (near ? tracker.find(candidate => candidate.node.contains(near)) : undefined) ?? tracker.currentWidget;
  if (!panel?.model) {
    return false;
  }
  const notebook = panel.content;
  const cells = notebook.widgets;
  let at = cellId ? cells.findIndex(cell => cell.model.id === cellId) : -1;
  if (at < 0 && near) {
    at = cells.findIndex(cell => cell.node.contains(near));
  }
  if (at < 0) {
    at = notebook.activeCellIndex;
  }
  panel.model.sharedModel.insertCell(at + 1, { cell_type: 'code', source: code, metadata: {} });
  notebook.activeCellIndex = at + 1;
  const inserted = notebook.widgets[at + 1];
  if (inserted) {
    void notebook.scrollToCell(inserted);
  }
  return true;
}
