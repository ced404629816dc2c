/**
 * A message's content as the components show it: text to render as Markdown, images as
 * thumbnails and documents as named chips, and the other Anthropic content blocks (tool
 * use, tool result, thinking, ...) as labelled extras. The viewer gets parts from the
 * file's messages; the panel gets one text part from the kernel (which already wrote
 * tool blocks into it as lines) and the images and documents it sent beside it.
 */

import { SHOWN_IMAGE_TYPES, safeImageSource } from './safety';
import { Translation } from './translate';
import { plainMarkdown } from './plain';

/** A content block, ready to show. */
export interface Part {
  kind: 'text' | 'tool_use' | 'tool_result' | 'thinking' | 'image' | 'document' | 'other';
  /** the tool's name (tool_use), the block's type (thinking, other), the media type
   * (image) or the title (document) */
  name: string;
  /** a tool result that reports an error */
  isError: boolean;
  text: string;
  /** an image's `data:` URL (safety.ts `safeImageSource`); absent when it is not shown */
  src?: string;
  /** why an image is not shown: given by URL, not a raster type, damaged data */
  hidden?: 'url' | 'type' | 'data';
}

/**
 * An image part: shown only as a `data:` URL of a raster type. An image by URL (remote or
 * `javascript:`), an SVG or damaged data becomes a part that says why it is not shown.
 */
export function imagePart(block: Record<string, unknown>): Part {
  const source = (block.source ?? {}) as Record<string, unknown>;
  const mediaType = typeof source.media_type === 'string' ? source.media_type : '';
  const image = part('image', '', mediaType);
  if (source.type !== 'base64') {
    return { ...image, hidden: 'url' };
  }
  if (!SHOWN_IMAGE_TYPES.includes(mediaType)) {
    return { ...image, hidden: 'type' };
  }
  const src = safeImageSource(mediaType, source.data);
  return src === null ? { ...image, hidden: 'data' } : { ...image, src };
}

/** A document part, shown by its title. */
export function documentPart(block: Record<string, unknown>): Part {
  const title = typeof block.title === 'string' && block.title ? block.title : 'document';
  return part('document', '', title);
}

function stringify(value: unknown): string {
  if (typeof value === 'string') {
    return value;
  }
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

function part(kind: Part['kind'], text: string, name = '', isError = false): Part {
  return { kind, name, isError, text };
}

/**
 * The parts of a message's content (a string, or a list of Anthropic content blocks).
 * `toolNames` (a reply's `meta.tool_names`) gives a tool call the name a person knows:
 * `git:git_log` for an MCP tool the model called `git__git_log`. A tool result's images
 * (an MCP server's) follow it as image parts, shown by the same rules as any image.
 */
export function partsOf(message: Record<string, unknown>, toolNames: unknown = undefined): Part[] {
  const names = (toolNames && typeof toolNames === 'object' ? toolNames : {}) as Record<string, unknown>;
  const content = message.content;
  if (typeof content === 'string') {
    return [part('text', content)];
  }
  if (!Array.isArray(content)) {
    return content === undefined ? [] : [part('other', stringify(content), 'content')];
  }
  const parts: Part[] = [];
  for (const block of content) {
    if (typeof block === 'string') {
      parts.push(part('text', block));
      continue;
    }
    const b = (block ?? {}) as Record<string, unknown>;
    const type = typeof b.type === 'string' ? b.type : 'block';
    if (type === 'text') {
      parts.push(part('text', stringify(b.text ?? '')));
    } else if (type === 'tool_use') {
      const name = stringify(b.name ?? '?');
      const shown = typeof names[name] === 'string' && names[name] ? (names[name] as string) : name;
      parts.push(part('tool_use', stringify(b.input ?? {}), shown));
    } else if (type === 'tool_result') {
      const inner = Array.isArray(b.content) ? partsOf({ content: b.content }) : [];
      const text = Array.isArray(b.content)
        ? inner
            .filter(p => p.kind !== 'image')
            .map(p => p.text)
            .join('\n')
        : stringify(b.content ?? '');
      parts.push(part('tool_result', text, '', b.is_error === true));
      parts.push(...inner.filter(p => p.kind === 'image'));
    } else if (type === 'image') {
      parts.push(imagePart(b));
    } else if (type === 'document') {
      parts.push(documentPart(b));
    } else if (type === 'thinking' || type === 'redacted_thinking') {
      parts.push(part('thinking', stringify(b.thinking ?? ''), type));
    } else {
      const { type: _ignored, ...rest } = b;
      void _ignored;
      parts.push(part('other', stringify(rest), type));
    }
  }
  return parts;
}

/** What a non-text part is called where it is shown. */
export function partTitle(p: Part, trans: Translation): string {
  switch (p.kind) {
    case 'tool_use':
      return trans.__('tool use: %1', p.name);
    case 'tool_result':
      return p.isError ? trans.__('tool result (error)') : trans.__('tool result');
    case 'thinking':
      return p.name === 'redacted_thinking' ? trans.__('Thinking (encrypted by the API)') : trans.__('Thinking');
    case 'image':
      return imageTitle(p, trans);
    case 'document':
      return trans.__('document: %1', p.name);
    default:
      return p.name;
  }
}

function imageTitle(p: Part, trans: Translation): string {
  switch (p.hidden) {
    case 'url':
      return trans.__('image not loaded: it is given by URL');
    case 'type':
      return trans.__('image not shown: %1 is not shown here', p.name || trans.__('an unknown type'));
    case 'data':
      return trans.__('image not shown: its data is damaged');
    default:
      return trans.__('image (%1)', p.name);
  }
}

/** The parts as one text, for one-line summaries and word differences. */
export function plainText(parts: Part[], trans: Translation): string {
  return parts.map(p => (p.kind === 'text' ? p.text : `[${partTitle(p, trans)}] ${p.text}`)).join('\n');
}

/** The first line of the text as plain words (no Markdown syntax, as the panel's rows
 * and `%chat tree` show it), cut at `max` characters. */
export function firstLine(parts: Part[], trans: Translation, max = 80): string {
  const text = plainText(parts, trans).trim();
  const lines = text.split('\n').map(line => plainMarkdown(line).split(/\s+/).join(' ').trim());
  const line = lines.find(l => l) ?? '';
  return line.length > max ? line.slice(0, max - 1) + '…' : line;
}

/** A user-role message filled in by the tool system (as `tree.is_tool_result`). */
export function isToolResult(message: Record<string, unknown>): boolean {
  const content = message.content;
  return (
    message.role === 'user' &&
    Array.isArray(content) &&
    content.some(b => typeof b === 'object' && b !== null && (b as { type?: unknown }).type === 'tool_result')
  );
}
