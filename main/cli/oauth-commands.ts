import type { OAuthStatus } from '../contract/oauth-status.ts';
import { GatehouseError } from '../core/errors.ts';
import { openInBrowser } from '../plugins/upstream/oauth/open-url.ts';
import type { Connection } from './connect.ts';
import { out } from './args.ts';
import { safe, unwrap } from './output.ts';
import { instructionsLines, promptRows, toolRows } from './upstream-rows.ts';

/** One line about an OAuth upstream's sign-in, for `show`, `login` and `logout`. */
export function signInLine(s: OAuthStatus): string {
  const detail = [
    s.scopes ? `scopes ${s.scopes}` : null,
    s.expires_at ? `expires ${s.expires_at}` : null,
    s.refreshable ? 'refreshable' : null,
    s.issuer ? `issuer ${s.issuer}` : null,
    // "signed out (signed out)" says it once
    s.reason === s.state.replace(/_/g, ' ') ? null : s.reason,
  ]
    .filter(Boolean)
    .join('; ');
  return safe`  sign-in: ${s.state.replace(/_/g, ' ')}${detail ? ` (${detail})` : ''}`;
}

/**
 * `gatehouse upstreams login ID [--no-browser]`: starts (or joins) the
 * sign-in in the service, prints the authorization URL, opens it unless told
 * not to, and waits for the callback, which any browser on this machine can
 * deliver. The tokens stay in the service; this process never sees them.
 */
export async function login(c: Connection, id: string, o: { json: boolean; browser: boolean }): Promise<void> {
  let s = unwrap(await c.dispatch('upstreams.login', { id }));
  if (s.state === 'signing_in' && s.authorization_url) {
    // With --json the answer is the final status on stdout; the URL goes to stderr so a person (or a script) can still open it.
    (o.json ? process.stderr : process.stdout).write(
      `Open this URL in a browser on this machine to sign in ${id}:\n${s.authorization_url}\n`,
    );
    if (o.browser && !(await openInBrowser(s.authorization_url)))
      process.stderr.write('(no browser could be opened: open the URL yourself)\n');
    while (s.state === 'signing_in') s = unwrap(await c.dispatch('upstreams.oauth', { id, wait_ms: 25_000 }));
  }
  if (s.state !== 'signed_in')
    throw new GatehouseError('sign_in_required', `upstream '${id}' is not signed in: ${s.reason ?? s.state}`);
  const consented = await consentToFirstListing(c, id);
  out(o.json, s, () => [safe`Signed in ${id}.`, signInLine(s), ...consented].join('\n'));
}

/**
 * The first sign-in of an OAuth upstream is where its tools can first be
 * listed: the same consent as `upstreams add` (running it consents to the set
 * listed now, printed with class, state and hash; each definition pinned only
 * if it is still the one listed). Until then every tool and prompt waits as
 * new, offered to no client. A later sign-in consents to nothing: what changed
 * meanwhile waits for `upstreams review`. Answers the lines to print.
 */
async function consentToFirstListing(c: Connection, id: string): Promise<string[]> {
  const before = unwrap(await c.dispatch('upstreams.get', { id }));
  if (!before.awaiting_consent) return [];
  const t = unwrap(await c.dispatch('upstreams.test', { id }));
  if (!t.ok) {
    process.stderr.write(
      safe`warning: ${id}'s tools could not be listed (${t.error ?? 'no answer'}); once they are, they wait for: gatehouse upstreams review ${id}\n`,
    );
    return [];
  }
  const d = unwrap(await c.dispatch('upstreams.get', { id }));
  const tools = d.tool_list.filter((x) => x.pending?.reason === 'new' && !x.removed);
  const prompts = d.prompt_list.filter((x) => x.pending?.reason === 'new' && !x.removed);
  // what it tells the model is consented to with its tools, as `upstreams add` does
  const instructions = d.instructions?.pending?.reason === 'new' && !d.instructions.removed ? d.instructions : null;
  const r = unwrap(
    await c.dispatch('upstreams.review', {
      id,
      consent: tools.map((x) => ({ tool: x.tool, hash: x.pending!.hash })),
      prompt_consent: prompts.map((x) => ({ prompt: x.prompt, hash: x.pending!.hash })),
      ...(instructions ? { instructions_consent: { hash: instructions.pending!.hash } } : {}),
    }),
  );
  const pinned = unwrap(await c.dispatch('upstreams.prompts', { id }));
  const after = instructions ? unwrap(await c.dispatch('upstreams.get', { id })).instructions : null;
  return [
    safe`Its tools and prompts are pinned as listed now (changed or new ones wait for: gatehouse upstreams review ${id}).`,
    toolRows(r),
    ...(pinned.length ? [promptRows(pinned)] : []),
    ...(after ? instructionsLines(after) : []),
  ];
}

const REVOCATION_TEXT: Record<NonNullable<OAuthStatus['revocation']>['outcome'], string> = {
  revoked: 'the authorization server revoked its tokens, and they are deleted from the vault',
  not_offered:
    'its tokens are deleted from the vault (the authorization server offers no revocation: they stay valid there until they expire)',
  failed: 'its tokens are deleted from the vault',
  not_signed_in: 'it held no tokens',
};

export async function logout(c: Connection, id: string, json: boolean): Promise<void> {
  const s = unwrap(await c.dispatch('upstreams.logout', { id }));
  // A failed revocation never fails the sign-out: it is said on stderr, and the exit status stays 0.
  if (s.revocation?.warning) process.stderr.write(safe`warning: ${s.revocation.warning}\n`);
  const what = REVOCATION_TEXT[s.revocation?.outcome ?? 'failed'];
  out(json, s, () =>
    [safe`Signed out ${id}: ${what} (the registration with the authorization server stays).`, signInLine(s)].join('\n'),
  );
}
