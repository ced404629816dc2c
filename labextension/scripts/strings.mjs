// The front end's words, found with the TypeScript parser itself.
//
// Prints one JSON object: `messages`, every string given to the translator
// (`x.__(msgid, ...)`, `x._n(singular, plural, n, ...)`, `x._p(context, msgid, ...)`) with
// its file and line, for the catalog; `bare`, every string literal that a person would
// read but that does not go through the translator; `dynamic`, translator calls whose
// text is not a literal (a catalog cannot hold them). scripts/catalog.py reads this;
// tests/test_catalog.py fails on any `bare` or `dynamic` entry.
//
// A literal is one a person reads when it is
// - shown by where it goes: a child of `h(tag, attrs, ...children)`, the label of
//   `button(label, ...)`, the value of a `title`, `label`, `caption`, `placeholder`,
//   `alt`, `aria-label`, `aria-description`, `aria-roledescription` or `textContent`
//   property, assigned to `.textContent`, `.title`, `.placeholder`, `.innerText`,
//   the second argument of `setAttribute` with one of those names; with any letter in it;
// - or, anywhere else, written like words: two words, or a capital then lower-case
//   letter, or ending in `.`, `…`, `?` or `!` (markup, starting with `<`, is not words);
// and it is not in a place only code reads: a module name, an object key, a type, a
// comparison or `case`, a message for developers (`console.*`, `new Error(...)`), a CSS
// selector, an event, attribute or element name, a `class`/`style`/`id`/`role` value.
// A line ending in `// not for translation: REASON` is left alone, and so is a file with a
// line `// not for translation in this file: REASON` (its translator calls still count).
//
// Usage: node labextension/scripts/strings.mjs [SOURCE_DIR]   (default: labextension/src)

import { createRequire } from 'node:module';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const ts = createRequire(join(here, '..', 'package.json'))('typescript');

const TRANSLATORS = new Set(['__', '_n', '_p']);
const SHOWN_PROPERTIES = new Set([
  'title', 'label', 'caption', 'placeholder', 'alt', 'textContent', 'innerText',
  'aria-label', 'aria-description', 'aria-roledescription', 'aria-valuetext'
]);
const SHOWN_ASSIGNMENTS = new Set(['textContent', 'title', 'placeholder', 'innerText', 'label']);
const SHOWN_CALLS = new Map([['h', 2], ['button', 0]]); // function name → first shown argument
const CODE_CALLS = new Set([
  'querySelector', 'querySelectorAll', 'closest', 'matches', 'addEventListener',
  'removeEventListener', 'getAttribute', 'removeAttribute', 'hasAttribute', 'toggleAttribute',
  'createElement', 'createElementNS', 'createTextNode', 'getElementById', 'add', 'remove', 'toggle',
  'contains', 'for', 'getPropertyValue', 'setProperty', 'get', 'set', 'on', 'off', 'send',
  'hasCommand', 'execute', 'startsWith', 'endsWith', 'includes', 'split', 'join', 'replace',
  'indexOf', 'padStart', 'padEnd', 'toLocaleString', 'toFixed', 'localeCompare', 'dispatchEvent',
  'postMessage', 'load', 'require', 'import'
]);
const DEVELOPER_OBJECTS = new Set(['console']);
const ERRORS = /Error$/; // new Error(...), new JSONSyntaxError(...): messages for developers
const OPT_OUT = /\/\/\s*not for translation:\s*\S/;
const FILE_OPT_OUT = /^\/\/\s*not for translation in this file:\s*\S/m;

function sourceFiles(dir) {
  const found = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      found.push(...sourceFiles(path));
    } else if (/\.tsx?$/.test(name) && !name.endsWith('.d.ts')) {
      found.push(path);
    }
  }
  return found;
}

function calleeName(call) {
  const callee = call.expression;
  if (ts.isIdentifier(callee)) return callee.text;
  if (ts.isPropertyAccessExpression(callee)) return callee.name.text;
  return '';
}

function literalText(node) {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  return null;
}

function readsAsWords(text) {
  if (/^\s*</.test(text)) return false; // markup built for a sanitizer, not words
  return (
    /\p{L}/u.test(text) &&
    (/\p{L}[\p{L}'’,]*\s+[(\p{L}]/u.test(text) || /^\p{Lu}\p{Ll}/u.test(text) || /\p{L}\s*[.…?!]$/u.test(text))
  );
}

/** Where a literal ends up: climb through ?:, +, ??, ||, &&, ( ) and template spans. */
function sink(node) {
  let child = node;
  let parent = node.parent;
  while (
    parent &&
    (ts.isConditionalExpression(parent) && parent.condition !== child ||
      ts.isParenthesizedExpression(parent) ||
      ts.isTemplateSpan(parent) ||
      ts.isTemplateExpression(parent) ||
      ts.isAsExpression(parent) ||
      ts.isArrayLiteralExpression(parent) ||
      ts.isBinaryExpression(parent) &&
        [ts.SyntaxKind.PlusToken, ts.SyntaxKind.QuestionQuestionToken, ts.SyntaxKind.BarBarToken,
          ts.SyntaxKind.AmpersandAmpersandToken].includes(parent.operatorToken.kind) &&
        !(parent.operatorToken.kind === ts.SyntaxKind.AmpersandAmpersandToken && parent.left === child))
  ) {
    child = parent;
    parent = parent.parent;
  }
  return { child, parent };
}

/** 'shown', 'code' or 'other' for a literal, by the place its value goes. */
function place(node) {
  const { child, parent } = sink(node);
  if (!parent) return 'other';
  if (ts.isImportDeclaration(parent) || ts.isExportDeclaration(parent) || ts.isExternalModuleReference(parent)) {
    return 'code';
  }
  if (ts.isLiteralTypeNode(parent) || ts.isTypeNode(parent)) return 'code';
  if (ts.isPropertyAssignment(parent)) {
    if (parent.name === child) return 'code';
    const key = ts.isIdentifier(parent.name) || ts.isStringLiteral(parent.name) ? parent.name.text : '';
    return SHOWN_PROPERTIES.has(key) ? 'shown' : 'code';
  }
  if (ts.isPropertyDeclaration(parent) || ts.isEnumMember(parent)) {
    return parent.name === child ? 'code' : 'other';
  }
  if (ts.isElementAccessExpression(parent) || ts.isComputedPropertyName(parent)) return 'code';
  if (ts.isCaseClause(parent)) return 'code';
  if (ts.isBinaryExpression(parent)) {
    const op = parent.operatorToken.kind;
    if (op === ts.SyntaxKind.EqualsToken && ts.isPropertyAccessExpression(parent.left) && parent.right === child) {
      return SHOWN_ASSIGNMENTS.has(parent.left.name.text) ? 'shown' : 'code';
    }
    return 'code'; // comparisons, `in`, instanceof
  }
  if (ts.isNewExpression(parent) && ts.isIdentifier(parent.expression) && ERRORS.test(parent.expression.text)) {
    return 'code';
  }
  if (ts.isCallExpression(parent)) {
    const name = calleeName(parent);
    const index = parent.arguments.indexOf(child);
    const callee = parent.expression;
    if (ts.isPropertyAccessExpression(callee) && ts.isIdentifier(callee.expression) &&
        DEVELOPER_OBJECTS.has(callee.expression.text)) {
      return 'code';
    }
    if (name === 'setAttribute') {
      const attribute = literalText(parent.arguments[0]) ?? '';
      return index === 1 && SHOWN_PROPERTIES.has(attribute) ? 'shown' : 'code';
    }
    if (SHOWN_CALLS.has(name)) {
      return index >= SHOWN_CALLS.get(name) ? 'shown' : 'code';
    }
    if (CODE_CALLS.has(name) || ts.isImportCall?.(parent)) return 'code';
  }
  return 'other';
}

export function scan(dir) {
  const messages = [];
  const bare = [];
  const dynamic = [];
  for (const path of sourceFiles(dir)) {
    const text = readFileSync(path, 'utf8');
    const lines = text.split('\n');
    const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
    const name = relative(dir, path);
    const translated = new Set();
    const wholeFileOptedOut = FILE_OPT_OUT.test(text);
    const lineOf = node => file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;

    const visit = node => {
      if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) &&
          TRANSLATORS.has(node.expression.name.text) && node.arguments.length > 0) {
        const kind = node.expression.name.text;
        const count = kind === '__' ? 1 : 2;
        const texts = node.arguments.slice(0, count).map(literalText);
        node.arguments.slice(0, count).forEach(arg => translated.add(arg));
        if (texts.length < count || texts.some(t => t === null)) {
          dynamic.push({ file: name, line: lineOf(node), call: node.getText(file).slice(0, 120) });
        } else if (kind === '__') {
          messages.push({ context: null, msgid: texts[0], plural: null, file: name, line: lineOf(node) });
        } else if (kind === '_n') {
          messages.push({ context: null, msgid: texts[0], plural: texts[1], file: name, line: lineOf(node) });
        } else {
          messages.push({ context: texts[0], msgid: texts[1], plural: null, file: name, line: lineOf(node) });
        }
      }
      const value = literalText(node);
      const pieces = value !== null ? [value]
        : ts.isTemplateExpression(node) ? [node.head.text, ...node.templateSpans.map(s => s.literal.text)]
        : null;
      if (pieces && !translated.has(node) && !wholeFileOptedOut && !OPT_OUT.test(lines[lineOf(node) - 1] ?? '')) {
        const where = place(node);
        const shown = pieces.join(' ');
        if (where === 'shown' ? /\p{L}/u.test(shown) : where === 'other' && readsAsWords(shown)) {
          bare.push({ file: name, line: lineOf(node), text: node.getText(file).slice(0, 120) });
        }
      }
      if (!(ts.isTemplateExpression(node))) {
        ts.forEachChild(node, visit);
      } else {
        node.templateSpans.forEach(span => visit(span.expression));
      }
    };
    visit(file);
  }
  return { messages, bare, dynamic };
}

if (resolve(process.argv[1] ?? '') === fileURLToPath(import.meta.url)) {
  const dir = resolve(process.argv[2] ?? join(here, '..', 'src'));
  process.stdout.write(JSON.stringify(scan(dir), null, 1) + '\n');
}
