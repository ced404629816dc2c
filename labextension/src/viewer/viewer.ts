/**
 * The document widget for `*.chat.jsonl`: the components' `SessionView` without actions
 * (read-only), fed from the file's bytes (the base64 model, so a line that is not UTF-8
 * is reported as the command line does), Markdown through JupyterLab's parser and
 * sanitizer. It reloads when the file changes on disk: JupyterLab does not watch files,
 * so the viewer polls the file's modification time while it is open. Another tool's
 * session file (opened with "Open With") is read by the server (foreign.ts) and shown
 * the same way, its title saying which format was read.
 */

import { ABCWidgetFactory, DocumentRegistry, DocumentWidget } from '@jupyterlab/docregistry';
import { Notification } from '@jupyterlab/apputils';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { Contents } from '@jupyterlab/services';
import { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { Markdown } from '../components/markdown';
import { plainTextHtml } from '../components/safety';
import { SessionView } from '../components/sessionview';
import { Translation } from '../components/translate';
import { ChatSession, parseSession } from '../format/parse';
import { SESSION_SUFFIX, readForeign } from './foreign';
import { exportPage } from './share';
import { FileSource } from '../components/filesource';

export const FACTORY = 'Chat Session Viewer'; // not for translation: the factory's id (its label is translated)
export const FILE_TYPE = 'chat-session';
const POLL_MS = 2000;

/** Markdown → sanitized html through JupyterLab's markdown parser and sanitizer. */
export function markdownRenderer(rendermime: IRenderMimeRegistry): (text: string) => Promise<string> {
  return async (text: string) => {
    const parser = rendermime.markdownParser;
    const html = parser ? await parser.render(text) : plainTextHtml(text);
    return rendermime.sanitizer.sanitize(html);
  };
}

export function decodeBase64(content: string): Uint8Array {
  const binary = atob(content.replace(/\s+/g, ''));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) {
    bytes[i] = binary.charCodeAt(i);
  }
  return bytes;
}

export class ChatSessionViewer extends Widget {
  readonly view: SessionView;
  private readonly source: FileSource;
  private timer: number | undefined;
  private lastModified: string | undefined;
  private checking = false;
  private reads = 0;

  constructor(
    private readonly context: DocumentRegistry.Context,
    rendermime: IRenderMimeRegistry,
    private readonly contents: Contents.IManager,
    private readonly trans: Translation
  ) {
    super();
    this.addClass('jtc-viewer');
    this.source = new FileSource(trans);
    this.view = new SessionView(this.node, this.source, {
      trans,
      markdown: new Markdown(markdownRenderer(rendermime), trans),
      fallbackTitle: trans.__('Chat session'),
      emptyText: trans.__('No messages in this file.'),
      code: {}, // Copy; a file has no notebook cell to insert below
      finder: this.source,
      exportHtml: () => void this.exportHtml()
    });
    context.model.contentChanged.connect(this.reload, this);
    context.pathChanged.connect(this.reload, this);
    void context.ready.then(() => {
      this.lastModified = context.contentsModel?.last_modified;
      this.reload();
      this.timer = window.setInterval(() => void this.checkDisk(), POLL_MS);
    });
  }

  /** The parsed file as shown now (for tests and other plugins). */
  get session(): ChatSession {
    return this.source.parsed;
  }

  /** Write this file as one HTML page beside it (the server builds it); says where. */
  async exportHtml(): Promise<string | null> {
    try {
      const written = await exportPage(this.context.path);
      this.node.dataset.jtcExported = written.path;
      Notification.success(this.trans.__('Wrote %1: the session as one page that opens anywhere, with no network', written.path), {
        autoClose: 8000
      });
      return written.path;
    } catch (error) {
      Notification.error(this.trans.__('Could not export %1 as HTML: %2', this.context.path, error instanceof Error ? error.message : String(error)));
      return null;
    }
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    window.clearInterval(this.timer);
    this.context.model.contentChanged.disconnect(this.reload, this);
    this.context.pathChanged.disconnect(this.reload, this);
    this.view.dispose();
    super.dispose();
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    void this.checkDisk();
  }

  private reload(): void {
    if (this.isDisposed || !this.context.isReady) {
      return;
    }
    let bytes: Uint8Array;
    try {
      bytes = decodeBase64(this.context.model.toString());
    } catch {
      bytes = new TextEncoder().encode(this.context.model.toString());
    }
    const name = this.context.path.split('/').pop() ?? this.context.path;
    const read = ++this.reads;
    if (name.endsWith(SESSION_SUFFIX)) {
      this.present(parseSession(bytes), name, 'tree-chat');
      return;
    }
    void readForeign(this.context.path).then(
      foreign => {
        if (read !== this.reads || this.isDisposed) {
          return; // a newer read is on its way
        }
        if (foreign) {
          this.present(foreign.session, this.trans.__('%1 (read as a %2 session)', name, foreign.label), foreign.format);
        } else {
          this.present(parseSession(bytes), name, 'tree-chat');
        }
      },
      (error: unknown) => {
        if (read !== this.reads || this.isDisposed) {
          return;
        }
        const session = parseSession(bytes);
        session.problems.unshift({
          line: 0,
          where: this.trans.__('the server'),
          message: this.trans.__(
            'could not read this file as another tool\'s session (%1); is the jupyter_tree_chat.server extension enabled?',
            String(error)
          )
        });
        this.present(session, name, 'tree-chat');
      }
    );
  }

  private present(session: ChatSession, title: string, format: string): void {
    this.source.load(session, title);
    this.node.dataset.jtcNodes = String(session.nodes.size);
    this.node.dataset.jtcFormat = format;
  }

  /** Revert to the file on disk when its modification time moved. */
  private async checkDisk(): Promise<void> {
    if (this.checking || this.isDisposed || !this.isVisible || !this.context.isReady) {
      return;
    }
    this.checking = true;
    try {
      const model = await this.contents.get(this.context.path, { content: false });
      if (model.last_modified !== this.lastModified) {
        this.lastModified = model.last_modified;
        await this.context.revert();
      }
    } catch {
      // the file is gone or the server is away: keep showing what we have
    } finally {
      this.checking = false;
    }
  }
}

export class ChatSessionFactory extends ABCWidgetFactory<DocumentWidget<ChatSessionViewer>> {
  constructor(
    options: DocumentRegistry.IWidgetFactoryOptions,
    private readonly rendermime: IRenderMimeRegistry,
    private readonly contents: Contents.IManager,
    private readonly trans: Translation
  ) {
    super(options);
  }

  protected createNewWidget(context: DocumentRegistry.Context): DocumentWidget<ChatSessionViewer> {
    const content = new ChatSessionViewer(context, this.rendermime, this.contents, this.trans);
    const widget = new DocumentWidget({ content, context });
    widget.addClass('jtc-document');
    return widget;
  }
}
