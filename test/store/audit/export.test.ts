import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../../main/contract/audit.ts';
import { AUDIT_CSV_COLUMNS } from '../../../main/contract/audit.ts';
import type { AuditLog } from '../../../main/store/audit/log.ts';
import { AuditHarness, allPages, entry } from './fixtures.ts';

let h: AuditHarness;
beforeEach(async () => {
  h = await new AuditHarness().init();
});
afterEach(async () => {
  await h.cleanup();
});

/** Exports into a real file through a stream with a tiny buffer, so backpressure is exercised. */
async function exportToFile(
  log: AuditLog,
  q: Parameters<AuditLog['export']>[0],
  format: 'jsonl' | 'csv',
): Promise<{ count: number; text: string }> {
  const path = join(h.root, `export.${format}`);
  const out = createWriteStream(path, { highWaterMark: 256 });
  const count = await log.export(q, format, out);
  out.end();
  await finished(out);
  return { count, text: await readFile(path, 'utf8') };
}

/** A strict RFC 4180 reader: quoted fields may hold commas, doubled quotes and line breaks. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let i = 0;
  while (i < text.length) {
    let cell = '';
    if (text[i] === '"') {
      i++;
      for (;;) {
        const q = text.indexOf('"', i);
        if (q < 0) throw new Error('unterminated quote');
        cell += text.slice(i, q);
        if (text[q + 1] === '"') {
          cell += '"';
          i = q + 2;
        } else {
          i = q + 1;
          break;
        }
      }
    } else {
      const m = /[,\r]/.exec(text.slice(i));
      const end = m ? i + m.index : text.length;
      cell = text.slice(i, end);
      if (cell.includes('"') || cell.includes('\n'))
        throw new Error(`bare quote or line break in an unquoted cell: ${cell}`);
      i = end;
    }
    row.push(cell);
    if (text[i] === ',') i++;
    else if (text.startsWith('\r\n', i)) {
      rows.push(row);
      row = [];
      i += 2;
    } else if (i < text.length) throw new Error(`unexpected ${JSON.stringify(text[i])} at ${i}`);
  }
  if (row.length) throw new Error('last record without CRLF');
  return rows;
}

async function someLog(): Promise<{ log: AuditLog; all: AuditEntry[] }> {
  const log = await h.open({ maxFileBytes: 5_000 });
  const all: AuditEntry[] = [];
  for (let i = 0; i < 150; i++) {
    const e = entry(i, {
      tool: i % 3 === 0 ? 'site.seo.audit' : 'site.pages.list',
      result: i % 4 === 0 ? 'error' : 'ok',
      staged_id: i % 5 === 0 ? `stg_${i}` : undefined,
    });
    if (e.staged_id === undefined) delete e.staged_id;
    all.push(e);
    log.append(e);
  }
  return { log, all };
}

describe('AuditLog export', () => {
  it('JSONL: one line per entry, newest first, equal to the query pages, filters applied', async () => {
    const { log } = await someLog();
    for (const q of [
      {},
      { tool: 'site.seo.audit' },
      { result: 'error' as const, from: entry(20).at, to: entry(120).at },
    ]) {
      const { count, text } = await exportToFile(log, q, 'jsonl');
      const lines = text
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as AuditEntry);
      const viaQuery = (await allPages(log, { ...q, limit: 17 })).flat();
      expect(lines).toEqual(viaQuery);
      expect(count).toBe(viaQuery.length);
      expect(count).toBeGreaterThan(0);
    }
  });

  it('CSV: header from AUDIT_CSV_COLUMNS, then one record per entry matching the query results', async () => {
    const { log } = await someLog();
    const { count, text } = await exportToFile(log, { tool: 'site.seo.audit' }, 'csv');
    const [header, ...rows] = parseCsv(text);
    expect(header).toEqual([...AUDIT_CSV_COLUMNS]);
    const viaQuery = (await log.query({ tool: 'site.seo.audit', limit: 1000 })).entries;
    expect(count).toBe(viaQuery.length);
    expect(rows).toEqual(
      viaQuery.map((e) => AUDIT_CSV_COLUMNS.map((c) => (e[c] === null || e[c] === undefined ? '' : String(e[c])))),
    );
  });

  it('CSV: quotes commas, quotes and line breaks, and defuses cells that a spreadsheet would run as formulas', async () => {
    const log = await h.open();
    const nasty: Array<[string, string]> = [
      ['a, b', 'a, b'],
      ['say "hi"', 'say "hi"'],
      ['line1\nline2\r\nline3', 'line1\nline2\r\nline3'],
      ['=HYPERLINK("http://evil.test","click")', `'=HYPERLINK("http://evil.test","click")`],
      ['+1+1', `'+1+1`],
      ['-2+3', `'-2+3`],
      ['@SUM(A1:A2)', `'@SUM(A1:A2)`],
      ['\t=1', `'\t=1`],
      ['plain =text', 'plain =text'],
      ['', ''],
    ];
    nasty.forEach(([target], i) => log.append(entry(i, { target, client: target === '' ? null : 'c' })));
    const { text } = await exportToFile(log, {}, 'csv');
    expect(text).toContain('"a, b"');
    expect(text).toContain('"say ""hi"""');
    expect(text).toContain(`"'=HYPERLINK(""http://evil.test"",""click"")"`);
    const rows = parseCsv(text).slice(1).reverse();
    const targetCol = AUDIT_CSV_COLUMNS.indexOf('target');
    expect(rows.map((r) => r[targetCol])).toEqual(nasty.map(([, want]) => want));
    expect(rows.every((r) => r.length === AUDIT_CSV_COLUMNS.length)).toBe(true);
  });

  it('exports nothing but the header from an empty log, and answers a bad format or filter clearly', async () => {
    const log = await h.open();
    const { count, text } = await exportToFile(log, {}, 'csv');
    expect(count).toBe(0);
    expect(text).toBe(`${AUDIT_CSV_COLUMNS.join(',')}\r\n`);
    const sink = new Writable({ write: (_c, _e, cb) => cb() });
    await expect(log.export({}, 'xml' as 'csv', sink)).rejects.toMatchObject({ code: 'invalid_value' });
    await expect(log.export({ from: 'soon' }, 'jsonl', sink)).rejects.toMatchObject({ code: 'invalid_value' });
  });

  it('stops with an error when the output fails instead of hanging', async () => {
    let writes = 0;
    const broken = new Writable({
      highWaterMark: 16,
      write: (_c, _e, cb) => {
        writes++;
        setImmediate(() => cb(new Error('disk full')));
      },
    });
    broken.on('error', () => undefined);
    const log = await h.open();
    for (let i = 0; i < 3000; i++) log.append(entry(i));
    await expect(log.export({}, 'jsonl', broken)).rejects.toThrow();
    expect(writes).toBeGreaterThan(0);
  });
});

describe('stored line format', () => {
  it('writes keys in AUDIT_CSV_COLUMNS order, which the readers’ substring pre-checks rely on', async () => {
    const { entryToJsonLine } = await import('../../../main/store/audit/export-format.ts');
    const line = entryToJsonLine({
      ...entry(1),
      client_source: 'request',
      staged_id: 'stg_1',
      principal: { kind: 'person', surface: 'cli', via: 'admin_key', session: null },
      args_shape: '{path:string}',
      binding: { args: 'a', preview: 'b', definition: null },
      reason: 'why',
    });
    expect(Object.keys(JSON.parse(line) as object)).toEqual([...AUDIT_CSV_COLUMNS]);
    // the optional fields are left out when absent (lines written before they existed read the same)
    expect(Object.keys(JSON.parse(entryToJsonLine(entry(1))) as object)).toEqual(
      AUDIT_CSV_COLUMNS.filter(
        (c) =>
          c !== 'staged_id' &&
          c !== 'client_source' &&
          c !== 'principal' &&
          c !== 'args_shape' &&
          c !== 'binding' &&
          c !== 'reason',
      ),
    );
  });
});
