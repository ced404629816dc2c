/**
 * What each of several answers says that the others do not: the compare view's marks.
 *
 * A port of jupyter_tree_chat/diff.py, kept identical so every view marks the same words
 * (tests/test_labextension.py runs both on the same inputs). The views cut the rendered
 * text of each answer into units (words of prose, whole lines of code blocks), so
 * Markdown syntax is never a difference; a unit is marked when no other answer has it at
 * that place: every pairwise longest common subsequence leaves it unmatched. Ties go the
 * same way as in Python (skip in the first sequence first); past `MAX_CELLS` the middle
 * that differs is marked as a whole.
 */

export const MAX_CELLS = 1_000_000;

/** The words of a piece of prose (whitespace separates and is never a unit). */
export function proseUnits(text: string): string[] {
  return text.match(/\S+/g) ?? [];
}

/** The lines of a code block, trailing whitespace dropped, blank lines skipped. */
export function codeUnits(code: string): string[] {
  return code
    .split('\n')
    .filter(line => line.trim())
    .map(line => line.replace(/\s+$/, ''));
}

/** For each unit of `a` and of `b`: is it in their longest common subsequence? */
export function matched(a: readonly string[], b: readonly string[]): [boolean[], boolean[]] {
  const n = a.length;
  const m = b.length;
  const inA = new Array<boolean>(n).fill(false);
  const inB = new Array<boolean>(m).fill(false);
  let head = 0;
  while (head < n && head < m && a[head] === b[head]) {
    inA[head] = inB[head] = true;
    head++;
  }
  let tail = 0;
  while (tail < n - head && tail < m - head && a[n - 1 - tail] === b[m - 1 - tail]) {
    inA[n - 1 - tail] = inB[m - 1 - tail] = true;
    tail++;
  }
  const rows = n - head - tail;
  const cols = m - head - tail;
  if (rows === 0 || cols === 0 || rows * cols > MAX_CELLS) {
    return [inA, inB];
  }
  // lcs[i][j]: the LCS length of a[head + i:] and b[head + j:] (middles only), flattened
  const width = cols + 1;
  const lcs = new Uint32Array((rows + 1) * width);
  for (let i = rows - 1; i >= 0; i--) {
    for (let j = cols - 1; j >= 0; j--) {
      const below = lcs[(i + 1) * width + j];
      const right = lcs[i * width + j + 1];
      lcs[i * width + j] = a[head + i] === b[head + j] ? lcs[(i + 1) * width + j + 1] + 1 : below >= right ? below : right;
    }
  }
  let i = 0;
  let j = 0;
  while (i < rows && j < cols) {
    if (a[head + i] === b[head + j]) {
      inA[head + i] = inB[head + j] = true;
      i++;
      j++;
    } else if (lcs[(i + 1) * width + j] >= lcs[i * width + j + 1]) {
      i++;
    } else {
      j++;
    }
  }
  return [inA, inB];
}

/** For each answer, for each unit: true where no other answer says it. */
export function uniqueMarks(answers: ReadonlyArray<readonly string[]>): boolean[][] {
  const shared = answers.map(units => new Array<boolean>(units.length).fill(false));
  for (let x = 0; x < answers.length; x++) {
    for (let y = x + 1; y < answers.length; y++) {
      const [inX, inY] = matched(answers[x], answers[y]);
      shared[x] = shared[x].map((s, k) => s || inX[k]);
      shared[y] = shared[y].map((s, k) => s || inY[k]);
    }
  }
  if (answers.length < 2) {
    return answers.map(units => new Array<boolean>(units.length).fill(false));
  }
  return shared.map(row => row.map(s => !s));
}
