import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UpstreamView } from '../../../main/contract/upstreams.ts';
import { checkListing, LISTING_LIMITS } from '../../../main/plugins/upstream/listing-bounds.ts';
import { REPO, startUpstreamWorld, type UpstreamWorld } from './upstream-world.ts';

/** What one upstream may list is bounded (docs/upstreams.md, "Bounds"): past a bound the listing is refused whole. */
const def = (name: string, description = 'x') => ({ name, description, inputSchema: { type: 'object' } });

describe('checkListing', () => {
  it('takes a listing within the bounds and refuses one past any of them, naming it', () => {
    expect(() => checkListing('a', [def('one'), def('two')])).not.toThrow();
    const many = Array.from({ length: LISTING_LIMITS.tools + 1 }, (_, i) => def(`t${i}`));
    expect(() => checkListing('a', many)).toThrow(
      /^upstream 'a' lists 2,001 tools, more than the 2,000 one upstream may list/,
    );
    expect(() => checkListing('a', [def('huge', 'y'.repeat(LISTING_LIMITS.definitionBytes))])).toThrow(
      /a tool \('huge'\) whose definition takes 257 KiB, more than 256 KiB/,
    );
    const wide = Array.from({ length: 80 }, (_, i) => def(`w${i}`, 'z'.repeat(250 * 1024)));
    expect(() => checkListing('a', wide)).toThrow(/tool definitions of [\d,]+ KiB in all, more than 16,384 KiB/);
  });
});

describe('an upstream that lists more than the bound', () => {
  let u: UpstreamWorld;
  beforeAll(async () => {
    u = await startUpstreamWorld();
  }, 120_000);
  afterAll(() => u?.stop());

  it('is refused at add with what is wrong, and nothing is stored', async () => {
    const r = await u.w.admin('POST', 'upstreams', {
      id: 'many',
      transport: {
        kind: 'stdio',
        command: process.execPath,
        args: [`${REPO}test/fixtures/upstream/many-tools-upstream.mjs`],
        env: [{ name: 'TOOL_COUNT', value: String(LISTING_LIMITS.tools + 1) }],
      },
    });
    expect(r.status).not.toBe(200);
    expect(JSON.stringify(r.body)).toContain(
      "upstream 'many' lists 2,001 tools, more than the 2,000 one upstream may list",
    );
    expect((await u.ok<UpstreamView[]>('GET', 'upstreams')).map((x) => x.id)).not.toContain('many');
  }, 60_000);
});
