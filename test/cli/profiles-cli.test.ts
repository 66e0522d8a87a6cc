import { describe, expect, it } from 'vitest';
import type { ProfileView } from '../../main/contract/profiles.ts';
import type { TokenView } from '../../main/contract/tokens.ts';
import { connectClient } from '../helpers/service.ts';
import { dirArgs, here, sharedDataDir } from './cli-harness.ts';

/** `gatehouse profiles ...` and `tokens create --profile` as scripts run them: on the data dir, then through a running service. */
const data = sharedDataDir();
// The commands run in this process (cli-harness.ts, runCliHere): what they do and answer, without a Node start each.
const cliJson = <T = unknown>(args: string[]) => here.cliJson<T>(data.dir, args);
const cliJsonError = (args: string[]) => here.cliJsonError(data.dir, args);
const onDir = (args: string[]) => here.runCli([...args, ...dirArgs(data.dir)]);

describe('gatehouse profiles on the data dir', () => {
  it('create, bind a token, list and show; removal refused while the token uses it', async () => {
    const created = await onDir(['profiles', 'create', 'readers', '--tools', 'discover_tools,pages_list']);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toContain('tools: discover_tools, pages_list');
    const token = await cliJson<{ record: TokenView }>([
      'tokens',
      'create',
      '--label',
      'reader bot',
      '--profile',
      'readers',
    ]);
    expect(token.record.scope).toEqual({ read_only: false, profile: 'readers' });
    const rows = await cliJson<TokenView[]>(['tokens', 'list']);
    expect(rows.find((t) => t.id === token.record.id)?.tool_count).toBe(2);
    expect((await onDir(['tokens', 'list'])).stdout).toMatch(/profile=readers\s+2\s/);
    expect(await cliJson<ProfileView>(['profiles', 'show', 'readers'])).toMatchObject({
      tools: ['discover_tools', 'pages_list'],
      upstreams: [],
      tokens: [{ id: token.record.id, label: 'reader bot' }],
    });
    const refused = await cliJsonError(['profiles', 'remove', 'readers']);
    expect(refused).toMatchObject({ exit: 1, code: 'conflict' });
    expect(refused.message).toContain(token.record.id);
    expect((await cliJson<ProfileView[]>(['profiles', 'list'])).map((p) => p.name)).toEqual(['readers']);
  });

  it('bad names and bad usage: a clear error, nothing written', async () => {
    expect((await cliJsonError(['profiles', 'create', '__proto__', '--tools', 'pages_list'])).code).toBe(
      'invalid_value',
    );
    expect((await cliJsonError(['profiles', 'create', 'x'.repeat(300), '--tools', 'pages_list'])).code).toBe(
      'invalid_value',
    );
    const ctl = await onDir(['profiles', 'create', 'a\u001b[31mb', '--tools', 'pages_list']);
    expect(ctl.code).toBe(1);
    expect(ctl.stderr).not.toContain('\u001b');
    expect((await cliJsonError(['profiles', 'create', 'nope', '--tools', 'no_such_tool'])).code).toBe('invalid_value');
    expect((await cliJsonError(['tokens', 'create', '--label', 'x', '--profile', 'missing'])).code).toBe('not_found');
    expect((await onDir(['profiles', 'create', 'empty'])).code).toBe(2);
    expect((await onDir(['profiles', 'show'])).code).toBe(2);
    expect((await onDir(['profiles', 'rename', 'readers'])).code).toBe(2);
    expect((await cliJson<ProfileView[]>(['profiles', 'list'])).map((p) => p.name)).toEqual(['readers']);
  });
});

describe('gatehouse profiles through a running service', () => {
  it('a profile created through the service binds a new token at once; two tokens, two tool lists; remove after revoke', async () => {
    const served = await data.serve();
    const site = await onDir(['profiles', 'create', 'site-only', '--upstreams', 'site', '--json']);
    expect(site.code, site.stderr).toBe(0);
    const siteToken = await cliJson<{ token: string; record: TokenView }>([
      'tokens',
      'create',
      '--label',
      'site bot',
      '--profile',
      'site-only',
    ]);
    const readerToken = await cliJson<{ token: string }>([
      'tokens',
      'create',
      '--label',
      'reader two',
      '--profile',
      'readers',
    ]);
    const siteClient = await connectClient(served.info.mcp_url, siteToken.token);
    const readerClient = await connectClient(served.info.mcp_url, readerToken.token);
    try {
      const siteTools = (await siteClient.listTools()).tools.map((t) => t.name);
      expect(siteTools).toContain('pages_list');
      expect(siteTools).not.toContain('discover_tools');
      expect((await readerClient.listTools()).tools.map((t) => t.name).sort()).toEqual([
        'discover_tools',
        'pages_list',
      ]);
      const rows = await cliJson<TokenView[]>(['tokens', 'list']);
      expect(rows.find((t) => t.id === siteToken.record.id)?.tool_count).toBe(siteTools.length);
      expect((await cliJsonError(['profiles', 'remove', 'site-only'])).code).toBe('conflict');
      await cliJson(['tokens', 'revoke', siteToken.record.id]);
      expect(await cliJson(['profiles', 'remove', 'site-only'])).toEqual({ name: 'site-only' });
      expect((await cliJson<ProfileView[]>(['profiles', 'list'])).map((p) => p.name)).toEqual(['readers']);
    } finally {
      await siteClient.close();
      await readerClient.close();
    }
  });
});
