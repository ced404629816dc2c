/**
 * "Export HTML" in the viewer: the server writes the open session as one HTML page
 * beside it (`POST {base_url}jupyter-tree-chat/export?path=PATH`, see
 * jupyter_tree_chat/server/): the page is built once, by the package's Python
 * (share/page.py), from the same readers as every other view, so the viewer needs no
 * second copy of the page's bundle. Another tool's file exports the same way.
 */

import { ServerConnection } from '@jupyterlab/services';

/** What the server wrote. */
export interface Exported {
  /** the page's path, relative to the server's root */
  path: string;
  bytes: number;
}

/** Ask the server to write `path` as a page; throws the server's one-line reason. */
export async function exportPage(
  path: string,
  settings: ServerConnection.ISettings = ServerConnection.makeSettings()
): Promise<Exported> {
  const url = `${settings.baseUrl}jupyter-tree-chat/export?path=${encodeURIComponent(path)}`;
  const response = await ServerConnection.makeRequest(url, { method: 'POST' }, settings);
  const answer = (await response.json().catch(() => ({}))) as { path?: string; bytes?: number; message?: string; reason?: string };
  if (!response.ok || typeof answer.path !== 'string') {
    throw new Error(answer.reason || answer.message || `HTTP ${response.status}`);
  }
  return { path: answer.path, bytes: answer.bytes ?? 0 };
}
