import { LIST_SETTINGS, SETTINGS_HELP, SETTINGS_KEYS, Settings, type SettingsKey } from '../contract/settings.ts';
import { Role } from '../contract/users.ts';
import type { TokenScope } from '../contract/tokens.ts';
import { GatehouseError } from '../core/errors.ts';
import { safe, table, unwrap, UsageError } from './output.ts';
import { list, out, parse, withConnection } from './args.ts';

/** A setting's value from its command-line spelling, checked against the setting's type. */
function settingValue(key: string, raw: string): unknown {
  if (!SETTINGS_KEYS.includes(key as SettingsKey))
    throw new GatehouseError('invalid_value', `unknown setting '${key}'; settings are: ${SETTINGS_KEYS.join(', ')}`);
  if (LIST_SETTINGS.includes(key as SettingsKey))
    return raw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  const shape = Settings.shape[key as SettingsKey];
  const sample = shape.parse(undefined);
  if (typeof sample === 'boolean') {
    if (!['true', 'false', 'on', 'off', '1', '0'].includes(raw))
      throw new GatehouseError('invalid_value', `${key} takes true or false (got '${raw}')`);
    return ['true', 'on', '1'].includes(raw);
  }
  if (typeof sample === 'number') {
    if (!/^-?\d+$/.test(raw)) throw new GatehouseError('invalid_value', `${key} takes a whole number (got '${raw}')`);
    return Number(raw);
  }
  return raw;
}

/** A token's narrowing in one line of `tokens list`. */
function scopeText(scope: TokenScope): string {
  const parts = [
    scope.read_only ? 'read-only' : '',
    scope.tools ? `tools=${scope.tools.join(',')}` : '',
    scope.plugins ? `plugins=${scope.plugins.join(',')}` : '',
    scope.profile ? `profile=${scope.profile}` : '',
  ].filter(Boolean);
  return parts.length ? parts.join(' ') : 'full';
}

/** `gatehouse tokens create|list|revoke` */
export async function tokens(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  const { values, positionals } = parse(rest, {
    label: { type: 'string' },
    user: { type: 'string' },
    keychain: { type: 'string' },
    'read-only': { type: 'boolean' },
    tools: { type: 'string' },
    plugins: { type: 'string' },
    profile: { type: 'string' },
  });
  const json = !!values.json;
  if (sub === 'create' && !values.label)
    throw new UsageError('tokens create needs --label (e.g. --label "Claude Desktop")');
  if (sub === 'revoke' && !positionals[0])
    throw new UsageError('tokens revoke needs a token id (see: gatehouse tokens list)');
  await withConnection(values, async (c) => {
    if (sub === 'create') {
      if (!values.label) throw new UsageError('tokens create needs --label');
      const scope = {
        ...(values['read-only'] ? { read_only: true } : {}),
        ...(list(values.tools) ? { tools: list(values.tools) } : {}),
        ...(list(values.plugins) ? { plugins: list(values.plugins) } : {}),
        ...(values.profile ? { profile: values.profile } : {}),
      };
      const created = unwrap(
        await c.dispatch('tokens.create', {
          label: values.label,
          ...(values.user ? { user: values.user } : {}),
          ...(Object.keys(scope).length ? { scope } : {}),
          ...(values.keychain ? { keychain_account: values.keychain } : {}),
        }),
      );
      return out(json, created, () =>
        [
          safe`Created token ${created.record.id} (${created.record.label}) for ${created.record.user_login ?? created.record.user_id}.`,
          safe`  ${created.token}`,
          'This is the only time the token is shown; store it in your client now.',
          ...(created.keychain_account
            ? [
                safe`Saved in the Gatehouse vault (OS keychain, or the 0600 file when none is reachable) as '${created.keychain_account}': gatehouse-bridge --token-keychain ${created.keychain_account}`,
              ]
            : []),
        ].join('\n'),
      );
    }
    if (sub === 'list') {
      const rows = unwrap(await c.dispatch('tokens.list', {}));
      return out(json, rows, () =>
        table(
          rows.map((t) => ({ ...t, user: t.user_login, scope: scopeText(t.scope) })),
          ['id', 'label', 'user', 'preview', 'scope', 'tool_count', 'created', 'last_used'],
        ),
      );
    }
    if (sub === 'revoke') {
      const r = unwrap(await c.dispatch('tokens.revoke', { id: positionals[0]! }));
      return out(json, r, () => safe`Revoked ${r.id}: its next request gets 401.`);
    }
    throw new UsageError(`unknown tokens command '${sub ?? ''}': use create, list or revoke`);
  });
}

/** `gatehouse users list|add|set-role` */
export async function users(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  const { values, positionals } = parse(rest, { role: { type: 'string' }, name: { type: 'string' } });
  const json = !!values.json;
  // A missing role is bad usage (exit 2); a role that does not exist is a bad value (exit 1).
  const role = (r: string | undefined) => {
    if (r === undefined) throw new UsageError(`a role is needed: one of ${Role.options.join(', ')}`);
    const p = Role.safeParse(r);
    if (!p.success)
      throw new GatehouseError('invalid_value', `unknown role '${r}': a role is one of ${Role.options.join(', ')}`);
    return p.data;
  };
  if (sub === 'add' && !positionals[0])
    throw new UsageError('users add needs a login: gatehouse users add LOGIN --role R');
  if (sub === 'set-role' && !positionals[0]) throw new UsageError('users set-role needs LOGIN and ROLE');
  const wanted = sub === 'add' ? role(values.role) : sub === 'set-role' ? role(positionals[1]) : undefined;
  await withConnection(values, async (c) => {
    if (sub === 'list') {
      const rows = unwrap(await c.dispatch('users.list', {}));
      return out(json, rows, () => table(rows, ['id', 'login', 'display_name', 'role', 'created']));
    }
    if (sub === 'add') {
      const u = unwrap(
        await c.dispatch('users.add', {
          login: positionals[0]!,
          role: wanted!,
          ...(values.name ? { display_name: values.name } : {}),
        }),
      );
      return out(json, u, () => safe`Added ${u.login} (${u.role}).`);
    }
    if (sub === 'set-role') {
      const u = unwrap(await c.dispatch('users.setRole', { login: positionals[0]!, role: wanted! }));
      return out(json, u, () => safe`${u.login} is now ${u.role}.`);
    }
    throw new UsageError(`unknown users command '${sub ?? ''}': use list, add or set-role`);
  });
}

/** `gatehouse settings get|set` */
export async function settings(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  const { values, positionals } = parse(rest, {});
  const json = !!values.json;
  const [key, raw] = positionals;
  if (sub === 'set' && (!key || raw === undefined))
    throw new UsageError('settings set needs KEY and VALUE, e.g. settings set rate_limit 60');
  const patch = sub === 'set' ? { [key!]: settingValue(key!, raw!) } : {};
  await withConnection(values, async (c) => {
    if (sub === 'get') {
      const s = unwrap(await c.dispatch('settings.get', {}));
      if (key) {
        // Not `key in s`: that is true for 'constructor' and 'toString' too.
        if (!SETTINGS_KEYS.includes(key as SettingsKey))
          throw new GatehouseError(
            'invalid_value',
            `unknown setting '${key}'; settings are: ${SETTINGS_KEYS.join(', ')}`,
          );
        const v = s[key as SettingsKey];
        return out(json, { [key]: v }, () => safe`${Array.isArray(v) ? v.join(',') : String(v)}`);
      }
      return out(json, s, () =>
        SETTINGS_KEYS.map(
          (k) =>
            safe`${k} = ${Array.isArray(s[k]) ? (s[k] as string[]).join(',') : String(s[k])}` +
            `\n    ${SETTINGS_HELP[k]}`,
        ).join('\n'),
      );
    }
    if (sub === 'set') {
      const s = unwrap(await c.dispatch('settings.update', patch));
      return out(json, s, () => safe`${key} = ${JSON.stringify(s[key as SettingsKey])}`);
    }
    throw new UsageError(`unknown settings command '${sub ?? ''}': use get or set`);
  });
}

/**
 * `gatehouse status`: what the console's Overview says, for a terminal: the
 * gateway on or off, staged writes waiting, and every health warning with
 * what to do (definitions held for review among them: a client calling one
 * gets `unknown tool`). Without a running service it reads the data dir.
 */
export async function status(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, {});
  if (positionals.length) throw new UsageError(`status takes no arguments (got '${positionals[0]}')`);
  await withConnection(values, async (c) => {
    const h = unwrap(await c.dispatch('health.get', {}));
    return out(!!values.json, h, () =>
      [
        c.mode === 'service'
          ? safe`Gatehouse ${h.version} is running and ${h.enabled ? 'on' : 'off'}: ${h.mcp_url}`
          : safe`Gatehouse ${h.version}: no service is running (data dir ${h.data_dir}); the gateway is switched ${h.enabled ? 'on' : 'off'}`,
        h.pending_approvals
          ? `${h.pending_approvals} staged ${h.pending_approvals === 1 ? 'write waits' : 'writes wait'} for approval (gatehouse staged list)`
          : 'No staged write waits for approval.',
        ...(h.warnings.length ? h.warnings.map((w) => safe`! ${w.message} (${w.code})`) : ['No warnings.']),
      ].join('\n'),
    );
  });
}
