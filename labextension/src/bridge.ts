/**
 * The one bridge from the JupyterLab extension to the widget bundle.
 *
 * The widget's front end (panel/) is an ES module that anywidget loads into the notebook
 * page on its own: it cannot import JupyterLab's tokens (`ITranslator`, the command
 * registry), and anywidget hands it only its model and element. So the lab extension,
 * when it activates, puts one small object on `globalThis` under the registered symbol
 * `Symbol.for('jupyter-tree-chat:host')` (a key no other code can clash with by
 * accident; both bundles get the same symbol from the registry). The widget reads it
 * when it renders:
 *
 * - `trans`: the lab's `TranslationBundle` for the `jupyter_tree_chat` domain, so the
 *   widget speaks the language JupyterLab is set to, with the viewer's catalog.
 * - `languageCode()`: that language's code (`translator.languageCode`: `zh-CN`, `en`),
 *   which each view sends its kernel when it renders, so the kernel's own texts (footers,
 *   notices, `%chat` output) follow it too. JupyterLab changes its language by reloading
 *   the page, and the views render again then and say the new one.
 * - `hasCommand` / `execute`: run one of this extension's own lab commands (ids that
 *   start with `jupyter-tree-chat:`; others are refused), for widget buttons that act
 *   on the notebook (issue 13's "Insert code below").
 *
 * Without the bridge (a page without the lab extension, JupyterLab without it
 * installed, the tests' bare page) `findHost()` is `null` and the widget speaks English
 * (`english`) and offers no lab command.
 */

import { CodeActions } from './components/code';
import { Translation, english } from './components/translate';

export const HOST_KEY: symbol = Symbol.for('jupyter-tree-chat:host');
/** The gettext domain of this project's catalogs (the Python package's name). */
export const TRANSLATION_DOMAIN = 'jupyter_tree_chat';
/** The bridge runs only the lab commands whose id starts with this. */
export const COMMAND_PREFIX = 'jupyter-tree-chat:';
/**
 * The lab command that puts code into a new cell (notebook.ts): args `code`, `cellId`
 * (the cell that asked, if known) and `near` (an element inside the notebook).
 */
export const INSERT_CODE_COMMAND = 'jupyter-tree-chat:insert-code';

export interface TreeChatHost {
  /** the shape's version: a widget checks it before using anything else */
  readonly version: 1;
  readonly trans: Translation;
  /** the code of the language JupyterLab shows (`zh-CN`, `en`) */
  languageCode(): string;
  /** whether the lab has this command (one of this extension's) */
  hasCommand(id: string): boolean;
  /** run this extension's lab command `id`; rejects for any other id */
  execute(id: string, args?: Record<string, unknown>): Promise<unknown>;
}

/** The part of Lumino's `CommandRegistry` the bridge uses. */
export interface CommandRunner {
  hasCommand(id: string): boolean;
  execute(id: string, args?: Record<string, unknown>): Promise<unknown>;
}

function ours(id: string): boolean {
  return typeof id === 'string' && id.startsWith(COMMAND_PREFIX);
}

/** Put the bridge on the page (the lab extension, once, when it activates). */
export function installHost(
  trans: Translation,
  commands: CommandRunner,
  languageCode: () => string = () => 'en'
): TreeChatHost {
  const host: TreeChatHost = Object.freeze({
    version: 1 as const,
    trans,
    languageCode,
    hasCommand: (id: string) => ours(id) && commands.hasCommand(id),
    execute: (id: string, args: Record<string, unknown> = {}) =>
      ours(id)
        ? commands.execute(id, args)
        : Promise.reject(new Error(`jupyter-tree-chat: ${String(id)} is not one of this extension's commands`))
  });
  Object.defineProperty(globalThis, HOST_KEY, { value: host, configurable: true, enumerable: false, writable: false });
  return host;
}

/** The bridge, if the lab extension installed one of a shape this bundle knows. */
export function findHost(): TreeChatHost | null {
  const host = (globalThis as unknown as Record<symbol, Partial<TreeChatHost> | undefined>)[HOST_KEY];
  if (
    !host ||
    host.version !== 1 ||
    typeof host.trans?.__ !== 'function' ||
    typeof host.trans._n !== 'function' ||
    typeof host.trans._p !== 'function'
  ) {
    return null;
  }
  return host as TreeChatHost;
}

/** "Insert below" for the widget's code blocks, when the lab has the command; else absent. */
export function insertCodeBelow(cellOf: (answer: string) => string | undefined): CodeActions['insert'] {
  const host = findHost();
  if (!host?.hasCommand(INSERT_CODE_COMMAND)) {
    return undefined;
  }
  return (code, answer, near) => {
    void host.execute(INSERT_CODE_COMMAND, { code, cellId: cellOf(answer) ?? '', near });
  };
}

/**
 * Put the cells the notebook server's `insert` proposed (a `%%chat` turn's control carries
 * them) below the cell that asked, with the same command "Insert below" runs, one cell per
 * proposal in the order proposed. Says whether the lab could; without the bridge the
 * kernel used IPython's next input instead (it asks `canInsertBelow` first).
 */
export function insertProposedCells(codes: string[], cellId: string, near: HTMLElement): boolean {
  const host = findHost();
  if (!host?.hasCommand(INSERT_CODE_COMMAND)) {
    return false;
  }
  // each new cell goes right under the asking cell: the last proposal first keeps the order
  void [...codes].reverse().reduce<Promise<unknown>>(
    (previous, code) => previous.then(() => host.execute(INSERT_CODE_COMMAND, { code, cellId, near })),
    Promise.resolve()
  );
  return true;
}

/** Whether the page has the lab's Insert below (told to the kernel as a view renders). */
export function canInsertBelow(): boolean {
  return findHost()?.hasCommand(INSERT_CODE_COMMAND) ?? false;
}

/** The code of the lab's language when the bridge is there (`zh-CN`), else `null`. */
export function hostLanguage(): string | null {
  const host = findHost();
  const code = typeof host?.languageCode === 'function' ? host.languageCode() : null;
  return typeof code === 'string' && code ? code : null;
}

/** The lab's translation when the bridge is there, else English. */
export function hostTranslation(): Translation {
  return findHost()?.trans ?? english;
}
