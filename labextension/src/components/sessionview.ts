/**
 * The session view, the same in the kernel-connected panel and the read-only file
 * viewer: the header, the tree on the left, and on the right the compare view over the
 * conversation. What differs is only the source of the data and what a click means:
 *
 * - with `actions` (the panel) the conversation shows the session's current branch;
 *   clicking a row off that branch, a sibling arrow or "Use this" switches the session
 *   (the kernel does it, and the change comes back through the source); Edit, Retry and
 *   Label are there.
 * - without (the viewer) clicking a row selects it and the conversation shows the path
 *   to it, its details open and its siblings (or its answers) side by side; the arrows
 *   and "Show this" select. Nothing in the file changes.
 *
 * The tree is shown as a list or as a picture (a toggle above it; the same marks and the
 * same clicks). Hidden branches fold away in both, with a count and a toggle that shows
 * them; in the panel a node's menu (right click, the context-menu key) hides a branch or
 * shows it again.
 */

import { CodeActions } from './code';
import { renderCompare, renderLiveCompare } from './compare';
import { experimentAt, renderExperimentGrid } from './experiment';
import { Conversation, SessionActions } from './conversation';
import { h, listen } from './dom';
import { renderHeader, renderProblems } from './header';
import { Markdown } from './markdown';
import { Change, FanoutState, SessionSource, hiddenBranches, shortId } from './model';
import { Finder } from './find';
import { NodeMenu } from './nodemenu';
import { TreePicture } from './picture/picture';
import { newPlace } from './rowwindow';
import { SearchBox } from './search';
import { StatusState, renderStatus } from './status';
import { Translation } from './translate';
import { TreeList } from './treelist';

/** What the panel can do to its session. */
export interface PanelActions extends SessionActions {
  /** make the branch through `id` the current one */
  switchTo(id: string): void;
  /** hide the branch from `id` (or, with `false`, show it again); the file keeps it */
  hide(id: string, hidden: boolean): void;
  /** grade answer `id` by hand: `score` on `scale` (1–5 stars, 0–1 a thumb) */
  grade(id: string, score: number, scale: [number, number]): void;
  /** answer `id` beat answer `other` (or, with `tie`, neither did) */
  prefer(id: string, other: string, tie: boolean): void;
  /** the status line's state */
  status(): StatusState;
}

export interface SessionViewOptions {
  trans: Translation;
  markdown: Markdown;
  /** the panel's actions; absent in the read-only viewer */
  actions?: PanelActions;
  /** the title when the source has none */
  fallbackTitle: string;
  /** what the tree and the conversation say when there is no message */
  emptyText: string;
  /** what an answer's code blocks offer (Copy; Insert below where the host can) */
  code?: CodeActions;
  /** who answers the search box above the tree (absent: no search box) */
  finder?: Finder;
  /** write the session as one HTML page (absent: no "Export HTML" button) */
  exportHtml?: () => void;
}

/** Which versions are side by side: `id` and its siblings, or the answers under `id`. */
interface CompareState {
  /** `row`: one experiment line's answers (`ids`), opened from the grid of question `id` */
  of: 'siblings' | 'children' | 'experiment' | 'row';
  id: string;
  ids?: string[];
}

export class SessionView {
  readonly node: HTMLElement;
  private readonly header: HTMLElement;
  private readonly statusHost: HTMLElement;
  private readonly problemsHost: HTMLElement;
  private readonly compareHost: HTMLElement;
  private readonly tree: TreeList;
  private readonly picture: TreePicture;
  private readonly treeBar: HTMLElement;
  private readonly treePane: HTMLElement;
  private readonly menu: NodeMenu;
  private readonly search: SearchBox | null;
  private treeMode: 'list' | 'picture' = 'list';
  private showHidden = false;
  private readonly conversation: Conversation;
  private selected: string | null = null;
  private compare: CompareState | null = null;
  /** the compare view marks the differences (a toggle, off until switched on) */
  private differences = false;
  /** what the experiment grid's filter box holds */
  private gridFilter = '';
  /** the grid's scroll and lines' heights, kept across its redraws (rowwindow.ts) */
  private readonly gridPlace = newPlace();
  /** the grader the experiment grid is sorted by ('' : the rows' order) */
  private gridSort = '';
  /** the fan-out the compare view last opened for (each new one opens it again) */
  private fanoutSeen: FanoutState | null = null;
  private frame = 0;
  private readonly unsubscribe: () => void;
  private readonly stopListening: () => void;

  constructor(
    host: HTMLElement,
    private readonly source: SessionSource,
    private readonly options: SessionViewOptions
  ) {
    const { trans, actions } = options;
    const menu = actions ? (id: string, x: number, y: number) => this.openMenu(id, x, y) : undefined;
    this.tree = new TreeList(source, trans, {
      activate: id => this.activate(id),
      sibling: (id, step) => this.sibling(id, step),
      focused: actions ? undefined : id => this.select(id),
      menu,
      hint: actions
        ? trans.__('click: switch to this branch, down its newest answers · ←/→: siblings')
        : trans.__('click: show the path to this node · ←/→: siblings'),
      emptyText: options.emptyText
    });
    this.picture = new TreePicture(source, trans, {
      activate: id => this.activate(id),
      focused: actions ? undefined : id => this.select(id),
      menu,
      hint: actions ? trans.__('click: switch to this branch, down its newest answers') : trans.__('click: show the path to this node'),
      emptyText: options.emptyText
    });
    this.picture.node.hidden = true;
    this.search = options.finder ? this.searchBox(options.finder) : null;
    this.treeBar = h('div', { class: 'jtc-tree-bar', role: 'toolbar', 'aria-label': trans.__('Tree view') });
    this.treePane = h('div', { class: 'jtc-tree-pane' }, this.search?.node, this.treeBar, this.tree.node, this.picture.node);
    this.conversation = new Conversation(source, trans, {
      markdown: options.markdown,
      actions: actions ?? null,
      navigate: actions ? 'switch' : 'select',
      compare: id => this.openCompare({ of: experimentAt(source, id) ? 'experiment' : 'siblings', id }),
      select: id => (actions ? this.tree.reveal(id) : this.select(id)),
      sibling: (id, step) => this.sibling(id, step),
      emptyText: options.emptyText,
      code: options.code
    });
    this.header = h('div', { class: 'jtc-header-host' });
    this.statusHost = h('div', { class: 'jtc-status-host' });
    this.problemsHost = h('div', { class: 'jtc-problems-host' });
    this.compareHost = h('div', { class: 'jtc-compare-host' });
    this.node = h(
      'div',
      { class: `jtc-root jtc-view ${actions ? 'jtc-panel' : 'jtc-readonly'}` },
      this.header,
      this.statusHost,
      this.problemsHost,
      h('div', { class: 'jtc-main' }, this.treePane, h('div', { class: 'jtc-right' }, this.compareHost, this.conversation.node))
    );
    this.menu = new NodeMenu(this.node);
    this.stopListening = listen(this.node, {
      keydown: event => {
        if (event.key === 'Escape' && this.compare) {
          this.compare = null;
          this.renderCompare();
        }
      },
      click: event => {
        const button = (event.target as HTMLElement).closest<HTMLElement>('[data-tree-action]');
        if (button && this.treeBar.contains(button)) {
          this.treeAction(button.dataset.treeAction!);
        }
      }
    });
    host.append(this.node);
    this.unsubscribe = source.subscribe(what => this.update(what));
    this.update('tree');
  }

  dispose(): void {
    cancelAnimationFrame(this.frame);
    this.unsubscribe();
    this.menu.close();
    this.search?.dispose();
    this.tree.dispose();
    this.picture.dispose();
    this.conversation.dispose();
    this.stopListening();
    this.node.remove();
  }

  /** The node whose path is shown (the viewer's selection; the panel's leaf). */
  get selection(): string | null {
    return this.end();
  }

  /** Show the path to `id` (the viewer; the panel shows its current branch). */
  select(id: string | null): void {
    if (this.options.actions || (id !== null && !this.source.tree.has(id))) {
      return;
    }
    this.selected = id;
    this.conversation.details.clear();
    if (id !== null) {
      this.conversation.details.add(id);
    }
    this.compare = id === null ? null : this.autoCompare(id);
    this.update('tree');
    if (id !== null) {
      this.tree.reveal(id);
      this.picture.reveal(id);
    }
  }

  /** Show the tree as a list or as a picture. */
  showTreeAs(mode: 'list' | 'picture'): void {
    this.treeMode = mode;
    this.renderTree();
  }

  update(what: Change): void {
    if (what === 'delta') {
      this.conversation.delta();
      return;
    }
    if (what === 'fanout') {
      this.fanoutChanged();
      return;
    }
    if (what === 'status') {
      this.renderStatus();
      return;
    }
    if (what === 'context') {
      this.renderHeader();
      return;
    }
    if (what === 'tree' && !this.options.actions && !this.source.tree.has(this.selected)) {
      // a new file, or the selected node is gone: start at the file's leaf
      this.selected = null;
      if (this.source.tree.has(this.source.leaf)) {
        this.select(this.source.leaf);
        return;
      }
    }
    if (what !== 'texts') {
      const { trans } = this.options;
      this.renderHeader();
      const problems = renderProblems(this.source.problems, trans);
      this.problemsHost.replaceChildren(...(problems ? [problems] : []));
      this.renderTree();
      this.renderStatus();
    }
    if (what === 'tree') {
      this.search?.refresh(); // new nodes may match
    }
    this.conversation.render(this.end());
    this.renderCompare();
  }

  /** The tree pane alone: the list or the picture, and its bar (a toggle redraws only this). */
  private renderTree(): void {
    const tree = this.source.tree;
    const [leaf, shown, showHidden] = [this.source.leaf, this.end(), this.showHidden];
    const picture = this.treeMode === 'picture';
    this.tree.node.hidden = picture;
    this.picture.node.hidden = !picture;
    this.treePane.classList.toggle('jtc-picture-mode', picture);
    let onMarkedPath: (id: string) => boolean;
    if (picture) {
      this.picture.update({ shownPath: tree.pathTo(shown), showHidden });
      onMarkedPath = id => this.picture.isMarked(id);
    } else {
      this.tree.update({ leaf, shown, showHidden }); // marks by a walk up: no path arrays
      onMarkedPath = id => this.tree.isMarked(id);
    }
    this.renderTreeBar(onMarkedPath);
  }

  private end(): string | null {
    if (this.options.actions) {
      const stream = this.source.stream;
      return stream ? stream.parent : this.source.leaf;
    }
    return this.selected;
  }

  private renderHeader(): void {
    this.header.replaceChildren(renderHeader(this.source, this.options.fallbackTitle, this.options.trans));
  }

  /** The list / picture toggle, and how many branches are hidden with the toggle that shows them. */
  private renderTreeBar(keep: (id: string) => boolean): void {
    const trans = this.options.trans;
    const source = this.source;
    const hidden = source.hidden.size ? hiddenBranches(source.tree, source.hidden, keep).length : 0;
    const mode = (name: 'list' | 'picture', text: string): HTMLElement =>
      h(
        'button',
        {
          class: 'jtc-button jtc-quiet jtc-mode',
          'data-tree-action': name,
          'aria-pressed': String(this.treeMode === name)
        },
        text
      );
    const toggle =
      hidden || this.showHidden
        ? h(
            'button',
            {
              class: 'jtc-button jtc-quiet jtc-hidden-toggle',
              'data-tree-action': 'hidden',
              'aria-pressed': String(this.showHidden),
              title: trans.__('Hidden branches are folded away, never deleted')
            },
            this.showHidden
              ? trans.__('Fold hidden branches')
              : trans._n('Show %1 hidden branch', 'Show %1 hidden branches', hidden)
          )
        : null;
    const share = this.options.exportHtml
      ? h(
          'button',
          {
            class: 'jtc-button jtc-quiet jtc-export-html',
            'data-tree-action': 'export-html',
            title: trans.__('Write this session as one HTML page that opens anywhere, with no network')
          },
          trans.__('Export HTML')
        )
      : null;
    this.treeBar.replaceChildren(mode('list', trans.__('List')), mode('picture', trans.__('Picture')), ...(toggle ? [toggle] : []), ...(share ? [share] : []));
  }

  private treeAction(action: string): void {
    if (action === 'list' || action === 'picture') {
      this.showTreeAs(action);
    } else if (action === 'hidden') {
      this.showHidden = !this.showHidden;
      this.renderTree();
      this.search?.refresh();
    } else if (action === 'export-html') {
      this.options.exportHtml?.();
    }
  }

  /** The search box over this view's tree: marks in the list and the picture, Enter
   * shows a match as a click on it would (components/search.ts). */
  private searchBox(finder: Finder): SearchBox {
    return new SearchBox(this.options.trans, {
      finder,
      folds: () => (this.showHidden ? [] : hiddenBranches(this.source.tree, this.source.hidden, id => this.isOnMarkedPath(id))),
      mark: (ids, current) => {
        this.tree.setMatches(ids, current);
        this.picture.setMatches(ids, current);
      },
      show: id => {
        this.activate(id);
        this.tree.reveal(id);
      },
      showingHidden: () => this.showHidden,
      showHidden: () => this.treeAction('hidden')
    });
  }

  private isOnMarkedPath(id: string): boolean {
    return this.treeMode === 'picture' ? this.picture.isMarked(id) : this.tree.isMarked(id);
  }

  /** The panel's menu for a node: hide its branch, or show it again. */
  private openMenu(id: string, x: number, y: number): void {
    const actions = this.options.actions;
    if (!actions) {
      return;
    }
    const trans = this.options.trans;
    const onPath = this.source.tree.pathTo(this.source.leaf).includes(id);
    const item = this.source.hidden.has(id)
      ? { label: trans.__('Show this branch again'), run: () => actions.hide(id, false) }
      : {
          label: trans.__('Hide this branch'),
          run: () => actions.hide(id, true),
          disabled: onPath,
          why: onPath ? trans.__('The current branch cannot be hidden; switch to another first') : undefined
        };
    this.menu.open([item], x, y, trans.__('Branch from %1', shortId(id)));
  }

  private renderStatus(): void {
    const actions = this.options.actions;
    this.statusHost.replaceChildren(...(actions ? [renderStatus(actions.status(), this.options.trans)] : []));
  }

  /** A click on a tree row: the panel shows it if on the current branch, else switches. */
  private activate(id: string): void {
    const actions = this.options.actions;
    if (!actions) {
      this.select(id);
    } else if (this.source.tree.pathTo(this.source.leaf).includes(id)) {
      this.conversation.reveal(id);
    } else {
      actions.switchTo(id);
    }
  }

  private sibling(id: string, step: -1 | 1): void {
    const tree = this.source.tree;
    const siblings = tree.siblings(id);
    const next = siblings[siblings.indexOf(id) + step];
    if (next === undefined) {
      return;
    }
    if (this.options.actions) {
      this.options.actions.switchTo(next);
    } else {
      this.select(tree.deepestLeaf(next));
    }
  }

  /** The viewer compares a selected node's siblings, or else the answers under it. */
  private autoCompare(id: string): CompareState | null {
    const tree = this.source.tree;
    const question = tree.role(id) === 'user' ? id : tree.parentOf(id);
    if (question !== null && experimentAt(this.source, question)) {
      return { of: 'experiment', id: question };
    }
    if (tree.siblings(id).length > 1) {
      return { of: 'siblings', id };
    }
    return tree.childIds(id).length > 1 ? { of: 'children', id } : null;
  }

  private openCompare(state: CompareState): void {
    this.compare = state;
    this.renderCompare();
    this.compareHost.scrollIntoView?.({ block: 'nearest' });
  }

  /** An experiment's rows × versions in place of the compare view (experiment.ts). */
  private renderGrid(id: string): void {
    const actions = this.options.actions;
    const grid = renderExperimentGrid(this.source, id, this.options.trans, {
      navigate: actions ? 'switch' : 'select',
      filter: this.gridFilter,
      setFilter: text => {
        this.gridFilter = text;
      },
      place: this.gridPlace,
      grades: this.source.grades,
      sort: this.gridSort,
      setSort: grader => {
        this.gridSort = grader;
        this.renderCompare();
      },
      grade: actions ? (answer, score) => actions.grade(answer, score, [1, 5]) : undefined,
      choose: chosen => (actions ? actions.switchTo(chosen) : this.select(chosen)),
      compare: ids => this.openCompare({ of: 'row', id, ids }),
      close: () => {
        this.compare = null;
        this.renderCompare();
      }
    });
    this.compareHost.replaceChildren(...(grid ? [grid] : []));
  }

  /** The compared ids, the reference first (recomputed: a retry may add a sibling). */
  private compareIds(): string[] {
    const state = this.compare;
    const tree = this.source.tree;
    if (!state || !tree.has(state.id)) {
      return [];
    }
    let reference = state.id;
    let ids = tree.siblings(state.id);
    if (state.of === 'children' || state.of === 'row') {
      ids = state.of === 'row' ? (state.ids ?? []).filter(id => tree.has(id)) : tree.childIds(state.id);
      const onPath = new Set(tree.pathTo(this.source.leaf));
      reference = ids.find(id => onPath.has(id)) ?? ids[0];
    }
    return ids.length > 1 ? [reference, ...ids.filter(id => id !== reference)] : [];
  }

  /** A fan-out streams into the compare view of its question; redrawn once per frame. */
  private fanoutChanged(): void {
    const fanout = this.source.fanout;
    if (fanout && fanout !== this.fanoutSeen) {
      this.fanoutSeen = fanout;
      this.compare = { of: 'children', id: fanout.parent };
    }
    cancelAnimationFrame(this.frame);
    this.frame = requestAnimationFrame(() => this.renderCompare());
  }

  private renderCompare(): void {
    const fanout = this.source.fanout;
    if (fanout && !fanout.ended && this.compare?.id === fanout.parent) {
      this.compareHost.replaceChildren(renderLiveCompare(fanout, this.options.trans, this.options.markdown));
      return;
    }
    if (this.compare?.of === 'experiment') {
      this.renderGrid(this.compare.id);
      return;
    }
    const ids = this.compareIds();
    if (!ids.length) {
      this.compareHost.replaceChildren();
      return;
    }
    const actions = this.options.actions;
    this.compareHost.replaceChildren(
      renderCompare(this.source, ids, this.options.trans, {
        navigate: actions ? 'switch' : 'select',
        markdown: this.options.markdown,
        differences: this.differences,
        toggleDifferences: () => {
          this.differences = !this.differences;
          this.renderCompare();
        },
        prefer: actions ? (id, other, tie) => actions.prefer(id, other, tie) : undefined,
        choose: id => {
          if (actions) {
            this.compare = this.compare?.of === 'row' ? this.compare : { of: 'siblings', id };
            actions.switchTo(id);
            this.renderCompare();
          } else {
            this.select(id);
          }
        },
        close: () => {
          // a grid line's side by side goes back to its grid
          this.compare = this.compare?.of === 'row' ? { of: 'experiment', id: this.compare.id } : null;
          this.renderCompare();
        }
      })
    );
  }
}
