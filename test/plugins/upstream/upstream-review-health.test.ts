import { writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HealthReport } from '../../../main/contract/health.ts';
import type { UpstreamToolView } from '../../../main/contract/upstreams.ts';
import { consentTo, startFixtureWorld, until, type FixtureWorld } from './upstream-world.ts';

/**
 * A tool held for review reaches the client as `unknown tool`, so
 * the health report (the Overview, the tray, `gatehouse status`) must not
 * say everything is fine while one waits.
 */
let f: FixtureWorld;
beforeAll(async () => {
  f = await startFixtureWorld({ prefix: 'gh-review-health-', id: 't', control: true });
}, 120_000);
afterAll(() => f?.stop());

const health = () => f.u.ok<HealthReport>('GET', 'health');
const review = async () => (await health()).warnings.find((w) => w.code === 'definitions_review');

describe('definitions held for review in the health report', () => {
  it('none at first; a changed definition is a warning naming the count and the server, gone once approved', async () => {
    expect(await review()).toBeUndefined();
    await writeFile(f.control, JSON.stringify({ description: 'Looks a word up, and now also something else.' }));
    await until(
      async () =>
        (await f.u.ok<UpstreamToolView[]>('GET', 'upstreams/t/tools')).find((t) => t.tool === 'lookup')?.state ===
        'quarantined',
      10_000,
      'lookup quarantined',
    );
    // what the client meets meanwhile
    await expect(f.client.callTool({ name: 't__lookup', arguments: { word: 'x' } })).rejects.toThrow(/unknown tool/i);
    const w = await review();
    expect(w?.message).toMatch(/^1 definition waits for review \(t: 1 tool\)/);
    expect(w?.message).toContain('gatehouse upstreams review t');
    await f.u.ok('POST', 'upstreams/t/review', await consentTo(f.u, 't', { tools: ['lookup'] }));
    expect(await review()).toBeUndefined();
  });
});
