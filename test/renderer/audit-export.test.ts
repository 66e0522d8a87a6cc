import { describe, expect, it } from 'vitest';
import { AUDIT_CSV_COLUMNS } from '../../main/contract/index.ts';
import { auditToCsv, auditToJsonl, collectAudit } from '../../renderer/screens/activity/audit-export.ts';
import { csvCell } from '../../main/contract/csv.ts';
import { matches, toQuery, EMPTY_FILTERS } from '../../renderer/screens/activity/filters.ts';
import { FakeApi, makeAudit } from './fake-api.ts';

describe('audit export built in the console', () => {
  it('quotes CSV cells and defuses spreadsheet formulas', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"\n')).toBe('"say ""hi""\n"');
    expect(csvCell('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csvCell(null)).toBe('');
    expect(csvCell(false)).toBe('false');
  });

  it('writes the contract columns and one JSON object per line', () => {
    const entries = [makeAudit(1), makeAudit(2, { target: 'a,b' })];
    const csv = auditToCsv(entries).split('\r\n');
    expect(csv[0]).toBe(AUDIT_CSV_COLUMNS.join(','));
    expect(csv[2]).toContain('"a,b"');
    const jsonl = auditToJsonl(entries)
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(jsonl).toEqual(entries);
  });

  it('pages through the whole query', async () => {
    const fake = new FakeApi({ audit: Array.from({ length: 2500 }, (_, i) => makeAudit(i)) });
    const all = await collectAudit(fake.api, {});
    expect(all.ok && all.entries.length).toBe(2500);
    expect(fake.callsTo('audit.query')).toHaveLength(3);
    fake.fail('audit.query', 'internal_error', 'nope');
    expect(await collectAudit(fake.api, {})).toEqual({ ok: false, message: 'nope' });
  });

  it('turns the filter form into an AuditQuery and matches live entries the same way', () => {
    const q = toQuery({ ...EMPTY_FILTERS, tool: ' pages_get ', result: 'ok', from: '2026-11-22T08:00' });
    expect(q.tool).toBe('pages_get');
    expect(q.from).toBe(new Date('2026-11-22T08:00').toISOString());
    expect(matches(makeAudit(1, { at: new Date(Date.parse(q.from!) + 1000).toISOString() }), q)).toBe(true);
    expect(matches(makeAudit(1, { result: 'error' }), q)).toBe(false);
    expect(toQuery(EMPTY_FILTERS)).toEqual({});
  });
});
