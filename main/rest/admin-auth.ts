import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Vault } from '../core/ports/ports.ts';
import type { Tokens } from '../core/identity/tokens.ts';
import type { ConsoleSessions } from '../core/identity/console-sessions.ts';
import { SESSION_TTL_MS } from '../core/identity/console-sessions.ts';
import { randomBase64Url } from '../lib/ids.ts';
import { PRINCIPALS, consoleSession, tokenPrincipal, type Principal } from '../contract/principal.ts';
import { ADMIN_KEY_ACCOUNT } from '../store/vault-account.ts';
import { parseCookies } from '../lib/http/cookies.ts';

export const SESSION_COOKIE = 'gatehouse_session';
export const SESSION_MAX_AGE_S = SESSION_TTL_MS / 1000;

const sha = (s: string) => createHash('sha256').update(s).digest();
const sameSecret = (a: string, b: string) => timingSafeEqual(sha(a), sha(b));

/**
 * Who is calling the admin API and the local REST, as a Principal: a console
 * session (from a one-time login link), the service's admin key (kept in the
 * vault, read by the CLI of the same OS user), or an MCP client token. A
 * token is only named here; what it may do is decided per action by the
 * core's invoke (a token opens no admin action and no state change).
 */
export class AdminAuth {
  private constructor(
    private readonly adminKey: string,
    private readonly tokens: Tokens,
    private readonly sessions: ConsoleSessions,
  ) {}

  /** Loads the admin key from the vault, creating it on first run. */
  static async open(vault: Vault, tokens: Tokens, sessions: ConsoleSessions): Promise<AdminAuth> {
    let key = await vault.get(ADMIN_KEY_ACCOUNT);
    if (!key) {
      key = `gha_${randomBase64Url(32)}`;
      await vault.set(ADMIN_KEY_ACCOUNT, key);
    }
    return new AdminAuth(key, tokens, sessions);
  }

  /** A key for approval links (main/core/staging/approval-links.ts), derived from the admin key: the same across restarts, useless as the key itself. */
  approvalLinkKey(): Buffer {
    return createHmac('sha256', this.adminKey).update('gatehouse approval links v1').digest();
  }

  /** A code for the one-time console login link. */
  issueLoginCode(): string {
    return this.sessions.issueLoginCode();
  }

  /** Spends a login code (once) and returns a new session id. */
  redeem(code: string): string | null {
    return this.sessions.redeem(code)?.sid ?? null;
  }

  principal(req: IncomingMessage): Principal | null {
    const session = this.sessions.check(parseCookies(req.headers.cookie)[SESSION_COOKIE]);
    if (session) return consoleSession(session);
    const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (!m) return null;
    if (sameSecret(m[1]!, this.adminKey)) return PRINCIPALS.cliViaService;
    const v = this.tokens.verify(m[1]!);
    return v ? tokenPrincipal(v.record, v.user, 'rest') : null;
  }
}
