import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AuditEntry } from '../../../main/contract/audit.ts';
import type { Clock } from '../../../main/lib/clock.ts';
import type { Logger } from '../../../main/lib/logger.ts';
import type { AuditLogOptions } from '../../../main/store/audit/log.ts';
import { AuditLog } from '../../../main/store/audit/log.ts';

/** Shared set-up for the audit log tests: temp folders, entries, a clock and a logger that remember. */

export const T0 = Date.parse('2026-11-01T00:00:00.000Z');

export function entry(i: number, over: Partial<AuditEntry> = {}): AuditEntry {
  return {
    id: `e${String(i).padStart(6, '0')}`,
    at: new Date(T0 + i * 1000).toISOString(),
    request_id: `r${i}`,
    tool: 'site.pages.list',
    write: false,
    result: 'ok',
    error_code: null,
    source_plugin: 'site',
    feature_key: 'site.pages',
    site: 'local',
    token_id: 'tok_a',
    token_preview: 'gth_…abcd',
    user_id: 'u_admin',
    target: `/page/${i}`,
    duration_ms: i % 97,
    client: 'claude-desktop',
    ...over,
  };
}

export class TestClock implements Clock {
  constructor(public ms = T0) {}
  now(): number {
    return this.ms;
  }
}

export interface LogRecord {
  level: string;
  msg: string;
  fields?: Record<string, unknown>;
}

export function memoryLogger(): Logger & { records: LogRecord[] } {
  const records: LogRecord[] = [];
  const at = (level: string) => (msg: string, fields?: Record<string, unknown>) => {
    records.push({ level, msg, fields });
  };
  return { records, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** A temp folder and every log opened in it, closed and removed by `cleanup`. */
export class AuditHarness {
  readonly logger = memoryLogger();
  readonly clock = new TestClock();
  private readonly logs: AuditLog[] = [];
  root = '';

  get dir(): string {
    return join(this.root, 'audit');
  }

  async init(): Promise<this> {
    this.root = await mkdtemp(join(tmpdir(), 'gatehouse-audit-'));
    return this;
  }

  async open(opts: Partial<AuditLogOptions> = {}): Promise<AuditLog> {
    const log = await AuditLog.open({ dir: this.dir, clock: this.clock, log: this.logger, ...opts });
    this.logs.push(log);
    return log;
  }

  async cleanup(): Promise<void> {
    for (const l of this.logs) await l.close().catch(() => undefined);
    if (this.root) await rm(this.root, { recursive: true, force: true });
  }
}

/** Every page of a query, following cursors. */
export async function allPages(log: AuditLog, q: Parameters<AuditLog['query']>[0]): Promise<AuditEntry[][]> {
  const pages: AuditEntry[][] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await log.query({ ...q, ...(cursor ? { cursor } : {}) });
    pages.push(page.entries);
    if (!page.next_cursor) return pages;
    cursor = page.next_cursor;
  }
}

export const ids = (es: AuditEntry[]): string[] => es.map((e) => e.id);
