import { parseArgs } from 'node:util';
import { DEFAULT_SERVER_NAME, MCP_CLIENTS, type McpClient } from '../main/contract/client-config.ts';
import type { VaultChoice } from '../main/store/vault.ts';
import { LOG_LEVELS, type LogLevel } from './log.ts';

/**
 * The command line. Everything is checked here, before any I/O, so a bad flag
 * ends with exit 2 and one usage line instead of a half-started bridge.
 */

const VAULT_CHOICES: readonly VaultChoice[] = ['auto', 'keychain', 'file'];

export const CLIENTS = MCP_CLIENTS;
export type ClientName = McpClient;

export interface HeaderFlag {
  name: string;
  /** As given; `${VAR}` is expanded when the bridge starts, so config files keep the reference. */
  value: string;
}

export interface BridgeOptions {
  url?: string;
  /** a remote MCP server reached through the Gatehouse service (remote-target.ts), not straight */
  remote?: string;
  dataDir?: string;
  tokenKeychain?: string;
  tokenEnv?: string;
  headers: HeaderFlag[];
  connectTimeoutMs: number;
  logLevel: LogLevel;
  logFile?: string;
  vault: VaultChoice;
}

export type Command =
  | { kind: 'run'; opts: BridgeOptions }
  | { kind: 'help' }
  | { kind: 'version' }
  | {
      kind: 'config';
      client: ClientName;
      write: boolean;
      name: string;
      configFile?: string;
      bridgeArgs: string[];
      opts: BridgeOptions;
    };

export class UsageError extends Error {
  override name = 'UsageError';
}

export const DEFAULT_CONNECT_TIMEOUT_S = 30;

// Transport-owned headers: a user value would break the protocol or the session.
const RESERVED_HEADERS = new Set([
  'content-type',
  'content-length',
  'accept',
  'host',
  'connection',
  'transfer-encoding',
  'mcp-session-id',
  'mcp-protocol-version',
  'mcp-method',
  'mcp-name',
  'last-event-id',
]);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const BRIDGE_OPTIONS = {
  url: { type: 'string' },
  remote: { type: 'string' },
  'data-dir': { type: 'string' },
  'token-keychain': { type: 'string' },
  'token-env': { type: 'string' },
  header: { type: 'string', multiple: true },
  'connect-timeout': { type: 'string' },
  'log-level': { type: 'string' },
  'log-file': { type: 'string' },
  vault: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const;

const CONFIG_OPTIONS = {
  ...BRIDGE_OPTIONS,
  client: { type: 'string' },
  write: { type: 'boolean' },
  name: { type: 'string' },
  'config-file': { type: 'string' },
} as const;

/**
 * Flags of the run command that `config` copies into the client's launch line
 * as given. The data dir, the log file and the token flags are written by the
 * config command itself (absolute paths, the data dir from the environment,
 * the entry's `env` or `inputs` for --token-env).
 */
// --vault travels with the token source (client-config's tokenArgs), as in the console's snippets.
const PASSED_THROUGH = ['url', 'remote', 'header', 'connect-timeout', 'log-level'] as const;

export function parseCommand(argv: string[]): Command {
  if (argv[0] === 'config') return parseConfig(argv.slice(1));
  const values = parse(argv, BRIDGE_OPTIONS);
  if (values.help) return { kind: 'help' };
  if (values.version) return { kind: 'version' };
  return { kind: 'run', opts: bridgeOptions(values) };
}

function parseConfig(argv: string[]): Command {
  const values = parse(argv, CONFIG_OPTIONS);
  if (values.help) return { kind: 'help' };
  const client = values.client;
  if (!client) throw new UsageError(`config needs --client (${CLIENTS.join('|')})`);
  if (!(CLIENTS as readonly string[]).includes(client))
    throw new UsageError(`unknown --client "${client}": use one of ${CLIENTS.join(', ')}`);
  const name =
    values.name ?? (typeof values.remote === 'string' ? remoteServerName(values.remote) : DEFAULT_SERVER_NAME);
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(name)) {
    throw new UsageError(
      `--name "${name}" is not usable as a server name: letters, digits, "_", "." and "-", at most 64`,
    );
  }
  const opts = bridgeOptions(values);
  const bridgeArgs: string[] = [];
  for (const key of PASSED_THROUGH) {
    const v = values[key];
    if (v === undefined) continue;
    for (const item of Array.isArray(v) ? v : [v]) bridgeArgs.push(`--${key}`, String(item));
  }
  return {
    kind: 'config',
    client: client as ClientName,
    write: values.write === true,
    name,
    configFile: values['config-file'],
    bridgeArgs,
    opts,
  };
}

type Values = { [k: string]: string | boolean | string[] | undefined };

function parse<T extends Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }>>(
  argv: string[],
  options: T,
) {
  let result;
  try {
    result = parseArgs({ args: argv, options, strict: true, allowPositionals: true });
  } catch (e) {
    // node's messages name the flag ("Unknown option '--x'"); drop its hint about "--" which does not apply here.
    const msg = e instanceof Error ? e.message.split('. To specify')[0]! : String(e);
    throw new UsageError(msg);
  }
  if (result.positionals.length > 0) throw new UsageError(`unexpected argument "${result.positionals[0]}"`);
  return result.values as Values & {
    [K in keyof T]?: T[K]['multiple'] extends true ? string[] : T[K]['type'] extends 'boolean' ? boolean : string;
  };
}

function bridgeOptions(values: Values): BridgeOptions {
  const str = (k: string) => {
    const v = values[k];
    if (typeof v === 'string' && v.trim() === '') throw new UsageError(`--${k} needs a value`);
    return typeof v === 'string' ? v : undefined;
  };
  const url = str('url');
  if (url !== undefined) checkUrl(url, '--url');
  const remote = str('remote');
  if (remote !== undefined) checkUrl(remote, '--remote');

  const tokenKeychain = str('token-keychain');
  const tokenEnv = str('token-env');
  if (tokenKeychain && tokenEnv) throw new UsageError('use either --token-keychain or --token-env, not both');
  if (tokenEnv !== undefined && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(tokenEnv))
    throw new UsageError(`--token-env "${tokenEnv}" is not an environment variable name`);

  const headers = ((values.header as string[] | undefined) ?? []).map(parseHeader);
  if (remote !== undefined) checkRemote({ url, tokenKeychain, tokenEnv, headers });
  if ((tokenKeychain || tokenEnv) && headers.some((h) => h.name.toLowerCase() === 'authorization')) {
    throw new UsageError(
      '--header "Authorization: ..." conflicts with --token-keychain/--token-env: use one way to pass the token',
    );
  }

  let connectTimeoutMs = DEFAULT_CONNECT_TIMEOUT_S * 1000;
  const ct = str('connect-timeout');
  if (ct !== undefined) {
    const n = Number(ct);
    if (!Number.isFinite(n) || n < 0 || n > 3600)
      throw new UsageError(`--connect-timeout "${ct}" must be a number of seconds between 0 and 3600`);
    connectTimeoutMs = Math.round(n * 1000);
  }

  const level = str('log-level') ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(level))
    throw new UsageError(`--log-level "${level}" must be one of ${LOG_LEVELS.join(', ')}`);
  const vault = str('vault') ?? 'auto';
  if (!(VAULT_CHOICES as readonly string[]).includes(vault))
    throw new UsageError(`--vault "${vault}" must be one of ${VAULT_CHOICES.join(', ')}`);

  return {
    url,
    remote,
    dataDir: str('data-dir'),
    tokenKeychain,
    tokenEnv,
    headers,
    connectTimeoutMs,
    logLevel: level as LogLevel,
    logFile: str('log-file'),
    vault: vault as VaultChoice,
  };
}

function checkUrl(url: string, flag: '--url' | '--remote'): void {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new UsageError(`${flag} "${url.slice(0, 200)}" is not a URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new UsageError(`${flag} must be http:// or https://, not ${u.protocol}`);
  // Credentials in a URL end up in process lists and logs; --header and the keychain exist for them.
  if (u.username || u.password)
    throw new UsageError(
      `${flag} must not carry a user name or password: pass credentials with --token-keychain, --token-env or --header`,
    );
}

/**
 * --remote talks to the Gatehouse service, never to the remote itself: the
 * token is the bridge's own Gatehouse token, and the remote's credentials
 * belong to the upstream in the service (so none ends up in a client's config).
 */
function checkRemote(o: {
  url: string | undefined;
  tokenKeychain: string | undefined;
  tokenEnv: string | undefined;
  headers: HeaderFlag[];
}): void {
  if (o.url !== undefined)
    throw new UsageError(
      'use --url (straight to an MCP endpoint) or --remote (a remote server through the Gatehouse service), not both',
    );
  if (o.headers.length > 0)
    throw new UsageError(
      '--header does not go with --remote: the remote server\'s headers and tokens belong to its upstream in Gatehouse (`gatehouse upstreams add ID --url URL --header "Name: value"`), never to the bridge',
    );
  if (!o.tokenKeychain && !o.tokenEnv)
    throw new UsageError(
      "--remote needs this bridge's Gatehouse token: --token-keychain ACCOUNT (`gatehouse tokens create --keychain ACCOUNT`) or --token-env VAR",
    );
}

/** A client-side server name for a remote: "gatehouse-" and its host, e.g. gatehouse-mcp-linear-app. */
export function remoteServerName(remote: string): string {
  let host = 'remote';
  try {
    host = new URL(remote).hostname;
  } catch {
    // the URL is refused with its own message
  }
  const slug =
    host
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'remote';
  return `gatehouse-${slug}`.slice(0, 64).replace(/-+$/, '');
}

export function parseHeader(raw: string): HeaderFlag {
  const i = raw.indexOf(':');
  // The flag may hold a bare secret, so the message does not echo it.
  if (i <= 0) throw new UsageError('--header must look like "Name: value" (no ":" found)');
  const name = raw.slice(0, i).trim();
  const value = raw.slice(i + 1).trim();
  if (!HEADER_NAME.test(name)) throw new UsageError(`--header name "${name}" is not a valid HTTP header name`);
  if (RESERVED_HEADERS.has(name.toLowerCase()))
    throw new UsageError(`--header ${name} is set by the bridge itself and cannot be overridden`);
  if (value === '') throw new UsageError(`--header ${name} has an empty value`);
  if (/[\r\n\0]/.test(value)) throw new UsageError(`--header ${name} contains a line break`);
  return { name, value };
}
