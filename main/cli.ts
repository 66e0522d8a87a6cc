#!/usr/bin/env node
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { homedir } from 'node:os';
import { resolveDataDir } from './contract/paths.ts';
import { LIST_SETTINGS, SETTINGS_HELP, SETTINGS_KEYS, Settings, type SettingsKey } from './contract/settings.ts';
import { Role } from './contract/users.ts';
import { AuditQuery, AuditResult } from './contract/audit.ts';
import { toErrorShape, GatehouseError } from './core/errors.ts';
import { createLogger } from './store/logger.ts';
import type { VaultChoice } from './store/vault.ts';
import { connect, retryWhileLocked, type Connection } from './cli/connect.ts';
import { table, unwrap, UsageError } from './cli/output.ts';
import { DEFAULT_PORT, startService } from './service.ts';
import { VERSION } from './version.ts';

const USAGE = `gatehouse ${VERSION} — local MCP gateway

Usage: gatehouse <command> [options]

  serve [--host 127.0.0.1] [--port ${DEFAULT_PORT}|0] [--enable]    start the headless service
  tokens create --label L [--user LOGIN] [--keychain ACCOUNT]
                [--read-only] [--tools a,b] [--plugins p,q]        create a token (shown once)
  tokens list | tokens revoke ID
  users list | users add LOGIN --role R | users set-role LOGIN R
  settings get [KEY] | settings set KEY VALUE
  staged list [--status S] | staged show ID | staged confirm ID | staged discard ID
  audit list [--tool T] [--result R] [--user U] [--token ID] [--plugin P] [--from ISO] [--to ISO] [--limit N] [--cursor C]
  audit export --format csv|jsonl [filters as for list] [> file]
  console-link                                                   a one-time console login link

Every command: --data-dir DIR (or GATEHOUSE_DATA_DIR), --json, --vault auto|keychain|file, --help.
Exit codes: 0 ok, 1 the operation failed, 2 bad usage.`;

const COMMON = {
  'data-dir': { type: 'string' },
  json: { type: 'boolean' },
  vault: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  'log-level': { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

function parse<O extends ParseArgsConfig['options']>(args: string[], options: O) {
  try {
    return parseArgs({ args, options: { ...COMMON, ...options }, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

const out = (json: boolean, data: unknown, human: () => string) => process.stdout.write(`${json ? JSON.stringify(data, null, 2) : human()}\n`);

function vaultChoice(v: unknown): VaultChoice {
  if (v === undefined) return 'auto';
  if (v === 'auto' || v === 'keychain' || v === 'file') return v;
  throw new UsageError(`--vault must be auto, keychain or file (got '${String(v)}')`);
}

function settingValue(key: string, raw: string): unknown {
  if (!SETTINGS_KEYS.includes(key as SettingsKey)) throw new GatehouseError('invalid_value', `unknown setting '${key}'; settings are: ${SETTINGS_KEYS.join(', ')}`);
  if (LIST_SETTINGS.includes(key as SettingsKey)) return raw.split(',').map((s) => s.trim()).filter(Boolean);
  const shape = Settings.shape[key as SettingsKey];
  const sample = shape.parse(undefined);
  if (typeof sample === 'boolean') {
    if (!['true', 'false', 'on', 'off', '1', '0'].includes(raw)) throw new GatehouseError('invalid_value', `${key} takes true or false (got '${raw}')`);
    return ['true', 'on', '1'].includes(raw);
  }
  if (typeof sample === 'number') {
    if (!/^-?\d+$/.test(raw)) throw new GatehouseError('invalid_value', `${key} takes a whole number (got '${raw}')`);
    return Number(raw);
  }
  return raw;
}

const list = (v: unknown) => (typeof v === 'string' ? v.split(',').map((s) => s.trim()).filter(Boolean) : undefined);

async function withConnection<T>(values: { 'data-dir'?: string | boolean; vault?: string | boolean; 'log-level'?: string | boolean }, fn: (c: Connection) => Promise<T>): Promise<T> {
  const dataDir = resolveDataDir(values['data-dir'] as string | undefined, process.platform, process.env, homedir());
  const c = await connect(dataDir, vaultChoice(values.vault), createLogger({ level: (values['log-level'] as 'warn') ?? 'warn' }));
  try {
    return await fn(c);
  } finally {
    await c.close();
  }
}

async function serve(args: string[]): Promise<void> {
  const { values } = parse(args, { host: { type: 'string' }, port: { type: 'string' }, enable: { type: 'boolean' } });
  if (values.help) return void console.log(USAGE);
  const port = values.port === undefined ? DEFAULT_PORT : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be a number from 0 to 65535 (got '${values.port}')`);
  const dataDir = resolveDataDir(values['data-dir'], process.platform, process.env, homedir());
  const log = createLogger({ level: (values['log-level'] as 'info') ?? 'info' });
  // A CLI command holding the lock finishes in a moment: wait for it. Another service never lets go: fail at once.
  const svc = await retryWhileLocked(() => startService({ dataDir, host: values.host ?? '127.0.0.1', port, vault: vaultChoice(values.vault), log, ...(values.enable ? { enable: true } : {}) }), {
    wait: (e) => e.details.owner === 'cli',
  });
  // Handlers first: whoever reads the printed addresses may signal at once, and Node's default for an unhandled SIGINT/SIGTERM skips the flush.
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('stopping', { signal });
    // The stop must finish within 2 s; one that does not has not flushed, and must not claim success.
    const force = setTimeout(() => {
      log.error('stop did not finish within 2 s: exiting without a complete flush', { signal });
      process.exit(1);
    }, 1900);
    force.unref();
    void svc.stop().then(() => process.exit(0), (e) => {
      log.error('stop failed', { error: (e as Error).message });
      process.exit(1);
    });
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  const info = { base_url: svc.baseUrl, mcp_url: svc.mcpUrl, console_login_url: svc.loginUrl(), data_dir: dataDir, vault: svc.vaultLabel, enabled: svc.gateway.settings.get().enabled, pid: process.pid };
  out(!!values.json, info, () =>
    [
      `Gatehouse ${VERSION} is running.`,
      `  base URL:      ${info.base_url}`,
      `  MCP endpoint:  ${info.mcp_url}`,
      `  console login: ${info.console_login_url}   (one-time link)`,
      `  data dir:      ${info.data_dir}`,
      `  vault:         ${info.vault}`,
      `  gateway:       ${info.enabled ? 'on' : 'off (switch on: gatehouse settings set enabled true, or serve --enable)'}`,
      'Stop with Ctrl+C.',
    ].join('\n'),
  );
  if (svc.gateway.vault.backend === 'file') log.warn('vault: file (not encrypted): no OS keychain reachable; secrets are kept in a 0600 file in the data dir');
}

async function tokens(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  const { values, positionals } = parse(rest, { label: { type: 'string' }, user: { type: 'string' }, keychain: { type: 'string' }, 'read-only': { type: 'boolean' }, tools: { type: 'string' }, plugins: { type: 'string' } });
  const json = !!values.json;
  if (sub === 'create' && !values.label) throw new UsageError('tokens create needs --label (e.g. --label "Claude Desktop")');
  if (sub === 'revoke' && !positionals[0]) throw new UsageError('tokens revoke needs a token id (see: gatehouse tokens list)');
  await withConnection(values, async (c) => {
    if (sub === 'create') {
      if (!values.label) throw new UsageError('tokens create needs --label');
      const scope = { ...(values['read-only'] ? { read_only: true } : {}), ...(list(values.tools) ? { tools: list(values.tools) } : {}), ...(list(values.plugins) ? { plugins: list(values.plugins) } : {}) };
      const created = unwrap(await c.dispatch('tokens.create', { label: values.label, ...(values.user ? { user: values.user } : {}), ...(Object.keys(scope).length ? { scope } : {}), ...(values.keychain ? { keychain_account: values.keychain } : {}) } as never));
      return out(json, created, () =>
        [
          `Created token ${created.record.id} (${created.record.label}) for ${created.record.user_login ?? created.record.user_id}.`,
          `  ${created.token}`,
          'This is the only time the token is shown; store it in your client now.',
          ...(created.keychain_account ? [`Saved in the Gatehouse vault (OS keychain, or the 0600 file when none is reachable) as '${created.keychain_account}': gatehouse-bridge --token-keychain ${created.keychain_account}`] : []),
        ].join('\n'),
      );
    }
    if (sub === 'list') {
      const rows = unwrap(await c.dispatch('tokens.list', {} as never));
      return out(json, rows, () => table(rows.map((t) => ({ ...t, user: t.user_login, scope: t.scope.read_only || t.scope.tools || t.scope.plugins ? [t.scope.read_only ? 'read-only' : '', t.scope.tools ? `tools=${t.scope.tools.join(',')}` : '', t.scope.plugins ? `plugins=${t.scope.plugins.join(',')}` : ''].filter(Boolean).join(' ') : 'full' })), ['id', 'label', 'user', 'preview', 'scope', 'created', 'last_used']));
    }
    if (sub === 'revoke') {
      const r = unwrap(await c.dispatch('tokens.revoke', { id: positionals[0]! }));
      return out(json, r, () => `Revoked ${r.id}: its next request gets 401.`);
    }
    throw new UsageError(`unknown tokens command '${sub ?? ''}': use create, list or revoke`);
  });
}

async function users(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  const { values, positionals } = parse(rest, { role: { type: 'string' }, name: { type: 'string' } });
  const json = !!values.json;
  // A missing role is bad usage (exit 2); a role that does not exist is a bad value (exit 1).
  const role = (r: string | undefined) => {
    if (r === undefined) throw new UsageError(`a role is needed: one of ${Role.options.join(', ')}`);
    const p = Role.safeParse(r);
    if (!p.success) throw new GatehouseError('invalid_value', `unknown role '${r}': a role is one of ${Role.options.join(', ')}`);
    return p.data;
  };
  if (sub === 'add' && !positionals[0]) throw new UsageError('users add needs a login: gatehouse users add LOGIN --role R');
  if (sub === 'set-role' && !positionals[0]) throw new UsageError('users set-role needs LOGIN and ROLE');
  const wanted = sub === 'add' ? role(values.role) : sub === 'set-role' ? role(positionals[1]) : undefined;
  await withConnection(values, async (c) => {
    if (sub === 'list') {
      const rows = unwrap(await c.dispatch('users.list', {} as never));
      return out(json, rows, () => table(rows, ['id', 'login', 'display_name', 'role', 'created']));
    }
    if (sub === 'add') {
      const u = unwrap(await c.dispatch('users.add', { login: positionals[0]!, role: wanted!, ...(values.name ? { display_name: values.name } : {}) }));
      return out(json, u, () => `Added ${u.login} (${u.role}).`);
    }
    if (sub === 'set-role') {
      const u = unwrap(await c.dispatch('users.setRole', { login: positionals[0]!, role: wanted! }));
      return out(json, u, () => `${u.login} is now ${u.role}.`);
    }
    throw new UsageError(`unknown users command '${sub ?? ''}': use list, add or set-role`);
  });
}

async function settings(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  const { values, positionals } = parse(rest, {});
  const json = !!values.json;
  const [key, raw] = positionals;
  if (sub === 'set' && (!key || raw === undefined)) throw new UsageError('settings set needs KEY and VALUE, e.g. settings set rate_limit 60');
  const patch = sub === 'set' ? { [key!]: settingValue(key!, raw!) } : {};
  await withConnection(values, async (c) => {
    if (sub === 'get') {
      const s = unwrap(await c.dispatch('settings.get', {} as never));
      if (key) {
        // Not `key in s`: that is true for 'constructor' and 'toString' too.
        if (!SETTINGS_KEYS.includes(key as SettingsKey)) throw new GatehouseError('invalid_value', `unknown setting '${key}'; settings are: ${SETTINGS_KEYS.join(', ')}`);
        const v = s[key as SettingsKey];
        return out(json, { [key]: v }, () => (Array.isArray(v) ? v.join(',') : String(v)));
      }
      return out(json, s, () => SETTINGS_KEYS.map((k) => `${k} = ${Array.isArray(s[k]) ? (s[k] as string[]).join(',') : String(s[k])}\n    ${SETTINGS_HELP[k]}`).join('\n'));
    }
    if (sub === 'set') {
      const s = unwrap(await c.dispatch('settings.update', patch as never));
      return out(json, s, () => `${key} = ${JSON.stringify(s[key as SettingsKey])}`);
    }
    throw new UsageError(`unknown settings command '${sub ?? ''}': use get or set`);
  });
}

async function staged(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  const { values, positionals } = parse(rest, { status: { type: 'string' } });
  const json = !!values.json;
  const id = positionals[0];
  if (sub !== 'list' && !id) throw new UsageError(`staged ${sub ?? '<command>'} needs a staged id (see: gatehouse staged list)`);
  await withConnection(values, async (c) => {
    if (sub === 'list') {
      const rows = unwrap(await c.dispatch('staged.list', values.status ? { status: values.status as 'pending' } : {}));
      return out(json, rows, () => table(rows.map((s) => ({ id: s.id, status: s.status, tool: s.tool, summary: s.preview.summary, by: s.token_label, expires_at: s.expires_at })), ['id', 'status', 'tool', 'summary', 'by', 'expires_at']));
    }
    if (sub === 'show') {
      const s = unwrap(await c.dispatch('staged.get', { id: id! }));
      return out(json, s, () =>
        [`${s.id}  ${s.status}  ${s.tool}`, s.preview.summary, ...s.preview.changes.map((ch) => `  ${ch.field}:\n    - ${JSON.stringify(ch.before)}\n    + ${JSON.stringify(ch.after)}`), ...(s.preview.arguments ? [JSON.stringify(s.preview.arguments, null, 2)] : []), `expires ${s.expires_at}`].join('\n'),
      );
    }
    if (sub === 'confirm' || sub === 'discard') {
      const s = unwrap(await c.dispatch(sub === 'confirm' ? 'staged.confirm' : 'staged.discard', { id: id! }));
      return out(json, s, () => `${s.id} ${s.status}.${s.status === 'confirmed' ? `\n${JSON.stringify(s.result, null, 2)}` : ''}`);
    }
    throw new UsageError(`unknown staged command '${sub ?? ''}': use list, show, confirm or discard`);
  });
}

async function audit(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  const { values } = parse(rest, { tool: { type: 'string' }, result: { type: 'string' }, user: { type: 'string' }, token: { type: 'string' }, plugin: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, limit: { type: 'string' }, cursor: { type: 'string' }, format: { type: 'string' } });
  if (values.result !== undefined && !AuditResult.safeParse(values.result).success) throw new UsageError(`--result is one of ${AuditResult.options.join(', ')}`);
  const filters = {
    ...(values.tool ? { tool: values.tool } : {}), ...(values.result ? { result: values.result as 'ok' } : {}), ...(values.user ? { user_id: values.user } : {}),
    ...(values.token ? { token_id: values.token } : {}), ...(values.plugin ? { plugin: values.plugin } : {}), ...(values.from ? { from: values.from } : {}), ...(values.to ? { to: values.to } : {}),
  };
  const q = AuditQuery.safeParse({ ...filters, ...(values.limit ? { limit: Number(values.limit) } : {}), ...(values.cursor ? { cursor: values.cursor } : {}) });
  if (sub === 'list' && !q.success) throw new UsageError(`audit list: ${q.error.issues[0]?.path.join('.')}: ${q.error.issues[0]?.message}`);
  const format = values.format ?? 'jsonl';
  if (sub === 'export' && format !== 'csv' && format !== 'jsonl') throw new UsageError('--format is csv or jsonl');
  await withConnection(values, async (c) => {
    if (sub === 'list') {
      const page = unwrap(await c.dispatch('audit.query', q.data!));
      return out(!!values.json, page, () => `${table(page.entries as unknown as Array<Record<string, unknown>>, ['at', 'tool', 'result', 'error_code', 'user_id', 'token_preview', 'target', 'duration_ms'])}${page.next_cursor ? `\nmore: --cursor ${page.next_cursor}` : ''}`);
    }
    if (sub === 'export') {
      return c.exportAudit(filters, format as 'csv' | 'jsonl', process.stdout);
    }
    throw new UsageError(`unknown audit command '${sub ?? ''}': use list or export`);
  });
}

async function consoleLink(args: string[]): Promise<void> {
  const { values } = parse(args, {});
  await withConnection(values, async (c) => {
    const url = await c.loginLink();
    out(!!values.json, { url }, () => url);
  });
}

const COMMANDS: Record<string, (args: string[]) => Promise<void>> = { serve, tokens, users, settings, staged, audit, 'console-link': consoleLink };
// Checked before anything opens the data dir: a typo must not create a store or wait for the lock.
const SUBCOMMANDS: Record<string, string[]> = { tokens: ['create', 'list', 'revoke'], users: ['list', 'add', 'set-role'], settings: ['get', 'set'], staged: ['list', 'show', 'confirm', 'discard'], audit: ['list', 'export'] };

export async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  const json = argv.includes('--json');
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    // Asked for: stdout, exit 0. No command at all is bad usage: stderr, exit 2.
    (command ? console.log : console.error)(USAGE);
    return command ? 0 : 2;
  }
  if (command === '--version') return void console.log(VERSION), 0;
  const run = COMMANDS[command];
  try {
    if (!run) throw new UsageError(`unknown command '${command}'`);
    if (args.includes('--help') || args.includes('-h')) return void console.log(USAGE), 0;
    const subs = SUBCOMMANDS[command];
    if (subs && !subs.includes(args[0] ?? '')) {
      const choices = `${subs.slice(0, -1).join(', ')} or ${subs[subs.length - 1]}`;
      throw new UsageError(args[0] === undefined || args[0].startsWith('-') ? `${command} needs a command first: ${choices}` : `unknown ${command} command '${args[0]}': use ${choices}`);
    }
    await run(args);
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(json ? `${JSON.stringify({ ok: false, code: 'invalid_request', message: e.message })}\n` : `gatehouse: ${e.message}\nUsage: gatehouse <command> [options]   (gatehouse --help)\n`);
      return 2;
    }
    const shape = toErrorShape(e);
    if (shape.code === 'internal_error') process.stderr.write(`${(e as Error).stack ?? e}\n`);
    process.stderr.write(json ? `${JSON.stringify({ ok: false, ...shape })}\n` : `gatehouse: ${shape.message} [${shape.code}]\n`);
    return 1;
  }
}

const code = await main(process.argv.slice(2));
if (process.argv[2] !== 'serve' || code !== 0) process.exitCode = code;
