/**
 * Word differences between two answers, for the side-by-side compare. A longest common
 * subsequence over word tokens (whitespace kept as its own tokens), after trimming the
 * common head and tail; past a size budget the middle is marked changed as a whole.
 */

export interface Segment {
  text: string;
  /** true where this side differs from the other */
  changed: boolean;
}

const MAX_CELLS = 4_000_000;

export function tokenize(text: string): string[] {
  return text.match(/\s+|[^\s]+/g) ?? [];
}

function push(out: Segment[], text: string, changed: boolean): void {
  const last = out[out.length - 1];
  if (last && last.changed === changed) {
    last.text += text;
  } else if (text) {
    out.push({ text, changed });
  }
}

/** Segments of `a` and of `b`, each marking the words the other side does not have. */
export function wordDiff(a: string, b: string): { a: Segment[]; b: Segment[] } {
  const ta = tokenize(a);
  const tb = tokenize(b);
  let head = 0;
  while (head < ta.length && head < tb.length && ta[head] === tb[head]) {
    head++;
  }
  let tail = 0;
  while (
    tail < ta.length - head &&
    tail < tb.length - head &&
    ta[ta.length - 1 - tail] === tb[tb.length - 1 - tail]
  ) {
    tail++;
  }
  const ma = ta.slice(head, ta.length - tail);
  const mb = tb.slice(head, tb.length - tail);
  const outA: Segment[] = [];
  const outB: Segment[] = [];
  push(outA, ta.slice(0, head).join(''), false);
  push(outB, tb.slice(0, head).join(''), false);

  const n = ma.length;
  const m = mb.length;
  if (n * m > MAX_CELLS) {
    push(outA, ma.join(''), true);
    push(outB, mb.join(''), true);
  } else if (n > 0 || m > 0) {
    // lcs[i][j] = LCS length of ma[i:] and mb[j:], flattened
    const width = m + 1;
    const lcs = new Uint32Array((n + 1) * width);
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        lcs[i * width + j] =
          ma[i] === mb[j]
            ? lcs[(i + 1) * width + j + 1] + 1
            : Math.max(lcs[(i + 1) * width + j], lcs[i * width + j + 1]);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n && j < m) {
      if (ma[i] === mb[j]) {
        push(outA, ma[i++], false);
        push(outB, mb[j++], false);
      } else if (lcs[(i + 1) * width + j] >= lcs[i * width + j + 1]) {
        push(outA, ma[i], !/^\s+$/.test(ma[i]));
        i++;
      } else {
        push(outB, mb[j], !/^\s+$/.test(mb[j]));
        j++;
      }
    }
    for (; i < n; i++) {
      push(outA, ma[i], !/^\s+$/.test(ma[i]));
    }
    for (; j < m; j++) {
      push(outB, mb[j], !/^\s+$/.test(mb[j]));
    }
  }
  push(outA, ta.slice(ta.length - tail).join(''), false);
  push(outB, tb.slice(tb.length - tail).join(''), false);
  return { a: outA, b: outB };
}
