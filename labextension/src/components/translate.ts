/**
 * How the components say anything: every user-visible string goes through a
 * `Translation`, the part of JupyterLab's `TranslationBundle` they use (`__`, `_n`, `_p`,
 * with `%1`, `%2` ... placeholders; `_n` passes the count as `%1`). In JupyterLab it is
 * `translator.load('jupyter_tree_chat')`, which uses the package's catalog for the lab's
 * language (jupyter_tree_chat/locale/, see scripts/catalog.py); on an exported page it is
 * `fromCatalog` over the catalog the page carries, or `english`, which returns the English
 * text itself. The msgids must be
 * literals: scripts/catalog.py reads them from the source.
 */

export interface Translation {
  /** `gettext`: the translation of `msgid`, `%1`... filled from `args`. */
  __(msgid: string, ...args: unknown[]): string;
  /** `ngettext`: singular or plural by `n`, which is also `%1`. */
  _n(msgid: string, msgidPlural: string, n: number, ...args: unknown[]): string;
  /** `pgettext`: `msgid` in a context, for short words that mean several things. */
  _p(msgctxt: string, msgid: string, ...args: unknown[]): string;
}

/**
 * `%1`, `%2` ... replaced by the arguments and `%%` read as `%`, as JupyterLab's Gettext
 * does (in one pass, so an argument is never read as a template itself).
 */
export function fill(template: string, args: readonly unknown[]): string {
  return template.replace(/%%|%(\d+)/g, (match, n: string | undefined) => {
    if (n === undefined) {
      return '%';
    }
    return Number(n) >= 1 && Number(n) <= args.length ? String(args[Number(n) - 1]) : match;
  });
}

/** The identity bundle: English as written, placeholders filled. */
export const english: Translation = {
  __: (msgid, ...args) => fill(msgid, args),
  _n: (msgid, msgidPlural, n, ...args) => fill(n === 1 ? msgid : msgidPlural, [n, ...args]),
  _p: (_msgctxt, msgid, ...args) => fill(msgid, args)
};

/** A catalog as JupyterLab's language packs hold it (jupyter_tree_chat/locale/…/*.json):
 * `msgid` (or `context\u0004msgid`) → its forms; `""` → the header. */
export type Catalog = Record<string, unknown>;

/**
 * A `Translation` from a catalog, where there is no JupyterLab to load one: an exported
 * page carries its language's catalog. A message the catalog lacks stays English.
 */
export function fromCatalog(catalog: Catalog): Translation {
  const header = (catalog[''] ?? {}) as { plural_forms?: unknown };
  const oneForm = /nplurals\s*=\s*1\b/.test(String(header.plural_forms ?? ''));
  const forms = (key: string): string[] => {
    const found = catalog[key];
    return Array.isArray(found) ? found.map(String) : [];
  };
  const single = (key: string, msgid: string): string => forms(key)[0] || msgid;
  return {
    __: (msgid, ...args) => fill(single(msgid, msgid), args),
    _n: (msgid, msgidPlural, n, ...args) => {
      const form = forms(msgid)[oneForm || n === 1 ? 0 : 1];
      return fill(form || (n === 1 ? msgid : msgidPlural), [n, ...args]);
    },
    _p: (msgctxt, msgid, ...args) => fill(single(`${msgctxt}\u0004${msgid}`, msgid), args)
  };
}

/**
 * A `Translation` whose words can change language while a view shows them: JupyterLab's
 * by default, or the language the user set outright in the kernel (`%chat language
 * zh_CN`), which the kernel sends with its catalog (panel/store.ts, message `lang`).
 */
export class SwitchableTranslation implements Translation {
  readonly __: Translation['__'];
  readonly _n: Translation['_n'];
  readonly _p: Translation['_p'];

  constructor(private current: Translation) {
    // each call goes to the translation in use now (no message of its own: the callers' are)
    const through = <K extends keyof Translation>(key: K): Translation[K] =>
      ((...args: unknown[]) => (this.current[key] as (...a: unknown[]) => string).apply(this.current, args)) as Translation[K];
    this.__ = through('__');
    this._n = through('_n');
    this._p = through('_p');
  }

  use(translation: Translation): void {
    this.current = translation;
  }
}
