import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditPage } from '../../main/contract/audit.ts';
import { startUpstreamWorld, TEST_UPSTREAM, textOf, type UpstreamWorld } from '../plugins/upstream/upstream-world.ts';

/**
 * A policy that keeps secrets away from upstream servers: a call whose
 * arguments hold a secret-looking value (context.secret_kinds not empty) to
 * an upstream's tool is refused before anything is sent, named by its
 * policy; the same tool without a secret, and a secret to a local tool, run.
 * A real licensed service, a real stdio upstream (the SDK fixture), the SDK client.
 */
let u: UpstreamWorld;
let client: Client;
let dir: string;
let journal: string;
const AWS_KEY = 'AKIAIOSFODNN7EXAMPLE';
const NO_SECRETS_UPSTREAM = `
@id("no-secrets-upstream")
forbid (principal, action, resource)
when { resource.plugin_kind == "upstream" && !context.secret_kinds.isEmpty() };`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gh-policy-up-'));
  journal = join(dir, 'journal.txt');
  await writeFile(journal, '');
  await writeFile(join(dir, 'control.json'), '{}');
  u = await startUpstreamWorld();
  await u.ok('POST', 'upstreams', { id: 't', transport: { kind: 'stdio', command: process.execPath, args: [TEST_UPSTREAM], env: [{ name: 'JOURNAL', value: journal }, { name: 'CONTROL_FILE', value: join(dir, 'control.json') }] } });
  const current = await u.ok<{ text: string }>('GET', 'policy');
  await u.ok('PUT', 'policy', { text: `${current.text}\n${NO_SECRETS_UPSTREAM}` });
  client = await u.mcp();
}, 120_000);
afterAll(async () => {
  await client?.close();
  await u?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('a policy refusing secrets sent to an upstream', () => {
  it('refuses the call with the policy id, audits it, and sends nothing', async () => {
    const r = (await client.callTool({ name: 't__lookup', arguments: { word: `key ${AWS_KEY}` } })) as { isError?: boolean };
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain("'no-secrets-upstream'");
    expect(textOf(r)).not.toContain(AWS_KEY);
    const w = (await client.callTool({ name: 't__append', arguments: { line: `-----BEGIN PRIVATE KEY-----\nMIIE` } })) as { isError?: boolean };
    expect(w.isError).toBe(true);
    expect(await readFile(journal, 'utf8')).toBe('');
    const page = await u.ok<AuditPage>('GET', 'audit?tool=t__lookup');
    expect(page.entries[0]).toMatchObject({ result: 'denied', error_code: 'policy_denied', policy: ['no-secrets-upstream'] });
    expect(JSON.stringify(page)).not.toContain(AWS_KEY);
  });

  it('lets the same tool run without a secret, and a secret-looking value go to a local tool', async () => {
    expect(textOf(await client.callTool({ name: 't__lookup', arguments: { word: 'hello' } }))).toBe('found hello');
    const local = (await client.callTool({ name: 'pages_search', arguments: { query: AWS_KEY } })) as { isError?: boolean };
    expect(local.isError).toBeFalsy();
  });
});
