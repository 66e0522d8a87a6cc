import { AUDIT_CSV_COLUMNS, auditCsvValue, csvCell } from '../../../main/contract/index.ts';
import type { Api, AuditEntry, AuditQueryInput } from '../../../main/contract/index.ts';
import type { ExportFormat } from '../../api/index.ts';

export function auditToCsv(entries: readonly AuditEntry[]): string {
  const lines = [AUDIT_CSV_COLUMNS.join(',')];
  for (const e of entries) lines.push(AUDIT_CSV_COLUMNS.map((c) => csvCell(auditCsvValue(e, c))).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

export const auditToJsonl = (entries: readonly AuditEntry[]): string =>
  entries.map((e) => `${JSON.stringify(e)}\n`).join('');

/**
 * Electron has no HTTP server to download from, so the console pages through
 * the audit query itself (1000 entries a page) and builds the file.
 */
export async function collectAudit(
  api: Api,
  filters: AuditQueryInput,
  max = 100_000,
): Promise<{ ok: true; entries: AuditEntry[] } | { ok: false; message: string }> {
  const entries: AuditEntry[] = [];
  let cursor: string | undefined;
  do {
    const page = await api['audit.query']({ ...filters, limit: 1000, ...(cursor ? { cursor } : {}) });
    if (!page.ok) return { ok: false, message: page.message };
    entries.push(...page.data.entries);
    cursor = page.data.next_cursor ?? undefined;
  } while (cursor && entries.length < max);
  return { ok: true, entries };
}

export function exportFileName(format: ExportFormat, at = new Date()): string {
  return `gatehouse-audit-${at.toISOString().slice(0, 19).replace(/[:T]/g, '-')}.${format}`;
}

/** Hand a file to the browser's download machinery. */
export function saveFile(name: string, text: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
