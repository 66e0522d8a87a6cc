import { afterEach, describe, expect, it, vi } from 'vitest';
import type { OAuthStatus } from '../../main/contract/oauth-status.ts';
import type { Connection } from '../../main/cli/connect.ts';
import { logout } from '../../main/cli/oauth-commands.ts';

/** `gatehouse upstreams logout ID`: what it prints for each revocation outcome (main/cli/oauth-commands.ts); the service side is test/plugins/upstream/oauth-signout.test.ts. */
afterEach(() => vi.restoreAllMocks());

const answer = (revocation: OAuthStatus['revocation']): OAuthStatus => ({
  id: 'linear',
  state: 'sign_in_required',
  reason: 'signed out',
  issuer: 'https://as.example',
  resource: 'https://mcp.example/',
  scopes: null,
  expires_at: null,
  refreshable: false,
  registration: 'dynamic',
  authorization_url: null,
  ...(revocation ? { revocation } : {}),
});
const connection = (s: OAuthStatus) =>
  ({ mode: 'service', dispatch: async () => ({ ok: true, data: s }) }) as unknown as Connection;

async function run(s: OAuthStatus): Promise<{ stdout: string; stderr: string }> {
  const written = { stdout: '', stderr: '' };
  vi.spyOn(process.stdout, 'write').mockImplementation((t) => ((written.stdout += String(t)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((t) => ((written.stderr += String(t)), true));
  await logout(connection(s), 'linear', false);
  vi.restoreAllMocks();
  return written;
}

describe('upstreams logout output', () => {
  it('says what the authorization server was told; a failed revocation is a warning on stderr and no failure', async () => {
    expect(await run(answer({ outcome: 'revoked', warning: null }))).toMatchObject({
      stdout: expect.stringContaining('Signed out linear: the authorization server revoked its tokens'),
      stderr: '',
    });
    expect((await run(answer({ outcome: 'not_offered', warning: null }))).stdout).toContain(
      'offers no revocation: they stay valid there until they expire',
    );
    const failed = await run(
      answer({
        outcome: 'failed',
        warning:
          'the authorization server could not be told to revoke the tokens (HTTP 503: temporarily_unavailable); they are deleted here anyway',
      }),
    );
    expect(failed.stderr).toBe(
      'warning: the authorization server could not be told to revoke the tokens (HTTP 503: temporarily_unavailable); they are deleted here anyway\n',
    );
    expect(failed.stdout).toContain('Signed out linear: its tokens are deleted from the vault');
    expect((await run(answer({ outcome: 'not_signed_in', warning: null }))).stdout).toContain('it held no tokens');
  });
});
