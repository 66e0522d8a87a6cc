import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { baselineEntries, evaluate, REQUIRED } from './check-results.ts';

/** The second opinion scripts/conformance.sh takes on each suite run: what it lets through and what it refuses. */
const ok = (id: string) => ({ id, status: 'SUCCESS' });
const failed = (id: string, status = 'FAILURE') => ({ id, status, errorMessage: `${id} failed` });

describe('the baselines', () => {
  it('parse into whole-scenario and scenario:check entries, and name no required scenario as a whole', () => {
    for (const [file, step] of [
      ['test/conformance/expected-failures.yml', 'stable'],
      ['test/conformance/expected-failures-2026.yml', 'next'],
    ] as const) {
      const entries = baselineEntries(readFileSync(file, 'utf8'));
      expect(entries.length, file).toBeGreaterThan(10);
      const whole = entries.filter((e) => !e.check).map((e) => e.scenario);
      for (const name of REQUIRED[step]) expect(whole, `${file}: ${name}`).not.toContain(name);
    }
    const next = baselineEntries(readFileSync('test/conformance/expected-failures-2026.yml', 'utf8'));
    expect(next).toContainEqual({
      scenario: 'server-stateless',
      check: 'sep-2575-server-no-log-without-loglevel',
    });
  });
});

describe('docs/conformance.md', () => {
  it("lists every baseline entry in its step's table, with the reason", () => {
    const doc = readFileSync('docs/conformance.md', 'utf8');
    const stable = doc.slice(doc.indexOf('### Stable'), doc.indexOf('### Next'));
    const next = doc.slice(doc.indexOf('### Next'));
    for (const [file, table] of [
      ['test/conformance/expected-failures.yml', stable],
      ['test/conformance/expected-failures-2026.yml', next],
    ] as const) {
      for (const e of baselineEntries(readFileSync(file, 'utf8'))) {
        const row = table.split('\n').find((l) => l.startsWith(`| \`${e.scenario}\` |`));
        expect(row, `${file}: ${e.scenario}`).toBeDefined();
        expect(row, `${file}: ${e.scenario}`).toMatch(e.check ? `\`${e.check}\`` : /\| expected failure \| \S/);
      }
    }
  });
});

describe('docs/conformance.md: the OAuth client scenarios', () => {
  it('lists every entry of the OAuth client baseline as an expected failure with its reason', () => {
    const doc = readFileSync('docs/conformance.md', 'utf8');
    const section = doc.slice(doc.indexOf('## Gatehouse as an OAuth client'), doc.indexOf('## Origin'));
    const yaml = readFileSync('test/conformance/expected-failures-oauth-client.yml', 'utf8');
    const entries = [...yaml.matchAll(/^\s+-\s+([\w./-]+)\s*$/gm)].map((m) => m[1]!);
    expect(entries.length).toBeGreaterThan(0);
    for (const scenario of entries) {
      const row = section.split('\n').find((l) => l.startsWith(`| \`${scenario}\` |`));
      expect(row, scenario).toMatch(/\| expected failure \| \S/);
    }
  });
});

describe('evaluate', () => {
  const required = ['server-stateless'];

  it('passes a required scenario whose only failing checks are listed one by one', () => {
    const results = new Map([['server-stateless', [ok('a'), failed('fixture'), failed('should', 'WARNING')]]]);
    const { problems, lines } = evaluate(
      results,
      [
        { scenario: 'server-stateless', check: 'fixture' },
        { scenario: 'server-stateless', check: 'should' },
      ],
      required,
    );
    expect(problems).toEqual([]);
    expect(lines[0]).toMatch(/pass, 2 listed check\(s\) fail\s+required\s+server-stateless/);
  });

  it('refuses an unlisted failing check (a WARNING too), a required scenario listed whole, and one with no success', () => {
    const results = new Map([['server-stateless', [ok('a'), failed('new'), failed('warned', 'WARNING')]]]);
    expect(evaluate(results, [], required).problems).toEqual([
      'server-stateless: new FAILURE: new failed',
      'server-stateless: warned WARNING: warned failed',
    ]);
    expect(evaluate(results, [{ scenario: 'server-stateless' }], required).problems[0]).toMatch(
      /listed in the baseline as a whole/,
    );
    const infoOnly = new Map([['server-stateless', [{ id: 'i', status: 'INFO' }]]]);
    expect(evaluate(infoOnly, [], required).problems).toEqual(['server-stateless had no check that succeeded']);
  });

  it('refuses a stale check entry and an entry naming a scenario that did not run', () => {
    const results = new Map([['server-stateless', [ok('a'), ok('fixed')]]]);
    expect(
      evaluate(results, [{ scenario: 'server-stateless', check: 'fixed' }, { scenario: 'no-such-scenario' }], required)
        .problems,
    ).toEqual([
      'baseline entry server-stateless:fixed names no failing check (fixed? remove it)',
      'baseline entry no-such-scenario names no scenario that ran',
    ]);
  });

  it('a required scenario that did not run is a problem', () => {
    expect(evaluate(new Map(), [], required).problems).toEqual(['server-stateless is required but did not run']);
  });
});
