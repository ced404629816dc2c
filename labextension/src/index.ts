/**
 * The JupyterLab plugin: a `chat-session` file type for `*.chat.jsonl`, the read-only
 * session viewer as its default (so double-click, "Open With" and `/lab/tree/<file>`
 * all show it) and in "Open With" for `.jsonl` and `.json` files (Claude Code, pi,
 * ChatGPT and Open WebUI sessions, read by the server extension), a command-palette
 * entry to open a session file, the command that puts an answer's code into a new
 * notebook cell (notebook.ts), and the bridge that hands the widget bundle the lab's
 * translation and this extension's commands (bridge.ts), and the widget's own code, which
 * every panel and turn control on the page then uses instead of a copy of its own
 * (panel/registry.ts). Every label goes through the
 * `jupyter_tree_chat` translation domain.
 */

import { ILayoutRestorer, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette, WidgetTracker } from '@jupyterlab/apputils';
import { IDocumentManager } from '@jupyterlab/docmanager';
import { DocumentWidget } from '@jupyterlab/docregistry';
import { FileDialog } from '@jupyterlab/filebrowser';
import { INotebookTracker } from '@jupyterlab/notebook';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';
import { LabIcon } from '@jupyterlab/ui-components';

import { TRANSLATION_DOMAIN, installHost } from './bridge';
import { addInsertCodeCommand } from './notebook';
import widget from './panel/index';
import { registerWidget } from './panel/registry';
import { ChatSessionFactory, ChatSessionViewer, FACTORY, FILE_TYPE } from './viewer/viewer';

const SUFFIX = '.chat.jsonl';
const OPEN_COMMAND = 'jupyter-tree-chat:open';
const EXPORT_COMMAND = 'jupyter-tree-chat:export-html';

const chatSessionIcon = new LabIcon({
  name: 'jupyter-tree-chat:session',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">' +
    '<g class="jp-icon3" fill="#616161">' +
    '<circle cx="6" cy="5" r="2.5"/><circle cx="6" cy="19" r="2.5"/><circle cx="18" cy="12" r="2.5"/>' +
    '<path d="M5.2 7.3h1.6v9.4H5.2zM6.6 10.6c3.5 0 6.4.3 9 1.4l-.6 1.5c-2.4-1-5-1.3-8.4-1.3z"/>' +
    '</g></svg>'
});

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-tree-chat:viewer',
  description: 'Browse *.chat.jsonl branching chat sessions: tree, path, siblings, problems.',
  autoStart: true,
  requires: [IRenderMimeRegistry, IDocumentManager],
  optional: [ICommandPalette, ILayoutRestorer, ITranslator, INotebookTracker],
  activate: (
    app: JupyterFrontEndApp,
    rendermime: IRenderMimeRegistry,
    docManager: IDocumentManager,
    palette: ICommandPalette | null,
    restorer: ILayoutRestorer | null,
    translator: ITranslator | null,
    notebooks: INotebookTracker | null
  ) => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    if (notebooks) {
      addInsertCodeCommand(app, notebooks, trans);
    }
    installHost(trans, app.commands, () => (translator ?? nullTranslator).languageCode);
    registerWidget(widget); // the panels' and turn controls' code, once for the page
    app.docRegistry.addFileType({
      name: FILE_TYPE,
      displayName: trans.__('Chat session'),
      extensions: [SUFFIX],
      mimeTypes: ['application/x-chat-session+jsonl'],
      fileFormat: 'base64',
      contentType: 'file',
      icon: chatSessionIcon
    });
    const factory = new ChatSessionFactory(
      {
        name: FACTORY,
        label: trans.__('Chat Session Viewer'),
        fileTypes: [FILE_TYPE, 'jsonl', 'json'], // other tools' sessions: through "Open With"
        defaultFor: [FILE_TYPE],
        modelName: 'base64',
        readOnly: true
      },
      rendermime,
      app.serviceManager.contents,
      trans
    );
    app.docRegistry.addWidgetFactory(factory);

    const tracker = new WidgetTracker<DocumentWidget<ChatSessionViewer>>({
      namespace: 'jupyter-tree-chat'
    });
    factory.widgetCreated.connect((_, widget) => {
      widget.context.pathChanged.connect(() => void tracker.save(widget));
      void tracker.add(widget);
    });
    if (restorer) {
      void restorer.restore(tracker, {
        command: 'docmanager:open',
        args: widget => ({ path: widget.context.path, factory: FACTORY }),
        name: widget => widget.context.path
      });
    }

    app.commands.addCommand(OPEN_COMMAND, {
      label: args =>
        args.path ? trans.__('Open %1 as a Chat Session', String(args.path)) : trans.__('Open Chat Session File…'),
      caption: trans.__('Open a *.chat.jsonl session file in the read-only session viewer'),
      icon: chatSessionIcon,
      execute: async args => {
        let path = typeof args.path === 'string' ? args.path : '';
        if (!path) {
          const result = await FileDialog.getOpenFiles({
            manager: docManager,
            title: trans.__('Open a chat session (*.chat.jsonl)'),
            filter: model =>
              model.type === 'directory' || model.name.endsWith(SUFFIX) ? {} : null
          });
          const chosen = result.button.accept ? result.value ?? [] : [];
          for (const model of chosen) {
            if (model.type !== 'directory') {
              docManager.openOrReveal(model.path, FACTORY);
            }
          }
          return;
        }
        return docManager.openOrReveal(path, FACTORY);
      }
    });
    app.commands.addCommand(EXPORT_COMMAND, {
      label: trans.__('Export Chat Session as HTML'),
      caption: trans.__('Write the open session as one HTML page beside it: it opens in any browser, with no network'),
      isEnabled: () => tracker.currentWidget !== null,
      execute: () => tracker.currentWidget?.content.exportHtml()
    });
    if (palette) {
      palette.addItem({ command: OPEN_COMMAND, category: trans.__('Chat Sessions') });
      palette.addItem({ command: EXPORT_COMMAND, category: trans.__('Chat Sessions') });
    }
  }
};

type JupyterFrontEndApp = JupyterFrontEnd;

export default plugin;
