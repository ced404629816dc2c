/**
 * A strict JSON parser that accepts exactly what orjson (the Python loader's parser)
 * accepts, so a line the command line's `check` calls "not valid JSON" is not valid here
 * either: no lone surrogate escapes, no number that overflows a double, at most 1024
 * nested containers. `JSON.parse` differs on the first two. A lenient mode mirrors the
 * store's second try with Python's `json` for lines with lone surrogate escapes.
 *
 * Two output modes: plain JavaScript values (objects get own properties, even `__proto__`),
 * or tagged values (`pyrepr.ts`) keeping what Python sees, for problem messages.
 */

import { PyDict, PyFloat, PyInt, PyValue } from './pyrepr';

const MAX_DEPTH = 1024;
const INT_MIN = -(2n ** 63n);
const UINT_MAX = 2n ** 64n - 1n;

class JSONSyntaxError extends Error {}

type Plain = null | boolean | number | string | Plain[] | { [key: string]: Plain };

class Parser {
  private pos = 0;
  private depth = 0;
  /** lone surrogate escapes met (lenient mode replaces them with U+FFFD) */
  loneSurrogates = 0;

  /**
   * `lenient` reads like Python's `json` module, the store's second try on a line orjson
   * refused: lone surrogate escapes, integers of any size, floats that overflow to inf.
   */
  constructor(
    private readonly text: string,
    private readonly tagged: boolean,
    private readonly lenient = false
  ) {}

  parseDocument(): unknown {
    this.skipSpace();
    const value = this.value();
    this.skipSpace();
    if (this.pos !== this.text.length) {
      this.fail();
    }
    return value;
  }

  private fail(): never {
    throw new JSONSyntaxError(`invalid JSON at character ${this.pos}`);
  }

  private skipSpace(): void {
    const text = this.text;
    while (this.pos < text.length) {
      const c = text.charCodeAt(this.pos);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) {
        this.pos++;
      } else {
        break;
      }
    }
  }

  private value(): unknown {
    const c = this.text[this.pos];
    switch (c) {
      case '{':
        return this.object();
      case '[':
        return this.array();
      case '"':
        return this.string();
      case 't':
        return this.literal('true', true);
      case 'f':
        return this.literal('false', false);
      case 'n':
        return this.literal('null', null);
      default:
        if (c === '-' || (c >= '0' && c <= '9')) {
          return this.number();
        }
        return this.fail();
    }
  }

  private literal(word: string, value: boolean | null): boolean | null {
    if (this.text.startsWith(word, this.pos)) {
      this.pos += word.length;
      return value;
    }
    return this.fail();
  }

  private enter(): void {
    if (++this.depth > MAX_DEPTH) {
      this.fail();
    }
    this.pos++;
    this.skipSpace();
  }

  private array(): unknown[] {
    this.enter();
    const items: unknown[] = [];
    if (this.text[this.pos] === ']') {
      this.pos++;
      this.depth--;
      return items;
    }
    for (;;) {
      items.push(this.value());
      if (this.endsWith(']')) {
        break;
      }
    }
    this.depth--;
    return items;
  }

  /** After an item: `close` ends the container (true), a comma means another item. */
  private endsWith(close: string): boolean {
    this.skipSpace();
    const c = this.text[this.pos++];
    if (c === close) {
      return true;
    }
    if (c !== ',') {
      this.pos--;
      this.fail();
    }
    this.skipSpace();
    return false;
  }

  private object(): unknown {
    this.enter();
    const plain: Record<string, unknown> = {};
    const dict = new PyDict();
    if (this.text[this.pos] === '}') {
      this.pos++;
      this.depth--;
      return this.tagged ? dict : plain;
    }
    for (;;) {
      if (this.text[this.pos] !== '"') {
        this.fail();
      }
      const key = this.string();
      this.skipSpace();
      if (this.text[this.pos] !== ':') {
        this.fail();
      }
      this.pos++;
      this.skipSpace();
      const item = this.value();
      if (this.tagged) {
        dict.entries.set(key, item as PyValue);
      } else {
        Object.defineProperty(plain, key, {
          value: item,
          enumerable: true,
          writable: true,
          configurable: true
        });
      }
      if (this.endsWith('}')) {
        break;
      }
    }
    this.depth--;
    return this.tagged ? dict : plain;
  }

  private hex4(): number {
    const digits = this.text.slice(this.pos, this.pos + 4);
    if (!/^[0-9a-fA-F]{4}$/.test(digits)) {
      this.fail();
    }
    this.pos += 4;
    return parseInt(digits, 16);
  }

  private string(): string {
    const text = this.text;
    this.pos++; // the opening quote
    let out = '';
    let start = this.pos;
    for (;;) {
      if (this.pos >= text.length) {
        this.fail();
      }
      const c = text.charCodeAt(this.pos);
      if (c === 0x22) {
        out += text.slice(start, this.pos);
        this.pos++;
        return out;
      }
      if (c < 0x20) {
        this.fail();
      }
      if (c !== 0x5c) {
        this.pos++;
        continue;
      }
      out += text.slice(start, this.pos);
      const e = text[this.pos + 1];
      this.pos += 2;
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out += e;
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          const unit = this.hex4();
          if (unit >= 0xdc00 && unit <= 0xdfff) {
            out += this.lone(); // a low surrogate with no high one before it
          } else if (unit >= 0xd800 && unit <= 0xdbff) {
            const low = /^\\u[dD][c-fC-F][0-9a-fA-F]{2}/.test(text.slice(this.pos, this.pos + 6))
              ? parseInt(text.slice(this.pos + 2, this.pos + 6), 16)
              : -1;
            if (low < 0) {
              out += this.lone();
            } else {
              this.pos += 6;
              out += String.fromCharCode(unit, low);
            }
          } else {
            out += String.fromCharCode(unit);
          }
          break;
        }
        default:
          this.pos -= 2;
          this.fail();
      }
      start = this.pos;
    }
  }

  private lone(): string {
    if (!this.lenient) {
      this.fail();
    }
    this.loneSurrogates++;
    return '\ufffd';
  }

  private number(): unknown {
    const match = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(
      this.text.slice(this.pos, this.pos + 2048)
    );
    if (!match || match[0] === '-') {
      this.fail();
    }
    const token = match[0];
    const next = this.text[this.pos + token.length];
    if (next !== undefined && /[0-9.eE+-]/.test(next)) {
      this.fail(); // "01", "1.", "1e" and friends
    }
    this.pos += token.length;
    if (match[2] === undefined && match[3] === undefined) {
      const big = BigInt(token);
      if (this.lenient || (big >= INT_MIN && big <= UINT_MAX)) {
        return this.tagged ? new PyInt(big) : Number(big);
      }
    }
    const value = Number(token);
    if (!Number.isFinite(value) && !this.lenient) {
      this.fail();
    }
    return this.tagged ? new PyFloat(value) : value;
  }
}

/** Parse one JSON document into plain values; throws `SyntaxError`-like errors. */
export function parseJSON(text: string): Plain {
  return new Parser(text, false).parseDocument() as Plain;
}

/** Parse one JSON document keeping Python's view of it (int or float, key order). */
export function parseTagged(text: string): PyValue {
  return new Parser(text, true).parseDocument() as PyValue;
}

/**
 * A line orjson refused only for lone `\\udXXX` escapes (valid JSON, as JavaScript's
 * `JSON.stringify` writes them) read with U+FFFD for them, as the store does; else null.
 */
export function parseWithLoneSurrogates(text: string, tagged = false): unknown | null {
  if (!text.includes('\\u')) {
    return null;
  }
  const parser = new Parser(text, tagged, true);
  try {
    const value = parser.parseDocument();
    return parser.loneSurrogates > 0 ? value : null;
  } catch (error) {
    if (isJSONSyntaxError(error)) {
      return null;
    }
    throw error;
  }
}

export function isJSONSyntaxError(error: unknown): boolean {
  return error instanceof JSONSyntaxError || error instanceof RangeError;
}
