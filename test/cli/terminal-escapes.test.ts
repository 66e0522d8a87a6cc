import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import type { StagedResponse } from '../../main/contract/staged.ts';
import { printable, safe, table } from '../../main/cli/output.ts';
import { connectClient, startTestService } from '../helpers/service.ts';
import { dirArgs, runCli } from './cli-harness.ts';

// Values from clients (tool names, page titles, client names) must
// not reach the admin's terminal raw. Every human-readable CLI output shows
// control and direction-changing characters as visible escapes.

vi.setConfig({ testTimeout: 180_000, hookTimeout: 120_000 });

// Clear the screen, set the window title, ring the bell, a C1 CSI, a right-to-left override.
// (No lone surrogate: the endpoints refuse those outright, test/rest/http-edge.test.ts.)
const HOSTILE_WIRE = 'Hi\u001b[2J\u001b]0;pwned\u0007\u009b31m\u202egnp.exe!';
// eslint-disable-next-line no-control-regex
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])/;

describe("the CLI's text helpers", () => {
  it('escape every interpolated value and every table cell, and nothing of ours', () => {
    expect(safe`title ${HOSTILE_WIRE} by ${'a\u0000b'}\n`).toBe(`title ${printable(HOSTILE_WIRE)} by a\\u{0000}b\n`);
    expect(printable(HOSTILE_WIRE)).not.toMatch(RAW);
    expect(printable('Café 日本語 👍🏽')).toBe('Café 日本語 👍🏽');
    expect(table([{ a: HOSTILE_WIRE, b: { nested: '\u001b' } }], ['a', 'b'])).not.toMatch(RAW);
  });
});

describe('CLI output with hostile client strings', () => {
  let svc: Awaited<ReturnType<typeof startTestService>>;
  let client: Client;
  let stagedId: string;

  beforeAll(async () => {
    svc = await startTestService();
    client = await connectClient(svc.mcpUrl, (await svc.createToken({ label: 'agent' })).token);
    const res = await client.callTool({ name: 'pages_update', arguments: { id: 1, title: HOSTILE_WIRE } });
    expect(res.isError, JSON.stringify(res.structuredContent)).toBeFalsy();
    stagedId = (res.structuredContent as StagedResponse).staged_id;
    await client.callTool({ name: `nope${HOSTILE_WIRE}`, arguments: {} }).catch(() => undefined);
    await svc.core.audit.flush();
  });
  afterAll(async () => {
    await client?.close();
    await svc?.cleanup();
  });

  it('staged list, staged show and audit list never print them raw', async () => {
    const runs = await Promise.all([
      runCli(['staged', 'list', ...dirArgs(svc.dataDir)]),
      runCli(['staged', 'show', stagedId, ...dirArgs(svc.dataDir)]),
      runCli(['audit', 'list', ...dirArgs(svc.dataDir)]),
    ]);
    for (const r of runs) {
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).not.toMatch(RAW);
    }
    expect(runs[0]!.stdout).toContain(stagedId);
    expect(runs[1]!.stdout).toContain('\\u{202E}gnp.exe');
    expect(runs[2]!.stdout).toContain('pages_update');
  });

  it('an error message quoting client input is escaped too', async () => {
    const r = await runCli(['staged', 'confirm', `stg_${HOSTILE_WIRE}`, ...dirArgs(svc.dataDir)]);
    expect(r.code).toBe(1);
    expect(r.stderr).not.toMatch(RAW);
    expect(r.stderr).toContain('\\u{001B}[2J');
  });
});
