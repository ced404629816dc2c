/**
 * A Markdown text as plain words, for one-line summaries: the tree rows of a file opened
 * in JupyterLab and of an exported page (`I was sent **1 message**` shows as `I was sent
 * 1 message`). The same rules as the kernel's (jupyter_tree_chat/history/plain.py), which
 * writes the panel's rows and `%chat tree`, so every view shows a reply's first line alike.
 */

const W = '\\p{L}\\p{N}_';
const CODE_SPAN = /(`+)(.+?)\1/gsu;
const FENCE = /^[ \t]*(?:```+|~~~+)[^\n]*$/gmu;
const LINE_MARKERS = /^[ \t]{0,3}(?:#{1,6}[ \t]+|>[ \t]?|(?:[-*+]|\d{1,9}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?)/gmu;
const RULE = /^[ \t]{0,3}(?:[-*_][ \t]*){3,}$/gmu;
const HEADING_CLOSE = /[ \t]+#+[ \t]*$/gmu;
const IMAGE_OR_LINK = /(?:\[|!\[)([^\]\n]*)\](?:\([^)\n]*\)|\[[^\]\n]*\])/gu;
const AUTOLINK = /<((?:https?|mailto|ftp):[^>\s]+)>/gu;
const EMPHASIS: [string, RegExp][] = [
  ['*', new RegExp(`\\*\\*(?<![${W}*]\\*\\*)(?=\\S)(.+?)(?<=\\S)\\*\\*(?![${W}*])`, 'gsu')],
  ['_', new RegExp(`__(?<![${W}]__)(?=\\S)(.+?)(?<=\\S)__(?![${W}])`, 'gsu')],
  ['*', new RegExp(`\\*(?<![${W}*]\\*)(?=[^\\s*])(.+?)(?<=[^\\s*])\\*(?![${W}*])`, 'gsu')],
  ['_', new RegExp(`_(?<![${W}]_)(?=[^\\s_])(.+?)(?<=[^\\s_])_(?![${W}])`, 'gsu')],
  ['~', /~~(?=\S)(.+?)(?<=\S)~~/gsu]
];
const ESCAPE = /\\([\\`*_{}[\]()#+\-.!|~<>])/gu;
const MARKUP = /[`~\\#[<*_\0]|^[ \t]*(?:[>+=-]|\d{1,9}[.)])/mu;

/** The words of a Markdown text without its syntax (see plain.py's `plain_text`). */
export function plainMarkdown(markdown: string): string {
  if (!MARKUP.test(markdown)) {
    return markdown;
  }
  const codes: string[] = [];
  const keep = (kept: string): string => {
    codes.push(kept);
    return `\0${codes.length - 1}\0`;
  };
  let text = markdown.replace(/\0/g, '');
  if (text.includes('`') || text.includes('~')) {
    text = text.replace(FENCE, '');
    text = text.replace(CODE_SPAN, (_m, _ticks: string, inner: string) => keep(inner.trim() || inner));
  }
  if (text.includes('\\')) {
    text = text.replace(ESCAPE, (_m, escaped: string) => keep(escaped));
  }
  text = text.replace(RULE, '').replace(LINE_MARKERS, '');
  if (text.includes('#')) {
    text = text.replace(HEADING_CLOSE, '');
  }
  if (text.includes('[')) {
    text = text.replace(IMAGE_OR_LINK, '$1');
  }
  if (text.includes('<')) {
    text = text.replace(AUTOLINK, '$1');
  }
  for (let round = 0; round < 2; round++) {
    const before = text;
    for (const [mark, pattern] of EMPHASIS) {
      if (text.includes(mark)) {
        text = text.replace(pattern, (_m, inner: string) => inner);
      }
    }
    if (text === before) {
      break;
    }
  }
  return codes.length ? text.replace(/\0(\d+)\0/g, (_m, k: string) => codes[Number(k)]) : text;
}
