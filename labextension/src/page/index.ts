/**
 * An exported page's script (jupyter_tree_chat/share/page.py inlines it, built by
 * `npm run build:page` into jupyter_tree_chat/share/static/page.js): the viewer's
 * components, read-only, over the session the page holds as data.
 *
 * The records sit in `<script type="application/x-ndjson" id="jtc-records">` as the
 * lines of a session file; they are read with the viewer's file reader (format/parse.ts)
 * into the viewer's source (components/filesource.ts), and every message is rendered
 * through the panel's sanitizer (marked without raw HTML, then DOMPurify), then the
 * components' remote-content guard. Nothing is fetched: the page's CSP allows no load.
 */

import { FileSource } from '../components/filesource';
import { h } from '../components/dom';
import { Markdown } from '../components/markdown';
import { SessionView } from '../components/sessionview';
import { Catalog, english, fromCatalog } from '../components/translate';
import { Problem, parseSession } from '../format/parse';
import { sanitizedMarkdown } from '../sanitize/markdown';

/** What page.py writes beside the records (`jtc-page-data`). */
interface PageData {
  title: string;
  leaf: string | null;
  problems: Problem[];
  /** the page holds only the branch through this node */
  branch: string | null;
  generator: string;
  note: string;
  /** the front end's catalog for the page's language (none in English) */
  catalog?: Catalog;
}

function textOf(id: string): string {
  return document.getElementById(id)?.textContent ?? '';
}

function start(): void {
  const host = document.getElementById('jtc-page');
  if (!host) {
    return;
  }
  const data = JSON.parse(textOf('jtc-page-data') || '{}') as PageData;
  const trans = data.catalog ? fromCatalog(data.catalog) : english;
  const started = performance.now();
  const session = parseSession(textOf('jtc-records'), { written: true });
  session.problems = Array.isArray(data.problems) ? data.problems : [];
  if (typeof data.leaf === 'string' && session.nodes.has(data.leaf)) {
    session.leaf = data.leaf;
  }
  const source = new FileSource(trans);
  host.append(
    h(
      'p',
      { class: 'jtc-page-note' },
      data.note ?? '',
      data.branch ? ' ' + trans.__('Only the branch through %1 is in this page.', data.branch) : '',
      data.generator ? h('span', { class: 'jtc-page-generator' }, ` · ${data.generator}`) : null
    )
  );
  const view = new SessionView(host, source, {
    trans,
    markdown: new Markdown(sanitizedMarkdown, trans),
    fallbackTitle: trans.__('Chat session'),
    emptyText: trans.__('No messages in this file.'),
    code: {},
    finder: source
  });
  source.load(session, data.title ?? '');
  view.node.classList.add('jtc-page-view');
  host.dataset.jtcNodes = String(session.nodes.size);
  host.dataset.jtcReadyMs = (performance.now() - started).toFixed(1);
}

start();
