import type { AuditEntry, AuditQueryInput } from '../../../main/contract/index.ts';

/** Filters as typed in the form: strings, empty meaning "any". */
export interface FilterForm {
  tool: string;
  result: string;
  user_id: string;
  token_id: string;
  plugin: string;
  /** datetime-local values, in the browser's time zone */
  from: string;
  to: string;
}

export const EMPTY_FILTERS: FilterForm = {
  tool: '',
  result: '',
  user_id: '',
  token_id: '',
  plugin: '',
  from: '',
  to: '',
};

const localToIso = (value: string): string | undefined => {
  if (!value) return undefined;
  const t = new Date(value).getTime();
  return Number.isNaN(t) ? undefined : new Date(t).toISOString();
};

/** The form as an AuditQuery input: empty fields left out. */
export function toQuery(form: FilterForm): AuditQueryInput {
  const q: Record<string, unknown> = {};
  for (const key of ['tool', 'result', 'user_id', 'token_id', 'plugin'] as const) {
    const v = form[key].trim();
    if (v) q[key] = v;
  }
  const from = localToIso(form.from);
  const to = localToIso(form.to);
  if (from) q.from = from;
  if (to) q.to = to;
  return q as AuditQueryInput;
}

/** Whether a live entry belongs in the table under these filters (the server applies the same rules to queries). */
export function matches(entry: AuditEntry, q: AuditQueryInput): boolean {
  if (q.tool && entry.tool !== q.tool) return false;
  if (q.result && entry.result !== q.result) return false;
  if (q.user_id && entry.user_id !== q.user_id) return false;
  if (q.token_id && entry.token_id !== q.token_id) return false;
  if (q.plugin && entry.source_plugin !== q.plugin) return false;
  if (q.from && entry.at < q.from) return false;
  if (q.to && entry.at >= q.to) return false;
  return true;
}
