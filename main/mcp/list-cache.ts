import type { RegisteredTool } from '../core/calls/registry.ts';

/** The JSON text of results made once (a tools/list answer), by the result object the handler returned. */
const prepared = new WeakMap<object, string>();

/** Distinct visible tool sets kept (one per kind of token, in practice a handful). */
const MAX_LISTS = 16;

/**
 * tools/list answers, made once per visible tool set. A set is named by the
 * revisions of its registry entries (a changed or re-registered tool is a
 * new revision, so a new set: nothing to invalidate; old sets age out), and
 * its result object and JSON text are kept: listing 500 upstream tools was
 * mostly building and stringifying the same 300 KB again.
 */
export class ToolListCache {
  private readonly lists = new Map<string, object>();

  constructor(private readonly toMcpTool: (entry: RegisteredTool) => Record<string, unknown>) {}

  result(entries: readonly RegisteredTool[]): object {
    const key = entries.map((e) => e.revision).join(',');
    let result = this.lists.get(key);
    if (result) {
      // most recently used last
      this.lists.delete(key);
    } else {
      result = Object.freeze({ tools: Object.freeze(entries.map(this.toMcpTool)) });
      prepared.set(result, JSON.stringify(result));
      if (this.lists.size >= MAX_LISTS) this.lists.delete(this.lists.keys().next().value!);
    }
    this.lists.set(key, result);
    return result;
  }
}

/** A JSON-RPC answer as JSON: its result's prepared text when there is one, else JSON.stringify. */
export function answerText(message: object): string {
  const m = message as { result?: unknown; id?: unknown; jsonrpc?: unknown };
  const json = m.result && typeof m.result === 'object' ? prepared.get(m.result) : undefined;
  if (json === undefined || m.jsonrpc !== '2.0' || Object.keys(m).length !== 3) return JSON.stringify(message);
  return `{"result":${json},"jsonrpc":"2.0","id":${JSON.stringify(m.id)}}`;
}
