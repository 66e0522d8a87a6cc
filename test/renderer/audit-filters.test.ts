import { describe, expect, it } from 'vitest';
import { csvCell } from '../../main/contract/csv.ts';
import { matches, toQuery, EMPTY_FILTERS } from '../../renderer/screens/activity/filters.ts';
import { makeAudit } from './fake-api.ts';

describe('the audit filters and CSV cells the console shares with the service', () => {
  it('quotes CSV cells and defuses spreadsheet formulas', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"\n')).toBe('"say ""hi""\n"');
    expect(csvCell('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csvCell(null)).toBe('');
    expect(csvCell(false)).toBe('false');
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
