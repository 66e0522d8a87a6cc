import { readFile } from 'node:fs/promises';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditPage } from '../../main/contract/audit.ts';
import {
  startFixtureWorld,
  textOf,
  type FixtureWorld,
  type UpstreamWorld,
} from '../plugins/upstream/upstream-world.ts';

/**
 * A policy that keeps secrets away from upstream servers: a call whose
 * arguments hold a secret-looking value (context.secret_kinds not empty) to
 * an upstream's tool is refused before anything is sent, named by its
 * policy; the same tool without a secret, and a secret to a local tool, run.
 * A real licensed service, a real stdio upstream (the SDK fixture), the SDK client.
 */
let f: FixtureWorld;
let u: UpstreamWorld;
let client: Client;
let journal: string;
const AWS_KEY = 'AKIAIOSFODNN7EXAMPLE';
const NO_SECRETS_UPSTREAM = `
@id("no-secrets-upstream")
forbid (principal, action, resource)
when { resource.plugin_kind == "upstream" && !context.secret_kinds.isEmpty() };`;

beforeAll(async () => {
  f = await startFixtureWorld({ prefix: 'gh-policy-up-', id: 't', control: true });
  ({ u, client, journal } = f);
  const current = await u.ok<{ text: string }>('GET', 'policy');
  await u.ok('PUT', 'policy', { text: `${current.text}\n${NO_SECRETS_UPSTREAM}` });
}, 120_000);
afterAll(() => f?.stop());

describe('a policy refusing secrets sent to an upstream', () => {
  it('refuses the call with the policy id, audits it, and sends nothing', async () => {
    const r = (await client.callTool({ name: 't__lookup', arguments: { word: `key ${AWS_KEY}` } })) as {
      isError?: boolean;
    };
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain("'no-secrets-upstream'");
    expect(textOf(r)).not.toContain(AWS_KEY);
    const w = (await client.callTool({
      name: 't__append',
      arguments: { line: `-----BEGIN PRIVATE KEY-----\nMIIE` },
    })) as { isError?: boolean };
    expect(w.isError).toBe(true);
    expect(await readFile(journal, 'utf8')).toBe('');
    const page = await u.ok<AuditPage>('GET', 'audit?tool=t__lookup');
    expect(page.entries[0]).toMatchObject({
      result: 'denied',
      error_code: 'policy_denied',
      policy: ['no-secrets-upstream'],
    });
    expect(JSON.stringify(page)).not.toContain(AWS_KEY);
  });

  it('lets the same tool run without a secret, and a secret-looking value go to a local tool', async () => {
    expect(textOf(await client.callTool({ name: 't__lookup', arguments: { word: 'hello' } }))).toBe('found hello');
    const local = (await client.callTool({ name: 'pages_search', arguments: { query: AWS_KEY } })) as {
      isError?: boolean;
    };
    expect(local.isError).toBeFalsy();
  });
});
