import type { ApiDispatch, ApiInput } from '../contract/api.ts';
import type { ClientId, ClientLocation, PlaceOf } from '../contract/client-locations.ts';
import { RESERVED_UPSTREAM_IDS, SandboxGrantsInput, UPSTREAM_ID } from '../contract/upstreams.ts';
import { readState, updateState, type ClientsState } from './clients-state.ts';
import { discoverClient, type FoundServer, type ImportedAs } from './discover.ts';

/**
 * `gatehouse clients import CLIENT`: each chosen server of the client becomes
 * an upstream through the same `upstreams.add` action as `gatehouse upstreams
 * add` (so the same consent: the command, arguments and env names are shown
 * first, then the tools are listed and pinned), its env and header values
 * going to the vault with the upstream, never to a file of ours. One server's
 * failure is reported and the next one goes on.
 */

export type AddInput = ApiInput<'upstreams.add'>;

export interface PlannedServer {
  client: ClientId;
  location: ClientLocation;
  server: FoundServer;
  /** the upstream id it becomes; null when it stays in the client */
  id: string | null;
  input: AddInput | null;
  /** why it is not imported (stays in the client, already imported, an id clash) */
  skip: string | null;
}

export interface ImportChoice {
  /** `NAME` or `SCOPE:NAME`; none = every server of the client */
  servers: string[];
  /** `[SCOPE:]NAME` -> the upstream id to use */
  as: Map<string, string>;
  /** what the person grants the stdio servers imported (docs/upstreams.md, "Confinement") */
  grants?: ImportGrant[];
}

/**
 * One `--allow-write`, `--allow-read`, `--allow-net` or `--unconfined` of an
 * import: for the server named (`NAME` or `SCOPE:NAME`, as `--as`), or for
 * the only stdio server imported when `server` is null.
 */
export interface ImportGrant {
  server: string | null;
  /** `per-client`: one process per client token (docs/upstreams.md, "One process per client"), not a sandbox grant */
  kind: 'read' | 'write' | 'net' | 'unconfined' | 'per-client';
  /** the folder or host; empty for unconfined and per-client */
  value: string;
}

const grantFlag = (g: ImportGrant) =>
  g.kind === 'unconfined' || g.kind === 'per-client' ? `--${g.kind}` : `--allow-${g.kind}`;
const bare = (g: ImportGrant) => g.kind === 'unconfined' || g.kind === 'per-client';
const keyOf = (p: PlannedServer) => `${p.location.scope}:${p.server.name}`;

/**
 * Puts each grant on the stdio server it names. Every problem is reported
 * before anything runs: a grant naming a server this import does not start,
 * an unscoped one with more (or fewer) than one stdio server, a folder or
 * host the contract refuses. Servers given no grant keep the service's
 * defaults (the suggestions of their command line).
 */
function applyGrants(planned: PlannedServer[], grants: readonly ImportGrant[]): string[] {
  const stdio = planned.filter((p) => p.input?.transport.kind === 'stdio');
  const choices = stdio.map(keyOf).join(', ') || 'none';
  const errors: string[] = [];
  const per = new Map<PlannedServer, { unconfined: boolean; read: string[]; write: string[]; net: string[] }>();
  for (const g of grants) {
    const shown = `${grantFlag(g)}${g.value ? ` ${g.value}` : ''}`;
    const target = g.server === null ? stdio : stdio.filter((p) => p.server.name === g.server || keyOf(p) === g.server);
    if (g.server === null && target.length !== 1) {
      errors.push(
        `${shown}: ${stdio.length ? `${stdio.length} stdio servers are imported` : 'no stdio server is imported'}; say which, ${grantFlag(g)} ${bare(g) ? 'NAME' : `NAME=${g.value}`} (stdio servers: ${choices})`,
      );
      continue;
    }
    if (target.length === 0) {
      errors.push(`${shown}: "${g.server}" is not a stdio server this import starts (stdio servers: ${choices})`);
      continue;
    }
    if (target.length > 1) {
      errors.push(
        `${shown}: "${g.server}" names ${target.length} servers: add its scope (${target.map(keyOf).join(', ')})`,
      );
      continue;
    }
    const p = target[0]!;
    if (g.kind === 'per-client') {
      p.input!.process = { mode: 'per-client' };
      continue;
    }
    const s = per.get(p) ?? { unconfined: false, read: [], write: [], net: [] };
    if (g.kind === 'unconfined') s.unconfined = true;
    else s[g.kind].push(g.value);
    per.set(p, s);
  }
  for (const [p, s] of per) {
    const parsed = SandboxGrantsInput.safeParse(s);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        const [kind, at] = issue.path;
        const list = kind === 'read' || kind === 'write' || kind === 'net' ? s[kind] : null;
        const value = list && typeof at === 'number' ? ` ${list[at]}` : '';
        errors.push(`${keyOf(p)}: ${list ? `--allow-${String(kind)}` : 'grant'}${value}: ${issue.message}`);
      }
      continue;
    }
    const t = p.input!.transport;
    if (t.kind === 'stdio')
      t.sandbox = { ...(s.unconfined ? { unconfined: true } : {}), read: s.read, write: s.write, net: s.net };
  }
  return errors;
}

/** A server name as an upstream id: lower case, other characters as hyphens, 32 at most; null when nothing fits. */
export function idFor(name: string): string | null {
  const id = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 32)
    .replace(/-+$/, '');
  return UPSTREAM_ID.test(id) && !RESERVED_UPSTREAM_IDS.includes(id) && !(id in Object.prototype) ? id : null;
}

const pairs = (m: Record<string, string>) => Object.entries(m).map(([name, value]) => ({ name, value }));

function addInput(id: string, s: FoundServer): AddInput | null {
  const spec = s.spec!;
  if (spec.kind === 'stdio')
    return { id, transport: { kind: 'stdio', command: spec.command, args: spec.args, env: pairs(spec.env) } };
  return {
    id,
    transport: {
      kind: 'http',
      url: spec.url,
      headers: pairs(spec.headers),
      ...(spec.oauth ? { oauth: {} } : {}),
      ...(spec.transport === 'sse' ? { sse: true } : {}),
    },
  };
}

export function importedAsFrom(state: ClientsState, upstreamIds: ReadonlySet<string>): ImportedAs {
  return (l, name) =>
    state.imports.find(
      (r) =>
        r.client === l.client &&
        r.file === l.file &&
        r.path.join('\0') === l.path.join('\0') &&
        r.name === name &&
        upstreamIds.has(r.upstream),
    )?.upstream ?? null;
}

/** What an import would do, server by server; nothing is run or written. */
export async function planImport(
  client: ClientId,
  place: PlaceOf,
  dataDir: string,
  existing: ReadonlySet<string>,
  choice: ImportChoice,
): Promise<{ planned: PlannedServer[]; unknown: string[]; unreadable: string[]; bad_grants: string[] }> {
  const state = await readState(dataDir);
  const report = await discoverClient(client, place, importedAsFrom(state, existing));
  const wanted = (l: ClientLocation, name: string) =>
    choice.servers.length === 0 || choice.servers.includes(name) || choice.servers.includes(`${l.scope}:${name}`);
  const taken = new Map<string, string>();
  const planned: PlannedServer[] = [];
  for (const location of report.locations) {
    for (const server of location.servers) {
      if (!wanted(location, server.name)) continue;
      const base = { client, location, server, id: null, input: null };
      const named = choice.as.get(`${location.scope}:${server.name}`) ?? choice.as.get(server.name);
      if (server.gatehouse) {
        planned.push({ ...base, skip: 'it is Gatehouse already' });
        continue;
      }
      if (server.imported_as) {
        planned.push({ ...base, id: server.imported_as, skip: `imported already, as upstream ${server.imported_as}` });
        continue;
      }
      if (server.stays || !server.spec) {
        planned.push({ ...base, skip: `stays in ${report.label}: ${server.stays ?? 'not readable'}` });
        continue;
      }
      const id = named ?? idFor(server.name);
      const how = `choose one with --as ${location.scope}:${server.name}=ID`;
      if (!id) {
        planned.push({ ...base, skip: `"${server.name}" makes no upstream id (1-32 of a-z 0-9 -): ${how}` });
        continue;
      }
      if (existing.has(id)) {
        planned.push({ ...base, id, skip: `an upstream "${id}" exists already: ${how}` });
        continue;
      }
      if (taken.has(id)) {
        planned.push({ ...base, id, skip: `"${id}" is taken by ${taken.get(id)} in this import: ${how}` });
        continue;
      }
      taken.set(id, `${location.scope}:${server.name}`);
      planned.push({ ...base, id, input: addInput(id, server), skip: null });
    }
  }
  const names = new Set(report.locations.flatMap((l) => l.servers.flatMap((s) => [s.name, `${l.scope}:${s.name}`])));
  return {
    planned,
    unknown: choice.servers.filter((n) => !names.has(n)),
    unreadable: report.locations.filter((l) => l.error).map((l) => l.error!),
    bad_grants: applyGrants(planned, choice.grants ?? []),
  };
}

export type ImportEvent =
  | { server: string; scope: string; phase: 'starting'; id: string }
  | {
      server: string;
      scope: string;
      phase: 'pinned';
      id: string;
      tools: number;
      prompts: number;
      sign_in: boolean;
      /** each pinned tool as clients see it, with its class: what the person consented to */
      tool_list: Array<{ name: string; class: 'read' | 'write' }>;
    }
  | { server: string; scope: string; phase: 'failed'; id: string; error: string };

/** Runs the plan one server at a time, telling `progress` as each starts and ends. */
export async function runImport(
  planned: PlannedServer[],
  dataDir: string,
  dispatch: ApiDispatch,
  progress: (e: ImportEvent) => void,
  now = new Date(),
): Promise<ImportEvent[]> {
  const done: ImportEvent[] = [];
  for (const p of planned) {
    if (!p.input || !p.id) continue;
    const who = { server: p.server.name, scope: p.location.scope, id: p.id };
    progress({ ...who, phase: 'starting' });
    let r = await dispatch('upstreams.add', p.input);
    // A remote that answers 401 without an OAuth marker in the client's entry (Claude Code keeps its sign-ins elsewhere).
    if (
      !r.ok &&
      p.input.transport.kind === 'http' &&
      !p.input.transport.oauth &&
      !p.input.transport.headers?.length &&
      /\b401\b|unauthori[sz]ed/i.test(r.message)
    )
      r = await dispatch('upstreams.add', { ...p.input, transport: { ...p.input.transport, oauth: {} } });
    const e: ImportEvent = r.ok
      ? {
          ...who,
          phase: 'pinned',
          tools: r.data.tool_list.length,
          prompts: r.data.prompt_list.length,
          sign_in: !!r.data.oauth && r.data.oauth.state !== 'signed_in',
          tool_list: r.data.tool_list.map((t) => ({ name: t.name, class: t.class })),
        }
      : { ...who, phase: 'failed', error: r.message };
    if (r.ok)
      await updateState(dataDir, (s) => {
        s.imports.push({
          client: p.client,
          scope: p.location.scope,
          file: p.location.file,
          path: p.location.path,
          name: p.server.name,
          upstream: p.id!,
          at: now.toISOString(),
        });
      });
    progress(e);
    done.push(e);
  }
  return done;
}
