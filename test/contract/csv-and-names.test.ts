import { describe, expect, it } from 'vitest';
import { RegisterBody } from '../../main/contract/cloud/sites.ts';
import { CloudConnectInput } from '../../main/contract/cloud-actions.ts';
import { csvCell, csvRow } from '../../main/contract/csv.ts';
import { nameProblem } from '../../main/contract/cloud/names.ts';
import { TokenCreateInput } from '../../main/contract/tokens.ts';

/**
 * The one CSV helper of the app and the cloud, and the one rule for names:
 * spreadsheets skip leading whitespace and read full-width = + - @ as
 * formulas; a name with a bidi override or a zero-width character shows a
 * person something other than what it is.
 */
describe('csvCell defuses formulas', () => {
  const defused = [
    '=1+1',
    '+1+1',
    '-2+3',
    '@SUM(A1)',
    ' =1+1',
    '   +1',
    '\u00a0=1+1',
    '\u3000=1+1',
    '\t=1',
    '\r=1',
    '\n=1',
    '\tplain',
    '\uff1d1+1',
    '\uff0b1',
    '\uff0d1',
    '\uff20SUM(A1)',
    ' \uff1d1+1',
    '\ufe661+1',
    '\u200b=1+1',
    '\ufeff=1',
    '\u202e=1',
  ];
  it.each(defused)('%j starts with a quote', (v) => {
    expect(csvCell(v).replace(/^"/, '')).toMatch(/^'/);
    expect(csvCell(v).replace(/^"|"$/g, '').slice(1)).toBe(v.replace(/"/g, '""'));
  });

  const kept = ['plain', 'a =1+1', 'x+1', 'mail@example.com', '1-2', '', 'é=1', '１+1', 'SUM(A1)'];
  it.each(kept)('%j is left as it is', (v) => {
    expect(csvCell(v)).toBe(v);
  });

  it('quotes as RFC 4180 says and leaves numbers alone', () => {
    expect(csvCell(' =a,"b"')).toBe(`"' =a,""b"""`);
    expect(csvCell(-5)).toBe('-5');
    expect(csvCell(null)).toBe('');
    expect(csvRow(['a', '\uff1dx', 3])).toBe(`a,'\uff1dx,3\r\n`);
  });
});

describe('names refuse bidi controls and zero-width characters', () => {
  const bad: Array<[string, string]> = [
    ['acme\u202etxt.exe', 'U+202E'],
    ['ac\u200bme', 'U+200B'],
    ['\u2066acme\u2069', 'U+2066'],
    ['acme\u200d', 'U+200D'],
    ['pay\u200dpal', 'U+200D'],
    ['\u200cacme', 'U+200C'],
    ['ac\ufeffme', 'U+FEFF'],
    ['acme\u061c', 'U+061C'],
    ['ac\u00adme', 'U+00AD'],
    ['line\nbreak', 'U+000A'],
    ['acme\u2028x', 'U+2028'],
  ];
  it.each(bad)('%j is refused, naming %s', (name, code) => {
    expect(nameProblem(name)).toContain(code);
    for (const r of [
      RegisterBody.safeParse({ url: 'https://a.example', environment: 'production', name }),
      CloudConnectInput.safeParse({ url: 'https://g.example', name }),
      TokenCreateInput.safeParse({ label: name }),
    ]) {
      expect(r.success).toBe(false);
      expect(r.error!.issues[0]!.message).toContain(code);
    }
  });

  const good = [
    'Acme Corp',
    'Café Müller',
    '東京 サイト',
    'שלום world',
    'مرحبا',
    'emoji 👩\u200d💻 team',
    'می\u200cخواهم',
    'क्\u200dष',
    'a-b_c.d (prod)',
  ];
  it.each(good)('%j is taken', (name) => {
    expect(nameProblem(name)).toBeNull();
    expect(RegisterBody.safeParse({ url: 'https://a.example', environment: 'staging', name }).success).toBe(true);
  });
});

describe("the audit CSV's binding column", () => {
  it('carries the version before and, for an applied upstream write, the version after', async () => {
    const { auditCsvValue } = await import('../../main/contract/audit.ts');
    const at = (binding: Record<string, unknown>) =>
      auditCsvValue({ binding } as unknown as Parameters<typeof auditCsvValue>[0], 'binding');
    expect(at({ args: 'a', preview: 'p', definition: null, target: 'old', target_after: 'new' })).toBe(
      'args=a preview=p definition=- target=old target_after=new',
    );
    expect(at({ args: 'a', preview: 'p', definition: 'd', target: 'old' })).toBe(
      'args=a preview=p definition=d target=old',
    );
  });
});
