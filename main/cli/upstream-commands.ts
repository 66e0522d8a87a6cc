import type { FieldChange } from '../contract/staged.ts';
import type {
  UpstreamDetail,
  UpstreamInstructionsView,
  UpstreamPromptView,
  UpstreamToolView,
  UpstreamView,
  UpstreamViewView,
} from '../contract/upstreams.ts';
import { GatehouseError } from '../core/errors.ts';
import { safe, table, unwrap, UsageError } from './output.ts';
import { instructionsLines, promptRows, toolRows, viewRows } from './upstream-rows.ts';
import { out, parse, withConnection } from './args.ts';
import { login, logout, signInLine } from './oauth-commands.ts';
import { bindApprovals, processTerminal, viewLines } from './review-binding.ts';
import { confinementLines, grantFlags, sandboxInput } from './upstream-sandbox-text.ts';
import { recipeFlags, recipeInput, recipeLines } from './recipe-flags.ts';
import { processFlags, processInput, processLines } from './upstream-process-text.ts';
import { readSecretFromStdin } from './stdin-secret.ts';

const many = { type: 'string', multiple: true } as const;
const FLAGS = {
  stdio: { type: 'boolean' },
  url: { type: 'string' },
  env: many,
  header: many,
  'token-keychain': { type: 'string' },
  read: many,
  write: many,
  approve: many,
  'approve-all': { type: 'boolean' },
  hide: many,
  'timeout-ms': { type: 'string' },
  'approve-prompt': many,
  'hide-prompt': many,
  'approve-view': many,
  'hide-view': many,
  'approve-instructions': { type: 'string' },
  'hide-instructions': { type: 'boolean' },
  oauth: { type: 'boolean' },
  sse: { type: 'boolean' },
  'client-id': { type: 'string' },
  'client-secret': { type: 'string' },
  'client-metadata-url': { type: 'string' },
  scopes: { type: 'string' },
  'no-browser': { type: 'boolean' },
  ...grantFlags,
  ...recipeFlags,
  ...processFlags,
} as const;

/** `NAME=VALUE` and `Name: value`, split at the first separator; the value is never echoed in an error. */
function pairs(list: string[] | undefined, sep: '=' | ':', what: string): Array<{ name: string; value: string }> {
  return (list ?? []).map((raw) => {
    const at = raw.indexOf(sep);
    if (at <= 0)
      throw new UsageError(
        `${what} takes ${sep === '=' ? 'NAME=VALUE' : '"Name: value"'} (got one without '${sep}' or without a name)`,
      );
    return { name: raw.slice(0, at).trim(), value: sep === ':' ? raw.slice(at + 1).trim() : raw.slice(at + 1) };
  });
}

/**
 * `--client-secret -`: a pre-registered confidential client's secret, read from stdin. Never a flag value: one would
 * stay in the shell's history and the process list.
 */
async function clientSecret(values: Record<string, unknown>): Promise<{ client_secret?: string }> {
  const given = values['client-secret'];
  if (given === undefined) return {};
  if (given !== '-')
    throw new UsageError(
      '--client-secret takes only - (the secret is read from stdin, never given on the command line): printf %s "$SECRET" | gatehouse upstreams add ID --url URL --oauth --client-id ID --client-secret -',
    );
  if (!values.oauth || !values['client-id']) throw new UsageError('--client-secret goes with --oauth and --client-id');
  const secret = await readSecretFromStdin('client secret');
  if (!secret) throw new UsageError('--client-secret -: nothing was read from stdin');
  return { client_secret: secret };
}

function addInput(
  id: string,
  values: Record<string, unknown>,
  command: string[],
  secret: { client_secret?: string },
): Record<string, unknown> {
  const read = (values.read as string[] | undefined) ?? [];
  const timeout = values['timeout-ms'] === undefined ? {} : { timeout_ms: Number(values['timeout-ms']) };
  if (values.stdio === !!values.url)
    throw new UsageError('upstreams add needs either --stdio (and -- COMMAND ARGS...) or --url URL');
  if (values.stdio) {
    if (!command.length)
      throw new UsageError(
        'upstreams add ID --stdio needs the command after --, e.g. -- npx -y @modelcontextprotocol/server-filesystem /tmp',
      );
    if (values.header || values['token-keychain'])
      throw new UsageError('--header and --token-keychain are for --url upstreams');
    return {
      id,
      transport: {
        kind: 'stdio',
        command: command[0],
        args: command.slice(1),
        env: pairs(values.env as string[], '=', '--env'),
        ...sandboxInput(values),
      },
      read,
      ...timeout,
      ...processInput(values),
    };
  }
  if (command.length || values.env) throw new UsageError('--env and a command after -- are for --stdio upstreams');
  if (values.sse && values.oauth) throw new UsageError('--sse and --oauth do not go together yet');
  if (sandboxInput(values).sandbox) throw new UsageError('--allow-* and --unconfined are for --stdio upstreams');
  if (processInput(values).process) throw new UsageError('--per-client and --shared are for --stdio upstreams');
  const token = values['token-keychain'] ? { token_keychain: values['token-keychain'] } : {};
  if (!values.oauth && (values['client-id'] || values['client-metadata-url'] || values.scopes))
    throw new UsageError('--client-id, --client-metadata-url and --scopes go with --oauth');
  const metadata = values['client-metadata-url'] ? { client_metadata_url: values['client-metadata-url'] } : {};
  const oauth = values.oauth
    ? {
        oauth: {
          ...(values['client-id'] ? { client_id: values['client-id'] } : {}),
          ...secret,
          ...metadata,
          ...(values.scopes ? { scopes: values.scopes } : {}),
        },
      }
    : {};
  return {
    id,
    transport: {
      kind: 'http',
      url: values.url,
      headers: pairs(values.header as string[], ':', '--header'),
      ...token,
      ...oauth,
      ...(values.sse ? { sse: true } : {}),
    },
    read,
    ...timeout,
  };
}

function describe(u: UpstreamView): string[] {
  const how =
    u.kind === 'stdio'
      ? [
          safe`  command: ${u.command}`,
          safe`  args: ${JSON.stringify(u.args)}`,
          safe`  env (names only): ${u.env_names?.join(', ') || '-'}`,
          ...confinementLines(u),
          ...processLines(u),
        ]
      : [
          safe`  url: ${u.url}${u.sse ? ' (the old HTTP+SSE transport)' : ''}`,
          safe`  headers (names only): ${u.header_names?.join(', ') || '-'}`,
          safe`  token from the vault: ${u.token_keychain ?? '-'}`,
          ...(u.oauth ? [signInLine(u.oauth)] : []),
        ];
  const h = u.health;
  return [
    safe`${u.id}  ${u.kind}  ${u.enabled ? 'enabled' : 'disabled'}  ${h.status.replace(/_/g, ' ')}${h.protocol ? ` (${h.protocol})` : ''}`,
    ...how,
    safe`  tools: ${u.tools.approved} approved, ${u.tools.quarantined} quarantined, ${u.tools.hidden} hidden, ${u.tools.removed} removed; timeout ${u.timeout_ms} ms; restarts ${h.restarts}${h.last_error ? `; last error: ${h.last_error}` : ''}`,
    safe`  prompts: ${u.prompts.approved} approved, ${u.prompts.quarantined} quarantined, ${u.prompts.hidden} hidden, ${u.prompts.removed} removed`,
    ...(u.views && Object.values(u.views).some((n) => n > 0)
      ? [
          safe`  views: ${u.views.approved} approved, ${u.views.quarantined} quarantined, ${u.views.hidden} hidden, ${u.views.removed} removed`,
        ]
      : []),
    ...u.problems.map((p) => safe`  not offered: ${p}`),
  ];
}

const diffLines = (changes: FieldChange[]) =>
  changes.flatMap((c) => [
    safe`  ${c.field}:`,
    ...(c.before !== undefined ? [safe`    - ${JSON.stringify(c.before)}`] : []),
    ...(c.after !== undefined ? [safe`    + ${JSON.stringify(c.after)}`] : []),
  ]);

/** What changed in each quarantined tool, prompt and view, old -> new, for `review ID` without an action. */
const pendingText = (
  tools: UpstreamToolView[],
  prompts: UpstreamPromptView[],
  views: UpstreamViewView[],
  instructions: UpstreamInstructionsView | null | undefined,
) =>
  [
    ...tools
      .filter((t) => t.pending)
      .flatMap((t) => [
        safe`${t.name}  ${t.pending!.reason}  ${t.hash ?? '(new)'} -> ${t.pending!.hash}`,
        ...diffLines(t.pending!.changes),
      ]),
    ...prompts
      .filter((p) => p.pending)
      .flatMap((p) => [
        safe`prompt ${p.name}  ${p.pending!.reason}  ${p.hash ?? '(new)'} -> ${p.pending!.hash}`,
        ...diffLines(p.pending!.changes),
      ]),
    ...views
      .filter((v) => v.pending)
      .flatMap((v) => [
        safe`view ${v.name}  ${v.pending!.reason}  ${v.hash ?? '(new)'} -> ${v.pending!.hash}`,
        ...diffLines(v.pending!.changes.filter((c) => c.field !== 'content_hash')),
        ...viewLines(v),
      ]),
    ...(instructions?.pending ? instructionsLines(instructions) : []),
  ].join('\n') || 'Nothing waits for review.';

/** `gatehouse upstreams add|list|show|remove|enable|disable|test|tools|prompts|review|grant|recipes|recipe|login|logout` */
export async function upstreams(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  const cut = rest.indexOf('--');
  const { values, positionals } = parse(cut === -1 ? rest : rest.slice(0, cut), FLAGS);
  const command = cut === -1 ? [] : rest.slice(cut + 1);
  const json = !!values.json;
  const id = positionals[0];
  if (sub !== 'list' && !id)
    throw new UsageError(`upstreams ${sub} needs an upstream id (see: gatehouse upstreams list)`);
  const input = sub === 'add' ? addInput(id!, values, command, await clientSecret(values)) : null;
  await withConnection(values, async (c) => {
    if (sub === 'add') {
      const d = unwrap(await c.send('upstreams.add', input));
      if (d.oauth && d.oauth.state !== 'signed_in')
        return out(json, d, () =>
          [
            safe`Added upstream ${d.id}; sign in to list and pin its tools: gatehouse upstreams login ${d.id}`,
            ...describe(d),
          ].join('\n'),
        );
      return out(json, d, () =>
        [
          safe`Added upstream ${d.id}; its tools and prompts are pinned as listed now (changed or new ones wait for: gatehouse upstreams review ${d.id}).`,
          ...describe(d),
          toolRows(d.tool_list),
          ...(d.prompt_list.length ? [promptRows(d.prompt_list)] : []),
          ...(d.view_list?.length ? [viewRows(d.view_list)] : []),
          ...(d.instructions ? instructionsLines(d.instructions) : []),
        ].join('\n'),
      );
    }
    if (sub === 'list') {
      const rows = unwrap(await c.dispatch('upstreams.list', {}));
      return out(json, rows, () =>
        table(
          rows.map((u) => ({
            id: u.id,
            kind: u.kind,
            status: u.health.status.replace(/_/g, ' '),
            protocol: u.health.protocol,
            approved: u.tools.approved,
            quarantined: u.tools.quarantined,
            restarts: u.health.restarts,
            latency_ms: u.health.latency_ms,
            sandbox: u.confinement?.state ?? '-',
            last_error: u.health.last_error,
          })),
          [
            'id',
            'kind',
            'status',
            'sandbox',
            'protocol',
            'approved',
            'quarantined',
            'restarts',
            'latency_ms',
            'last_error',
          ],
        ),
      );
    }
    if (sub === 'show') {
      const d: UpstreamDetail = unwrap(await c.dispatch('upstreams.get', { id: id! }));
      return out(json, d, () =>
        [
          ...describe(d),
          toolRows(d.tool_list),
          ...(d.prompt_list.length ? [promptRows(d.prompt_list)] : []),
          ...(d.view_list?.length ? [viewRows(d.view_list)] : []),
          ...(d.instructions ? instructionsLines(d.instructions) : []),
          ...(d.stderr.length ? ['stderr (last lines):', ...d.stderr.slice(-20).map((l) => safe`  ${l}`)] : []),
        ].join('\n'),
      );
    }
    if (sub === 'tools') {
      const tools = unwrap(await c.dispatch('upstreams.tools', { id: id! }));
      return out(json, tools, () => toolRows(tools));
    }
    if (sub === 'prompts') {
      const prompts = unwrap(await c.dispatch('upstreams.prompts', { id: id! }));
      return out(json, prompts, () => (prompts.length ? promptRows(prompts) : safe`Upstream ${id} lists no prompts.`));
    }
    if (sub === 'review') {
      const asked = {
        approve: values.approve ?? [],
        approvePrompts: values['approve-prompt'] ?? [],
        approveViews: values['approve-view'] ?? [],
        ...(values['approve-instructions'] !== undefined
          ? { approveInstructions: values['approve-instructions'] }
          : {}),
        all: !!values['approve-all'],
      };
      const acts = {
        hide: values.hide ?? [],
        read: values.read ?? [],
        write: values.write ?? [],
        hide_prompts: values['hide-prompt'] ?? [],
        ...(values['hide-view']?.length ? { hide_views: values['hide-view'] } : {}),
        ...(values['hide-instructions'] ? { hide_instructions: true } : {}),
      };
      const acting =
        asked.all ||
        [
          asked.approve,
          asked.approvePrompts,
          asked.approveViews,
          acts.hide,
          acts.read,
          acts.write,
          acts.hide_prompts,
          acts.hide_views ?? [],
        ].some((l) => l.length) ||
        asked.approveInstructions !== undefined ||
        !!acts.hide_instructions;
      const detail = async () => unwrap(await c.dispatch('upstreams.get', { id: id! }));
      const views = async () => (await detail()).view_list ?? [];
      // Approvals are bound to the hash the person saw (review-binding.ts): never to whatever waits by the time it arrives.
      const bound =
        asked.all ||
        asked.approve.length ||
        asked.approvePrompts.length ||
        asked.approveViews.length ||
        asked.approveInstructions !== undefined
          ? await bindApprovals(
              id!,
              asked,
              {
                tools: unwrap(await c.dispatch('upstreams.tools', { id: id! })),
                prompts: unwrap(await c.dispatch('upstreams.prompts', { id: id! })),
                views: await views(),
                instructions: (await detail()).instructions ?? null,
              },
              processTerminal,
            )
          : { consent: [], prompt_consent: [] };
      const tools = unwrap(
        acting
          ? await c.dispatch('upstreams.review', { id: id!, ...acts, ...bound })
          : await c.dispatch('upstreams.tools', { id: id! }),
      );
      const prompts = unwrap(await c.dispatch('upstreams.prompts', { id: id! }));
      // --json answers the tools, as before prompts were pinned (scripts read it); the prompts: upstreams prompts ID --json
      const after = await detail();
      const viewList = after.view_list ?? [];
      return out(json, tools, () =>
        acting
          ? [
              toolRows(tools),
              ...(prompts.length ? [promptRows(prompts)] : []),
              ...(viewList.length ? [viewRows(viewList)] : []),
              ...(after.instructions ? instructionsLines(after.instructions) : []),
            ].join('\n')
          : pendingText(tools, prompts, viewList, after.instructions),
      );
    }
    if (sub === 'grant') {
      const d = unwrap(await c.dispatch('upstreams.grant', { id: id!, ...sandboxInput(values).sandbox }));
      return out(json, d, () =>
        [safe`Changed the grants of ${d.id}; it restarts with them.`, ...describe(d)].join('\n'),
      );
    }
    if (sub === 'process') {
      const d = unwrap(await c.send('upstreams.process', { id: id!, ...processInput(values, true).process }));
      return out(json, d, () =>
        [safe`Changed how ${d.id} runs its processes; it restarts with it.`, ...describe(d)].join('\n'),
      );
    }
    if (sub === 'recipes') {
      const views = unwrap(await c.dispatch('upstreams.recipes', { id: id! }));
      return out(json, views, () => recipeLines(views, id!));
    }
    if (sub === 'recipe') {
      const tool = positionals[1];
      if (!tool) throw new UsageError('upstreams recipe ID TOOL needs the write tool (its own name, e.g. write_file)');
      const views = unwrap(
        values.remove
          ? await c.dispatch('upstreams.recipe_remove', { id: id!, tool })
          : await c.send('upstreams.recipe_set', { id: id!, recipe: recipeInput(tool, values) }),
      );
      const done = values.remove
        ? safe`Removed your recipe for ${tool} on ${id!}.`
        : safe`Saved your recipe for ${tool} on ${id!}: the next staging of it uses it.`;
      return out(json, views, () => [done, recipeLines(views, id!)].join('\n'));
    }
    if (sub === 'login') return login(c, id!, { json, browser: !values['no-browser'] });
    if (sub === 'logout') return logout(c, id!, json);
    if (sub === 'remove') {
      const r = unwrap(await c.dispatch('upstreams.remove', { id: id! }));
      return out(
        json,
        r,
        () => safe`Removed upstream ${r.id}: its tools are gone and its secrets deleted from the vault.`,
      );
    }
    if (sub === 'enable' || sub === 'disable') {
      const v = unwrap(await c.dispatch(sub === 'enable' ? 'upstreams.enable' : 'upstreams.disable', { id: id! }));
      return out(json, v, () => describe(v).join('\n'));
    }
    if (sub === 'test') {
      const t = unwrap(await c.dispatch('upstreams.test', { id: id! }));
      // A failed test is a failed command (exit 1), so scripts can rely on it.
      if (!t.ok) throw new GatehouseError('upstream_unavailable', t.error ?? `upstream '${t.id}' did not answer`);
      return out(json, t, () => safe`${t.id}: ok, ${t.tools} tools, ${t.protocol ?? '?'}, ${t.latency_ms} ms`);
    }
    throw new UsageError(`unknown upstreams command '${sub ?? ''}'`);
  });
}
