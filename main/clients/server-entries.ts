import type { ClientId } from '../contract/client-locations.ts';
import { isObject } from './config-file.ts';

/**
 * One client's server entry read into what `upstreams add` takes. Each client
 * spells it its own way (shared/reference/client-configs.md, "Entry shapes"):
 * `serverUrl` (Windsurf), `httpUrl` vs `url` (Gemini: Streamable HTTP vs SSE),
 * `context_servers` with a nested `command` (older Zed), Codex's TOML keys.
 * Values are kept as written: a `${VAR}` stays `${VAR}`. An entry that only
 * works inside its client (a workspace folder, a relative cwd, an env file,
 * variables taken from the client's own environment) stays there, with why.
 */

export type ServerSpec =
  | { kind: 'stdio'; command: string; args: string[]; env: Record<string, string> }
  | {
      kind: 'http';
      /** what the entry says it speaks; Gatehouse's upstreams speak Streamable HTTP */
      transport: 'streamable' | 'sse';
      url: string;
      headers: Record<string, string>;
      /** the entry signs in with OAuth (its client keeps the tokens): imported as `--oauth` */
      oauth: boolean;
    };

export interface ReadEntry {
  spec: ServerSpec | null;
  /** why the server stays in the client, or null when it can be imported */
  stays: string | null;
  disabled: boolean;
  /** the entry is Gatehouse itself (its MCP endpoint or the bridge) */
  gatehouse: boolean;
  /** `${...}` references kept as written */
  placeholders: string[];
}

/** The path of the MCP endpoint every Gatehouse serves. */
export const GATEHOUSE_MCP_PATH = '/wp-json/gatehouse-mcp/v1/mcp';
const WORKSPACE_VARS =
  /\$\{(workspaceFolder|workspaceRoot|workspaceFolderBasename|fileDirname|file|relativeFile|cwd)\b[^}]*\}/;
const PLACEHOLDER = /\$\{[^}]*\}/g;

const strings = (v: unknown): string[] | null =>
  Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : null;
function stringMap(v: unknown): Record<string, string> | null {
  if (v === undefined) return {};
  if (!isObject(v)) return null;
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v)) {
    // Numbers and booleans in env are how people write them; the process gets text either way.
    if (typeof x === 'string') out[k] = x;
    else if (typeof x === 'number' || typeof x === 'boolean') out[k] = String(x);
    else return null;
  }
  return out;
}

const isBridge = (s: string) => /(^|[\\/])gatehouse-bridge(\.m?js)?$/.test(s);
const isGatehouseUrl = (u: string) => u.includes(GATEHOUSE_MCP_PATH) || u.includes('/gatehouse-mcp/');

function result(spec: ServerSpec | null, stays: string | null, disabled: boolean): ReadEntry {
  const texts =
    spec === null
      ? []
      : spec.kind === 'stdio'
        ? [spec.command, ...spec.args, ...Object.values(spec.env)]
        : [spec.url, ...Object.values(spec.headers)];
  const gatehouse =
    spec !== null && (spec.kind === 'stdio' ? [spec.command, ...spec.args].some(isBridge) : isGatehouseUrl(spec.url));
  let why = stays;
  const workspace = texts.find((t) => WORKSPACE_VARS.test(t));
  if (!why && workspace)
    why = `uses ${workspace.match(WORKSPACE_VARS)![0]}, which only the client can resolve (per workspace)`;
  const placeholders = [...new Set(texts.flatMap((t) => t.match(PLACEHOLDER) ?? []))];
  return { spec, stays: why, disabled, gatehouse, placeholders };
}

const invalid = (what: string): ReadEntry => result(null, `not an entry Gatehouse can read (${what})`, false);

/** A relative or absolute working folder: Gatehouse's upstreams run in the service's own. */
function cwdStays(cwd: unknown): string | null {
  if (cwd === undefined || cwd === '') return null;
  if (typeof cwd !== 'string') return 'its cwd is not text';
  if (!/^([\\/]|[A-Za-z]:[\\/]|~)/.test(cwd))
    return `its cwd "${cwd}" is relative, so it depends on the client's workspace`;
  return `it sets a working folder (cwd "${cwd}"), which Gatehouse's upstreams do not take`;
}

/** The entry of `client` as written in its file. */
export function readEntry(client: ClientId, raw: unknown): ReadEntry {
  if (!isObject(raw)) return invalid('not an object');
  const disabled = raw.disabled === true || raw.enabled === false;
  if (client === 'codex') return readCodex(raw, disabled);
  if (client === 'zed' && isObject(raw.command)) {
    // Zed before its "custom" servers: {"command": {"path", "args", "env"}, "settings": {}}
    return readStdio({ ...raw.command, command: raw.command.path }, disabled, raw.cwd);
  }
  if (typeof raw.envFile === 'string') return result(null, `it reads its environment from a file (envFile)`, disabled);

  const type = typeof raw.type === 'string' ? raw.type : undefined;
  const url =
    client === 'gemini' ? (raw.httpUrl ?? raw.url) : client === 'windsurf' ? (raw.serverUrl ?? raw.url) : raw.url;
  if (typeof raw.command === 'string' && url === undefined) return readStdio(raw, disabled, raw.cwd);
  if (typeof url !== 'string') return invalid('neither a command nor a URL');
  if (!/^https?:\/\//i.test(url)) return result(null, `its URL is not http(s) (${url.split(':')[0]})`, disabled);
  const headers = stringMap(raw.headers);
  if (!headers) return invalid('headers are not text');
  const sse =
    client === 'gemini'
      ? raw.httpUrl === undefined
      : type === 'sse' || (type === undefined && /\/sse\/?(\?|$)/.test(url));
  const oauth = isObject(raw.oauth) ? raw.oauth.enabled !== false : raw.authProviderType !== undefined;
  return result({ kind: 'http', transport: sse ? 'sse' : 'streamable', url, headers, oauth }, null, disabled);
}

function readStdio(raw: Record<string, unknown>, disabled: boolean, cwd: unknown): ReadEntry {
  if (typeof raw.command !== 'string' || raw.command === '') return invalid('no command');
  const args = raw.args === undefined ? [] : strings(raw.args);
  if (!args) return invalid('args is not a list of text');
  const env = stringMap(raw.env);
  if (!env) return invalid('env values are not text');
  return result({ kind: 'stdio', command: raw.command, args, env }, cwdStays(cwd), disabled);
}

function readCodex(raw: Record<string, unknown>, disabled: boolean): ReadEntry {
  // Codex names variables of its own environment; Gatehouse starts servers with none of the client's.
  if (Array.isArray(raw.env_vars) && raw.env_vars.length)
    return result(null, `it takes ${raw.env_vars.join(', ')} from Codex's environment (env_vars)`, disabled);
  if (typeof raw.bearer_token_env_var === 'string')
    return result(
      null,
      `its bearer token comes from Codex's environment (bearer_token_env_var ${raw.bearer_token_env_var})`,
      disabled,
    );
  if (isObject(raw.env_http_headers) && Object.keys(raw.env_http_headers).length)
    return result(null, `its headers come from Codex's environment (env_http_headers)`, disabled);
  if (typeof raw.url === 'string') {
    const headers = stringMap(raw.http_headers);
    if (!headers) return invalid('http_headers are not text');
    return result(
      { kind: 'http', transport: 'streamable', url: raw.url, headers, oauth: raw.oauth === true },
      null,
      disabled,
    );
  }
  return readStdio(raw, disabled, raw.cwd);
}
