import type { TokenScope } from '../contract/tokens.ts';
import { safe, table, unwrap, UsageError } from './output.ts';
import { list, out, parse, withConnection } from './args.ts';

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
