/**
 * Python's `repr()`/`str()` and `==` for JSON values, so that problem messages read
 * exactly like those of `jupyter_tree_chat.store.parse_session` (which formats ids with
 * `{id!r}`, i.e. `'msg_001'`, and roles with `{role}`).
 *
 * Values here are "tagged" JSON: the parser in `json.ts` can keep what Python would see
 * (an int or a float, the order of an object's keys) where plain JavaScript values lose it.
 */

// not for translation in this file: Python's repr() and str(), which problems quote

/** A JSON integer as Python holds it (exact, arbitrary size). */
export class PyInt {
  constructor(readonly value: bigint) {}
}

/** A JSON number with a fraction or exponent, or an integer too big for orjson's int. */
export class PyFloat {
  constructor(readonly value: number) {}
}

/** A JSON object, keys in insertion order (a later duplicate keeps the first position). */
export class PyDict {
  readonly entries = new Map<string, PyValue>();
}

export type PyValue = null | boolean | string | PyInt | PyFloat | PyDict | PyValue[];

const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

function hex(code: number, width: number): string {
  return code.toString(16).padStart(width, '0');
}

/** Python's `repr(str)`: single quotes unless the text has a `'` and no `"`. */
export function reprString(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (ch === quote || ch === '\\') {
      out += '\\' + ch;
    } else if (ch === '\t') {
      out += '\\t';
    } else if (ch === '\n') {
      out += '\\n';
    } else if (ch === '\r') {
      out += '\\r';
    } else if (code < 0x20 || code === 0x7f) {
      out += '\\x' + hex(code, 2);
    } else if (code < 0x7f) {
      out += ch;
    } else if (ch !== ' ' && NON_PRINTABLE.test(ch)) {
      if (code <= 0xff) {
        out += '\\x' + hex(code, 2);
      } else if (code <= 0xffff) {
        out += '\\u' + hex(code, 4);
      } else {
        out += '\\U' + hex(code, 8);
      }
    } else {
      out += ch;
    }
  }
  return out + quote;
}

/** Python's `repr(float)`: the shortest round-trip digits, exponent form outside 1e-4..1e16. */
export function reprFloat(x: number): string {
  if (x === 0) {
    return Object.is(x, -0) ? '-0.0' : '0.0';
  }
  if (!Number.isFinite(x)) {
    return Number.isNaN(x) ? 'nan' : x > 0 ? 'inf' : '-inf';
  }
  const sign = x < 0 ? '-' : '';
  const [mantissa, expText] = Math.abs(x).toExponential().split('e');
  const exp = parseInt(expText, 10);
  const digits = mantissa.replace('.', '');
  if (exp >= -4 && exp < 16) {
    if (exp < 0) {
      return sign + '0.' + '0'.repeat(-exp - 1) + digits;
    }
    const whole = digits.padEnd(exp + 1, '0').slice(0, exp + 1);
    const fraction = digits.slice(exp + 1) || '0';
    return sign + whole + '.' + fraction;
  }
  const lead = digits[0] + (digits.length > 1 ? '.' + digits.slice(1) : '');
  const expOut = (exp < 0 ? '-' : '+') + String(Math.abs(exp)).padStart(2, '0');
  return sign + lead + 'e' + expOut;
}

/** Python's `repr()` of a tagged JSON value (`undefined` is a missing key: `None`). */
export function pyRepr(value: PyValue | undefined): string {
  if (value === null || value === undefined) {
    return 'None';
  }
  if (value === true) {
    return 'True';
  }
  if (value === false) {
    return 'False';
  }
  if (typeof value === 'string') {
    return reprString(value);
  }
  if (value instanceof PyInt) {
    return value.value.toString();
  }
  if (value instanceof PyFloat) {
    return reprFloat(value.value);
  }
  if (Array.isArray(value)) {
    return '[' + value.map(item => pyRepr(item)).join(', ') + ']';
  }
  const parts: string[] = [];
  for (const [key, item] of value.entries) {
    parts.push(reprString(key) + ': ' + pyRepr(item));
  }
  return '{' + parts.join(', ') + '}';
}

/** Python's `str()`: a string as is, anything else as `repr()`. */
export function pyStr(value: PyValue | undefined): string {
  return typeof value === 'string' ? value : pyRepr(value);
}

/**
 * Python's `==` on plain JSON values as `JSON.parse`-like code returns them: booleans
 * compare as 0/1 with numbers (`True == 1`), objects by keys and values.
 */
export function pyEquals(a: unknown, b: unknown): boolean {
  if (a === undefined) {
    a = null;
  }
  if (b === undefined) {
    b = null;
  }
  const numeric = (v: unknown): number | undefined =>
    typeof v === 'number' ? v : typeof v === 'boolean' ? Number(v) : undefined;
  const na = numeric(a);
  const nb = numeric(b);
  if (na !== undefined || nb !== undefined) {
    return na !== undefined && nb !== undefined && na === nb;
  }
  if (a === null || b === null || typeof a === 'string' || typeof b === 'string') {
    return a === b;
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) {
      return false;
    }
    return a.every((item, i) => pyEquals(item, b[i]));
  }
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
  if (ka.length !== kb.length) {
    return false;
  }
  const ob = b as Record<string, unknown>;
  return ka.every(
    key =>
      Object.prototype.hasOwnProperty.call(ob, key) &&
      pyEquals((a as Record<string, unknown>)[key], ob[key])
  );
}
