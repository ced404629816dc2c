/**
 * A small menu for one node, opened from the tree list or the picture (right click, the
 * context-menu key, or Shift+F10): what the panel can do to a branch without switching
 * to it, which is hiding it or showing it again. Escape, a click elsewhere or a choice
 * closes it; the keys ↑/↓ move between its items.
 */

import { h, listen } from './dom';

export interface MenuItem {
  label: string;
  run(): void;
  disabled?: boolean;
  /** why it is disabled, as its tooltip */
  why?: string;
}

export class NodeMenu {
  private node: HTMLElement | null = null;
  private stop: (() => void) | null = null;
  private returnFocus: HTMLElement | null = null;

  constructor(private readonly host: HTMLElement) {}

  /** Open the menu at a point of the page (the host must be positioned). */
  open(items: MenuItem[], x: number, y: number, title: string): void {
    this.close();
    this.returnFocus = document.activeElement as HTMLElement | null;
    const buttons = items.map(item =>
      h(
        'button',
        { class: 'jtc-menu-item', role: 'menuitem', disabled: item.disabled, title: item.why },
        item.label
      )
    );
    const menu = h('div', { class: 'jtc-menu', role: 'menu', 'aria-label': title }, ...buttons);
    const box = this.host.getBoundingClientRect();
    menu.style.left = `${Math.max(0, x - box.left)}px`;
    menu.style.top = `${Math.max(0, y - box.top)}px`;
    this.host.append(menu);
    this.node = menu;
    const outside = (event: Event): void => {
      if (!menu.contains(event.target as Node)) {
        this.close();
      }
    };
    const escape = (event: KeyboardEvent): void => {
      if (event.key === 'Escape') {
        event.preventDefault();
        event.stopPropagation(); // the menu's, not the notebook's (command mode)
        this.close();
      }
    };
    document.addEventListener('pointerdown', outside, true);
    document.addEventListener('keydown', escape, true);
    const stopKeys = listen(menu, {
      click: event => {
        const at = buttons.indexOf((event.target as HTMLElement).closest('button') as HTMLElement);
        if (at >= 0 && !items[at].disabled) {
          this.close();
          items[at].run();
        }
      },
      keydown: event => {
        const enabled = buttons.filter((_, k) => !items[k].disabled);
        const at = enabled.indexOf(document.activeElement as HTMLElement);
        if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
          event.preventDefault();
          const step = event.key === 'ArrowDown' ? 1 : -1;
          enabled[(at + step + enabled.length) % enabled.length]?.focus();
        }
      }
    });
    this.stop = () => {
      document.removeEventListener('pointerdown', outside, true);
      document.removeEventListener('keydown', escape, true);
      stopKeys();
    };
    (buttons.find((_, k) => !items[k].disabled) ?? buttons[0])?.focus();
  }

  close(): void {
    if (!this.node) {
      return;
    }
    this.stop?.();
    this.stop = null;
    this.node.remove();
    this.node = null;
    this.returnFocus?.focus?.();
    this.returnFocus = null;
  }
}
