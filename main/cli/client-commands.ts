import { homedir } from 'node:os';
import { createInterface } from 'node:readline/promises';
import { CLIENT_IDS, CLIENT_LABELS, type ClientId, type PlaceOf } from '../contract/client-locations.ts';
import { DEFAULT_PORT, MCP_PATH } from '../contract/health.ts';
import { sandboxOf } from '../contract/sandbox-grants.ts';
import { statefulServer } from '../contract/stateful-servers.ts';
import { bridgeLaunchFor } from '../bridge-launch.ts';
import { connectClient } from '../clients/connect.ts';
import { discoverAll, discoverClient, type ClientReport, type FoundServer } from '../clients/discover.ts';
import {
  importedAsFrom,
  planImport,
  runImport,
  type ImportEvent,
  type ImportGrant,
  type PlannedServer,
} from '../clients/import.ts';
import { readState } from '../clients/clients-state.ts';
import { restoreClient } from '../clients/restore.ts';
import { reportView } from '../clients/clients-service.ts';
import { readRuntime } from '../store/runtime-file.ts';
import { GatehouseError } from '../core/errors.ts';
import { dataDirOf, out, parse, vaultChoice, withConnection } from './args.ts';
import { safe, unwrap, UsageError } from './output.ts';
import { plannedSandboxLines } from './upstream-sandbox-text.ts';

/** `gatehouse clients list|import|connect|restore` (docs/clients.md). */

const FLAGS = {
  server: { type: 'string', multiple: true },
  as: { type: 'string', multiple: true },
  'dry-run': { type: 'boolean' },
  yes: { type: 'boolean' },
  'allow-write': { type: 'string', multiple: true },
  'allow-read': { type: 'string', multiple: true },
  'allow-net': { type: 'string', multiple: true },
  unconfined: { type: 'string', multiple: true },
  'per-client': { type: 'string', multiple: true },
} as const;

const place = (): PlaceOf => ({ platform: process.platform, env: process.env, home: homedir(), cwd: process.cwd() });

function clientArg(sub: string, v: string | undefined): ClientId {
  if (!v) throw new UsageError(`clients ${sub} needs a client: one of ${CLIENT_IDS.join(', ')}`);
  if (!(CLIENT_IDS as readonly string[]).includes(v))
    throw new UsageError(`unknown client '${v}': one of ${CLIENT_IDS.join(', ')}`);
  return v as ClientId;
}

function asMap(list: string[] | undefined): Map<string, string> {
  const m = new Map<string, string>();
  for (const raw of list ?? []) {
    const at = raw.lastIndexOf('=');
    if (at <= 0 || at === raw.length - 1) throw new UsageError(`--as takes [SCOPE:]NAME=ID (got '${raw}')`);
    m.set(raw.slice(0, at), raw.slice(at + 1));
  }
  return m;
}

/**
 * `--unconfined [[SCOPE:]NAME]`: a bare `--unconfined` (last, or before
 * another flag) is for the only stdio server imported. parseArgs has no
 * optional values, so it is given an empty one.
 */
export const bareUnconfined = (args: string[]): string[] =>
  args.map((a, i) =>
    (a === '--unconfined' || a === '--per-client') && (i === args.length - 1 || args[i + 1]!.startsWith('-'))
      ? `${a}=`
      : a,
  );

/**
 * `--allow-write [[SCOPE:]NAME=]DIR` and the like. A folder is an absolute or
 * `~` path, so a value starting with `/` or `~` is unscoped whatever it
 * holds; otherwise the name ends at the first `=` (a host has none).
 */
function grantsOf(values: Record<string, unknown>): ImportGrant[] {
  const out: ImportGrant[] = [];
  for (const kind of ['write', 'read', 'net'] as const)
    for (const raw of (values[`allow-${kind}`] as string[] | undefined) ?? []) {
      const at = raw.indexOf('=');
      const scoped = at > 0 && !(kind !== 'net' && (raw.startsWith('/') || raw.startsWith('~')));
      if (scoped && at === raw.length - 1)
        throw new UsageError(`--allow-${kind} takes [SCOPE:]NAME=VALUE (got '${raw}')`);
      out.push(
        scoped ? { server: raw.slice(0, at), kind, value: raw.slice(at + 1) } : { server: null, kind, value: raw },
      );
    }
  for (const name of (values.unconfined as string[] | undefined) ?? [])
    out.push({ server: name || null, kind: 'unconfined', value: '' });
  for (const name of (values['per-client'] as string[] | undefined) ?? [])
    out.push({ server: name || null, kind: 'per-client', value: '' });
  return out;
}

/** How a server runs, as `upstreams add` shows it: the command and arguments, env and header NAMES only. */
function howItRuns(s: FoundServer): string[] {
  const spec = s.spec;
  if (!spec) return [];
  if (spec.kind === 'stdio')
    return [
      safe`    command: ${spec.command}`,
      safe`    args: ${JSON.stringify(spec.args)}`,
      safe`    env (names only): ${Object.keys(spec.env).join(', ') || '-'}`,
    ];
  return [
    safe`    url: ${spec.url}${spec.transport === 'sse' ? ' (SSE)' : ''}`,
    safe`    headers (names only): ${Object.keys(spec.headers).join(', ') || '-'}${spec.oauth ? '; signs in with OAuth' : ''}`,
  ];
}

const placeholderNote = (s: FoundServer) =>
  s.placeholders.length
    ? [safe`    kept as written (Gatehouse does not expand them): ${s.placeholders.join(', ')}`]
    : [];

function listText(reports: ClientReport[]): string {
  const lines: string[] = [];
  for (const r of reports) {
    if (!r.locations.length) continue;
    lines.push(safe`${r.label} (${r.client})`);
    for (const l of r.locations) {
      lines.push(safe`  ${l.scope}${l.readOnly ? ' (managed, read-only)' : ''}: ${l.file}`);
      if (l.error) lines.push(safe`    error: ${l.error}`);
      else if (!l.servers.length) lines.push('    no servers');
      for (const s of l.servers) {
        const state = s.gatehouse
          ? 'goes through Gatehouse'
          : s.imported_as
            ? `imported as upstream ${s.imported_as}`
            : s.stays
              ? `stays in the client: ${s.stays}`
              : 'not imported';
        const kind = s.spec ? (s.spec.kind === 'stdio' ? 'stdio' : s.spec.transport === 'sse' ? 'sse' : 'http') : '?';
        lines.push(safe`    ${s.name}  ${kind}${s.disabled ? ' (disabled)' : ''}  ${state}`);
      }
    }
  }
  return lines.join('\n') || 'No MCP client configuration found on this machine.';
}

function planText(planned: PlannedServer[]): string {
  return planned
    .flatMap((p) => [
      p.skip
        ? safe`${p.location.scope}:${p.server.name}  skipped: ${p.skip}`
        : safe`${p.location.scope}:${p.server.name}  -> upstream ${p.id}  (${p.location.file})`,
      ...(p.skip ? [] : [...howItRuns(p.server), ...placeholderNote(p.server), ...sandboxOfPlan(p)]),
    ])
    .join('\n');
}

/** What the OS sandbox will let a stdio server reach (the grants typed and those its command line suggests), and its processes. */
const sandboxOfPlan = (p: PlannedServer) => {
  const t = p.input?.transport;
  if (t?.kind !== 'stdio') return [];
  const suggestion = statefulServer(t.command, t.args ?? []);
  const name = `${p.location.scope}:${p.server.name}`;
  return [
    ...plannedSandboxLines(t.command, t.args ?? [], t.sandbox, '    '),
    p.input?.process?.mode === 'per-client'
      ? safe`    processes: one per client token`
      : suggestion
        ? safe`    processes: one, shared by every client; suggested: ${suggestion} (--per-client ${name})`
        : safe`    processes: one, shared by every client`,
  ];
};

const eventLine = (e: ImportEvent) =>
  e.phase === 'starting'
    ? safe`${e.scope}:${e.server}: starting upstream ${e.id} and listing its tools...`
    : e.phase === 'pinned'
      ? e.sign_in
        ? safe`${e.scope}:${e.server}: added as ${e.id}; sign in to list and pin its tools: gatehouse upstreams login ${e.id}`
        : safe`${e.scope}:${e.server}: ${e.tools} tools${e.prompts ? ` and ${e.prompts} prompts` : ''} pinned (upstream ${e.id})`
      : safe`${e.scope}:${e.server}: failed: ${e.error}`;

async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

export async function clients(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  const { values, positionals } = parse(bareUnconfined(rest), FLAGS);
  const json = !!values.json;
  const dataDir = dataDirOf(values);
  if (sub !== 'import' && grantsOf(values).length)
    throw new UsageError(
      '--allow-write, --allow-read, --allow-net, --unconfined and --per-client are for clients import',
    );
  if (sub === 'list') {
    const only = positionals[0] ? clientArg('list', positionals[0]) : null;
    const reports = await withConnection(values, async (c) => {
      const ids = new Set(unwrap(await c.dispatch('upstreams.list', {})).map((u) => u.id));
      const importedAs = importedAsFrom(await readState(dataDir), ids);
      return only ? [await discoverClient(only, place(), importedAs)] : discoverAll(place(), importedAs);
    });
    // --json shows what the console shows: names of env variables and headers, never a value.
    out(json, reports.map(reportView), () => listText(reports));
    return;
  }
  const client = clientArg(sub ?? '', positionals[0]);
  if (sub === 'import') {
    await withConnection(values, async (c) => {
      const existing = new Set(unwrap(await c.dispatch('upstreams.list', {})).map((u) => u.id));
      const plan = await planImport(client, place(), dataDir, existing, {
        servers: values.server ?? [],
        as: asMap(values.as),
        grants: grantsOf(values),
      });
      if (plan.unreadable.length) throw new UsageError(plan.unreadable.join('\n'));
      if (plan.unknown.length)
        throw new UsageError(`${CLIENT_LABELS[client]} has no server named ${plan.unknown.join(', ')}`);
      if (plan.bad_grants.length) throw new UsageError(plan.bad_grants.join('\n'));
      const todo = plan.planned.filter((p) => p.input);
      if (values['dry-run'] || !todo.length) {
        const summary = plan.planned.map((p) => ({
          scope: p.location.scope,
          file: p.location.file,
          server: p.server.name,
          upstream: p.id,
          skip: p.skip,
          ...(p.input?.transport.kind === 'stdio'
            ? {
                sandbox: sandboxOf(p.input.transport.command, p.input.transport.args ?? [], p.input.transport.sandbox),
              }
            : {}),
        }));
        return out(json, { dry_run: !!values['dry-run'], servers: summary }, () =>
          plan.planned.length
            ? `${planText(plan.planned)}${todo.length ? '\n(dry run: nothing was started)' : '\nNothing to import.'}`
            : `${CLIENT_LABELS[client]} has no servers to import.`,
        );
      }
      // The consent of `upstreams add`: what will run is on the screen before anything runs.
      process.stderr.write(`${planText(plan.planned)}\n`);
      if (!values.yes) {
        if (!process.stdin.isTTY)
          throw new UsageError(
            'import starts each server above: read the list, then run again with --yes (or --dry-run to see it only)',
          );
        if (!(await confirm(`Start these ${todo.length} servers, list their tools and pin them? [y/N] `)))
          throw new UsageError('nothing was imported');
      }
      const events = await runImport(todo, dataDir, c.dispatch, (e) => {
        const tools =
          e.phase === 'pinned' && e.tool_list.length
            ? `\n${e.tool_list.map((t) => safe`    ${t.name}  ${t.class}`).join('\n')}`
            : '';
        (json ? process.stderr : process.stdout).write(`${eventLine(e)}${tools}\n`);
      });
      if (json) process.stdout.write(`${JSON.stringify({ dry_run: false, results: events }, null, 2)}\n`);
      const failed = events.filter((e) => e.phase === 'failed').length;
      if (!json)
        process.stdout.write(
          `${events.length - failed} imported, ${failed} failed${events.length - failed ? `; point ${CLIENT_LABELS[client]} at Gatehouse: gatehouse clients connect ${client}` : ''}\n`,
        );
      // A failed server is a failed command (exit 1), after the others were imported.
      if (failed)
        throw new GatehouseError(
          'upstream_unavailable',
          `${failed} of ${events.length} servers could not be imported (see above); the others were`,
        );
    });
    return;
  }
  if (sub === 'connect') {
    await withConnection(values, async (c) => {
      const runtime = await readRuntime(dataDir);
      const r = await connectClient(client, {
        dataDir,
        dispatch: c.dispatch,
        place: place(),
        mcpUrl: runtime?.mcp_url ?? `http://127.0.0.1:${DEFAULT_PORT}${MCP_PATH}`,
        launch: bridgeLaunchFor(dataDir),
        vault: vaultChoice(values.vault),
      });
      out(json, r, () =>
        [
          ...r.files.flatMap((f) => [
            safe`${f.file}: ${f.removed.join(', ')} replaced by "${f.entry_name}" (Gatehouse); backup: ${f.backup}`,
            ...(f.readable_by_others
              ? [safe`  warning: ${f.file} holds the client's token and other users may read it: chmod 600 it`]
              : []),
          ]),
          ...r.skipped.map((s) => safe`${s.file}: left alone: ${s.why}`),
          ...(r.files.length
            ? [`restart ${CLIENT_LABELS[client]} to pick it up; undo with: gatehouse clients restore ${client}`]
            : []),
        ].join('\n'),
      );
    });
    return;
  }
  if (sub === 'restore') {
    await withConnection(values, async (c) => {
      const r = await restoreClient(client, { dataDir, dispatch: c.dispatch });
      out(json, r, () =>
        r
          .flatMap((f) => [
            f.how === 'bytes'
              ? safe`${f.file}: put back as it was before connect`
              : safe`${f.file}: changed since connect; put back ${f.put_back.join(', ') || 'nothing'}, Gatehouse's entry taken out`,
            ...f.kept.map((k) => safe`  kept as the client has it: ${k}`),
          ])
          .join('\n'),
      );
    });
    return;
  }
  throw new UsageError(`unknown clients command '${sub ?? ''}'`);
}
