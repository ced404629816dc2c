/**
 * Grades in the views: an answer's stars (1–5) or thumbs (👍/👎), clickable in the panel
 * and read-only in the viewer and the exported page, the other graders' verdicts beside
 * them, and the grid's order by a grade. What it shows comes from the records
 * (format/grades.ts); a click or a key asks the kernel to append one more
 * (`PanelActions.grade`). Grader names and notes go in as text.
 */

import { h, listen } from './dom';
import { Translation } from './translate';
import { Grade, Grades, HAND, gradeText, winsOf } from '../format/grades';

/** The graders of these answers, hand grades first, then the others by name. */
export function graderNames(grades: Grades | undefined, ids: string[]): string[] {
  const found = new Set<string>();
  for (const id of ids) {
    for (const name of grades?.latest.get(id)?.keys() ?? []) {
      found.add(name);
    }
  }
  return [...found].sort((a, b) => (a === HAND ? -1 : b === HAND ? 1 : a.localeCompare(b)));
}

function value(grade: Grade | undefined): number | null {
  if (!grade || grade.score === null) {
    return null;
  }
  return typeof grade.score === 'boolean' ? Number(grade.score) : grade.score;
}

/** `lines` by the mean of `grader`'s grades of their answers, best first (ungraded last;
 * '' keeps the order given). */
export function sortByGrade<T>(lines: T[], answersOf: (line: T) => string[], grades: Grades | undefined, grader: string): T[] {
  if (!grader || !grades) {
    return lines;
  }
  const mean = (line: T): number => {
    const values = answersOf(line)
      .map(id => value(grades.latest.get(id)?.get(grader)))
      .filter((v): v is number => v !== null);
    return values.length ? values.reduce((a, b) => a + b, 0) / values.length : -Infinity;
  };
  const keyed = lines.map((line, at) => ({ line, at, key: mean(line) }));
  keyed.sort((a, b) => b.key - a.key || a.at - b.at);
  return keyed.map(k => k.line);
}

/** An answer's grades: stars to click (the panel) or the latest grade as text, then the
 * other graders' verdicts and its preference wins. */
export function gradeStrip(grades: Grades | undefined, id: string, trans: Translation, clickable: boolean): HTMLElement {
  const mine = grades?.latest.get(id);
  const hand = mine?.get(HAND);
  const strip = h('div', { class: 'jtc-grade', 'data-grade-of': id });
  const onFiveStars = !hand || !hand.scale || (hand.scale[0] === 1 && hand.scale[1] === 5);
  if (clickable && onFiveStars) {
    const score = value(hand) ?? 0;
    for (let n = 1; n <= 5; n++) {
      strip.append(
        h(
          'button',
          {
            class: `jtc-star${n <= score ? ' jtc-star-on' : ''}`,
            'data-act': 'grade',
            'data-id': id,
            'data-score': n,
            'aria-pressed': n === score ? 'true' : 'false',
            'aria-label': trans.__('Grade %1 of 5', n),
            title: trans.__('Grade %1 of 5 (or press 1–5)', n)
          },
          n <= score ? '★' : '☆'
        )
      );
    }
  } else if (hand) {
    strip.append(h('span', { class: 'jtc-grade-hand', title: trans.__('grade') }, gradeText(hand)));
  }
  if (hand?.note) {
    strip.append(h('span', { class: 'jtc-grade-note', title: hand.note }, hand.note));
  }
  for (const [name, grade] of mine ?? []) {
    if (name !== HAND) {
      strip.append(h('span', { class: 'jtc-grade-other', title: grade.error ?? name }, `${name}: ${gradeText(grade)}`));
    }
  }
  const [won, played] = grades ? winsOf(grades, id) : [0, 0];
  if (played) {
    strip.append(h('span', { class: 'jtc-grade-wins' }, trans.__('won %1 of %2', won, played)));
  }
  return strip;
}

/** What grades an answer by hand: the panel's actions (`PanelActions.grade`). */
interface Grading {
  grade(id: string, score: number, scale: [number, number]): void;
}

function canGrade(actions: object | null): actions is Grading {
  return actions !== null && typeof (actions as Partial<Grading>).grade === 'function';
}

/** 👍/👎 for an answer in the conversation (buttons where `actions` can grade: the panel;
 * elsewhere the grade as text, or nothing when it has none). */
export function thumbs(grades: Grades | undefined, id: string, trans: Translation, actions: object | null): HTMLElement | null {
  const hand = grades?.latest.get(id)?.get(HAND);
  if (!canGrade(actions)) {
    return hand ? h('span', { class: 'jtc-grade jtc-grade-hand', 'data-grade-of': id }, gradeText(hand)) : null;
  }
  const isThumb = hand?.scale?.[0] === 0 && hand?.scale?.[1] === 1;
  const score = isThumb ? value(hand) : null;
  // the glyph is drawn by the stylesheet (a picture, not a word): its name is translated
  const button = (n: number, label: string): HTMLElement =>
    h('button', { class: `jtc-button jtc-quiet jtc-thumbs-button${score === n ? ' jtc-thumbs-on' : ''}`, 'data-act': 'thumb', 'data-id': id, 'data-score': n, 'aria-pressed': score === n ? 'true' : 'false', title: label, 'aria-label': label });
  const strip = h(
    'span',
    { class: 'jtc-grade', 'data-grade-of': id },
    button(1, trans.__('Good answer')),
    button(0, trans.__('Bad answer')),
    hand && !isThumb ? h('span', { class: 'jtc-grade-hand' }, gradeText(hand)) : null
  );
  listen(strip, {
    click: event => {
      const thumb = (event.target as HTMLElement).closest<HTMLElement>('[data-act="thumb"]');
      if (thumb) {
        event.stopPropagation(); // the conversation's own click handling has nothing to do
        actions.grade(id, Number(thumb.dataset.score), [0, 1]);
      }
    }
  });
  return strip;
}
