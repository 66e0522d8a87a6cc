import { ROLE_NAMES, type RoleName } from '../contract/role-names.ts';
import { GatehouseError } from '../core/errors.ts';
import { safe, table, unwrap, UsageError } from './output.ts';
import { out, parse, withConnection } from './args.ts';

/** `gatehouse users list|add|set-role` */
export async function users(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  const { values, positionals } = parse(rest, { role: { type: 'string' }, name: { type: 'string' } });
  const json = !!values.json;
  // A missing role is bad usage (exit 2); a role that does not exist is a bad value (exit 1).
  const role = (r: string | undefined) => {
    if (r === undefined) throw new UsageError(`a role is needed: one of ${ROLE_NAMES.join(', ')}`);
    if (!(ROLE_NAMES as readonly string[]).includes(r))
      throw new GatehouseError('invalid_value', `unknown role '${r}': a role is one of ${ROLE_NAMES.join(', ')}`);
    return r as RoleName;
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
