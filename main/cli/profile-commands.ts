import type { ProfileView } from '../contract/profiles.ts';
import { safe, table, unwrap, UsageError } from './output.ts';
import { list, out, parse, withConnection } from './args.ts';

const describe = (p: ProfileView): string =>
  [
    safe`${p.name}  created ${p.created}`,
    safe`  tools: ${p.tools.join(', ') || '-'}`,
    safe`  upstreams (all their tools): ${p.upstreams.join(', ') || '-'}`,
    safe`  tokens: ${p.tokens.map((t) => `${t.id} (${t.label})`).join(', ') || '-'}`,
  ].join('\n');

/** `gatehouse profiles create|list|show|remove` */
export async function profiles(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  const { values, positionals } = parse(rest, { tools: { type: 'string' }, upstreams: { type: 'string' } });
  const json = !!values.json;
  const name = positionals[0];
  if (sub !== 'list' && !name)
    throw new UsageError(`profiles ${sub} needs a profile name (see: gatehouse profiles list)`);
  if (sub === 'create' && !list(values.tools) && !list(values.upstreams))
    throw new UsageError('profiles create NAME needs --tools a,b or --upstreams x,y (or both)');
  await withConnection(values, async (c) => {
    if (sub === 'create') {
      const tools = list(values.tools);
      const upstreams = list(values.upstreams);
      const p = unwrap(
        await c.dispatch('profiles.create', {
          name: name!,
          ...(tools ? { tools } : {}),
          ...(upstreams ? { upstreams } : {}),
        }),
      );
      return out(json, p, () =>
        [
          safe`Created profile ${p.name}; bind it with: gatehouse tokens create --label L --profile ${p.name}`,
          describe(p),
        ].join('\n'),
      );
    }
    if (sub === 'list') {
      const rows = unwrap(await c.dispatch('profiles.list', {}));
      return out(json, rows, () =>
        table(
          rows.map((p) => ({
            name: p.name,
            tools: p.tools.join(','),
            upstreams: p.upstreams.join(','),
            tokens: p.tokens.length,
            created: p.created,
          })),
          ['name', 'tools', 'upstreams', 'tokens', 'created'],
        ),
      );
    }
    if (sub === 'show') {
      const p = unwrap(await c.dispatch('profiles.get', { name: name! }));
      return out(json, p, () => describe(p));
    }
    if (sub === 'remove') {
      const r = unwrap(await c.dispatch('profiles.remove', { name: name! }));
      return out(json, r, () => safe`Removed profile ${r.name}.`);
    }
    throw new UsageError(`unknown profiles command '${sub ?? ''}': use create, list, show or remove`);
  });
}
