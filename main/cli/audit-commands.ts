import { AuditQuery, AuditResult } from '../contract/audit.ts';
import { principalLabel } from '../contract/principal-label.ts';
import { safe, table, unwrap, UsageError } from './output.ts';
import { out, parse, withConnection } from './args.ts';

/** `gatehouse audit list|export` */
export async function audit(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  const { values } = parse(rest, {
    tool: { type: 'string' },
    result: { type: 'string' },
    user: { type: 'string' },
    token: { type: 'string' },
    plugin: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    limit: { type: 'string' },
    cursor: { type: 'string' },
    format: { type: 'string' },
  });
  if (values.result !== undefined && !AuditResult.safeParse(values.result).success)
    throw new UsageError(`--result is one of ${AuditResult.options.join(', ')}`);
  const filters = {
    ...(values.tool ? { tool: values.tool } : {}),
    ...(values.result ? { result: values.result as 'ok' } : {}),
    ...(values.user ? { user_id: values.user } : {}),
    ...(values.token ? { token_id: values.token } : {}),
    ...(values.plugin ? { plugin: values.plugin } : {}),
    ...(values.from ? { from: values.from } : {}),
    ...(values.to ? { to: values.to } : {}),
  };
  const q = AuditQuery.safeParse({
    ...filters,
    ...(values.limit ? { limit: Number(values.limit) } : {}),
    ...(values.cursor ? { cursor: values.cursor } : {}),
  });
  if (sub === 'list' && !q.success)
    throw new UsageError(`audit list: ${q.error.issues[0]?.path.join('.')}: ${q.error.issues[0]?.message}`);
  const format = values.format ?? 'jsonl';
  if (sub === 'export' && format !== 'csv' && format !== 'jsonl') throw new UsageError('--format is csv or jsonl');
  await withConnection(values, async (c) => {
    if (sub === 'list') {
      const page = unwrap(await c.dispatch('audit.query', q.data!));
      if (values.json) return out(true, page, () => '');
      // People know logins, not user ids: show the login (the id stays in --json and the export).
      const users = await c.dispatch('users.list', {});
      const login = new Map(users.ok ? users.data.map((u) => [u.id, u.login]) : []);
      const rows = page.entries.map((e) => ({
        ...e,
        user: e.user_id ? (login.get(e.user_id) ?? e.user_id) : null,
        by: e.principal ? principalLabel(e.principal) : null,
      }));
      return out(
        false,
        page,
        () =>
          `${table(rows, ['at', 'tool', 'result', 'error_code', 'user', 'token_preview', 'by', 'target', 'duration_ms'])}${page.next_cursor ? safe`\nmore: --cursor ${page.next_cursor}` : ''}`,
      );
    }
    if (sub === 'export') {
      return c.exportAudit({ ...filters, format: format as 'csv' | 'jsonl' }, process.stdout);
    }
    throw new UsageError(`unknown audit command '${sub ?? ''}': use list or export`);
  });
}
