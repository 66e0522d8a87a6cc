import type { BridgeOptions } from './args.ts';
import type { BridgeLogger } from './log.ts';
import { useSessionBus } from '../main/lib/session-bus.ts';

/**
 * The request headers the bridge adds to every HTTP request: the bearer token
 * (keychain or environment) and any --header flags with `${VAR}` expanded.
 * Every value is registered with the log redactor before it is used.
 */

export class CredentialError extends Error {
  override name = 'CredentialError';
}

export interface CredentialContext {
  env: Record<string, string | undefined>;
  log: BridgeLogger;
  /** Resolved lazily: only --token-keychain needs the data dir (for the file vault). */
  dataDir: () => string;
}

export async function resolveHeaders(opts: BridgeOptions, ctx: CredentialContext): Promise<Record<string, string>> {
  const headers: Record<string, string> = {};
  for (const h of opts.headers) {
    const value = expandVars(h.value, ctx.env, `--header ${h.name}`);
    if (/[\r\n\0]/.test(value))
      throw new CredentialError(`--header ${h.name}: the expanded value contains a line break`);
    ctx.log.redactor.add(value);
    headers[h.name] = value;
  }

  let token: string | undefined;
  if (opts.tokenEnv) {
    token = ctx.env[opts.tokenEnv]?.trim();
    if (!token)
      throw new CredentialError(
        `--token-env ${opts.tokenEnv}: the variable is not set or empty; set it in the client's "env" for this server`,
      );
  } else if (opts.tokenKeychain) {
    token = await readKeychain(opts, ctx);
  }
  if (token !== undefined) {
    ctx.log.redactor.add(token);
    if (/\s/.test(token))
      throw new CredentialError('the token contains whitespace; store the token itself, without "Bearer "');
    headers.Authorization = `Bearer ${token}`;
  }
  return headers;
}

async function readKeychain(opts: BridgeOptions, ctx: CredentialContext): Promise<string> {
  const account = opts.tokenKeychain!;
  // Loaded only here: keytar and the vault code cost start-up time every other bridge would pay.
  const { openVault, clientTokenLookup } = await import('../main/store/vault.ts');
  let secret: string | null = null;
  let where: string;
  const dataDir = ctx.dataDir();
  // A client that started us with a stripped environment (the Python SDK drops DBUS_SESSION_BUS_ADDRESS) still has a
  // session bus at its standard place: name it before the keychain (libsecret) first looks for it.
  if (opts.vault !== 'file') {
    const bus = useSessionBus(ctx.env);
    if (bus) ctx.log.debug('session bus', { found: bus, why: 'DBUS_SESSION_BUS_ADDRESS was not set' });
  }
  try {
    const vault = await openVault({ dataDir, backend: opts.vault, log: ctx.log });
    where =
      vault.backend === 'file'
        ? `the file vault of the data dir ${dataDir}`
        : `the ${vault.label} (not the file vault of the data dir ${dataDir}: add --vault file if the service keeps its secrets there)`;
    // `tokens create --keychain NAME` saves into the clients' namespace; older tokens sit under the bare name.
    for (const stored of clientTokenLookup(account)) {
      secret = await vault.get(stored);
      ctx.log.debug('token source', { vault: vault.label, account: stored, data_dir: dataDir, found: secret !== null });
      if (secret) break;
    }
  } catch (e) {
    throw new CredentialError(
      `--token-keychain ${account}: ${ctx.log.redactor.apply(e instanceof Error ? e.message : String(e))}`,
    );
  }
  const token = secret?.trim();
  if (!token) {
    // Name where it looked: a service with another data dir or vault keeps its tokens elsewhere.
    throw new CredentialError(
      `--token-keychain ${account}: no token is stored under that account in ${where}; create one with \`gatehouse tokens create --keychain ${account} --data-dir ${dataDir}\`, or pass the --data-dir and --vault the service uses`,
    );
  }
  return token;
}

/** `${VAR}` expands from the environment; an unset variable is an error rather than an empty credential. */
export function expandVars(value: string, env: Record<string, string | undefined>, what: string): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, name: string) => {
    const v = env[name];
    if (v === undefined || v === '')
      throw new CredentialError(`${what} refers to \${${name}}, which is not set in the environment`);
    return v;
  });
}
