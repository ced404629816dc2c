/**
 * The rendering module shared by the JupyterLab viewer and the anywidget panel.
 * Framework-free: plain data in, DOM out; Markdown through an injected, sanitizing
 * `renderMarkdown`.
 */

export * from './format';
export * from './tree';
export { wordDiff, tokenize } from './diff';
export type { Segment } from './diff';
export { escapeHtml, neutraliseRemote, plainTextHtml, setSanitizedHtml } from './safety';
export { SessionView } from './view';
export type { RenderMarkdown, SessionViewOptions } from './view';
