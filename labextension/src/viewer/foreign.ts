/**
 * Other tools' session files in the viewer: Claude Code, pi, ChatGPT and Open WebUI.
 *
 * The readers exist once, in Python (`jupyter_tree_chat/formats/`). The server extension
 * (`jupyter_tree_chat/server/`) reads such a file through the contents manager and sends
 * it as this project's records; the viewer parses those like any session file and shows
 * the source's problems (by line, or by where in a JSON export) and the format it read.
 */

import { ServerConnection } from '@jupyterlab/services';

import { ChatSession, Problem, parseSession } from '../format/parse';

export const SESSION_SUFFIX = '.chat.jsonl';

/** A file the server read as another tool's session. */
export interface ForeignSession {
  format: string;
  label: string;
  session: ChatSession;
  summary: string;
}

interface SourceProblem {
  line: number | null;
  key: string | null;
  message: string;
}

interface Answer {
  format: string | null;
  label?: string;
  data?: string;
  problems?: SourceProblem[];
  summary?: string;
}

function problemOf(found: SourceProblem): Problem {
  if (typeof found.line === 'number') {
    return { line: found.line, message: found.message };
  }
  return { line: 0, message: found.message, where: found.key ?? '' };
}

/**
 * Ask the server to read `path`: another tool's session, or null for a file the viewer
 * reads itself (a session file, or one no reader knows). Throws when the server cannot
 * answer (the extension is not enabled, the file is gone, ...).
 */
export async function readForeign(
  path: string,
  settings: ServerConnection.ISettings = ServerConnection.makeSettings()
): Promise<ForeignSession | null> {
  const url = `${settings.baseUrl}jupyter-tree-chat/read?path=${encodeURIComponent(path)}`;
  const response = await ServerConnection.makeRequest(url, {}, settings);
  if (!response.ok) {
    throw new Error(`HTTP ${response.status}`);
  }
  const answer = (await response.json()) as Answer;
  if (!answer.format || !answer.label || typeof answer.data !== 'string') {
    return null;
  }
  const session = parseSession(new TextEncoder().encode(answer.data));
  session.problems = (answer.problems ?? []).map(problemOf);
  return { format: answer.format, label: answer.label, session, summary: answer.summary ?? '' };
}
