import { describe, expect, it } from 'vitest';
import { UpstreamsData } from '../../../main/plugins/upstream/upstream-data.ts';

/** An HTTP upstream as upstreams.json keeps it, speaking `era`. */
const stored = (era: unknown) => ({
  version: 1,
  upstreams: [
    {
      id: 'docs',
      enabled: true,
      created: '2026-11-01T00:00:00.000Z',
      transport: { kind: 'http', url: 'https://docs.example.com/mcp', header_names: [], token_keychain: null },
      secrets_account: null,
      timeout_ms: 30_000,
      era,
      tools: [],
    },
  ],
});

describe("an upstream record's protocol era", () => {
  it('reads a record written before the eras were named by year: legacy is 2025, modern is 2026', () => {
    expect(UpstreamsData.parse(stored('legacy')).upstreams[0]!.era).toBe('2025');
    expect(UpstreamsData.parse(stored('modern')).upstreams[0]!.era).toBe('2026');
  });

  it('reads the names it writes now, and none as null', () => {
    expect(UpstreamsData.parse(stored('2025')).upstreams[0]!.era).toBe('2025');
    expect(UpstreamsData.parse(stored('2026')).upstreams[0]!.era).toBe('2026');
    expect(UpstreamsData.parse(stored(null)).upstreams[0]!.era).toBeNull();
    expect(UpstreamsData.parse(stored(undefined)).upstreams[0]!.era).toBeNull();
  });

  it('still refuses an era it does not know', () => {
    expect(UpstreamsData.safeParse(stored('2024')).success).toBe(false);
  });
});
