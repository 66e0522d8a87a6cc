import { homedir } from 'node:os';
import type { ApiDispatch } from '../contract/api.ts';
import type { BridgeLaunch } from '../contract/client-config.ts';
import type { ClientPlanItem, ClientReportView, ClientServerView } from '../contract/clients.ts';
import type { PlaceOf } from '../contract/client-locations.ts';
import type { ClientActions } from '../core/ports/clients-port.ts';
import { GatehouseError } from '../core/errors.ts';
import { readState } from './clients-state.ts';
import { connectClient } from './connect.ts';
import { discoverAll, type ClientReport, type FoundServer } from './discover.ts';
import { importedAsFrom, planImport, runImport, type ImportGrant } from './import.ts';
import { sandboxOf } from '../contract/sandbox-grants.ts';
import { statefulServer } from '../contract/stateful-servers.ts';
import { restoreClient } from './restore.ts';

/**
 * The console's way to `gatehouse clients` (docs/clients.md): the same code
 * as the CLI, run by the service on its own user's files (project scope is
 * the service's current folder). Import is one server per call, so the
 * screen shows each server's progress and one failure stops nothing.
 */

export interface ClientsServiceDeps {
  dataDir: string;
  /** the service's own actions, as the console calls them (upstreams.add, tokens.create, ...) */
  dispatch: () => ApiDispatch;
  mcpUrl: () => string;
  launch: BridgeLaunch;
  vault: 'keychain' | 'file' | 'auto';
  place?: PlaceOf;
}

/** What a server runs, names only: the values stay with the client (and, once imported, in the vault). */
export function howOf(s: FoundServer): ClientServerView['how'] {
  const spec = s.spec;
  if (!spec) return null;
  if (spec.kind === 'stdio')
    return { kind: 'stdio', command: spec.command, args: spec.args, env_names: Object.keys(spec.env) };
  return {
    kind: 'http',
    url: spec.url,
    header_names: Object.keys(spec.headers),
    sse: spec.transport === 'sse',
    oauth: spec.oauth,
  };
}

const serverView = (s: FoundServer): ClientServerView => ({
  name: s.name,
  how: howOf(s),
  disabled: s.disabled,
  gatehouse: s.gatehouse,
  imported_as: s.imported_as,
  stays: s.stays,
  placeholders: s.placeholders,
});

/** A client's report as shown (console, `clients list --json`): names of env variables and headers, never a value. */
export const reportView = (r: ClientReport): ClientReportView => ({
  client: r.client,
  label: r.label,
  locations: r.locations.map((l) => ({
    scope: l.scope,
    file: l.file,
    read_only: l.readOnly,
    error: l.error,
    servers: l.servers.map(serverView),
  })),
});

export function createClientsService(deps: ClientsServiceDeps): ClientActions {
  const place = () =>
    deps.place ?? { platform: process.platform, env: process.env, home: homedir(), cwd: process.cwd() };
  const upstreamIds = async () => {
    const r = await deps.dispatch()('upstreams.list', {});
    if (!r.ok) throw new GatehouseError(r.code, r.message);
    return new Set(r.data.map((u) => u.id));
  };
  const plan = async (client: Parameters<ClientActions['plan']>[0], grants: ImportGrant[] = []) => {
    const p = await planImport(client.client, place(), deps.dataDir, await upstreamIds(), {
      servers: client.servers,
      as: new Map(Object.entries(client.as)),
      grants,
    });
    if (p.unreadable.length) throw new GatehouseError('invalid_value', p.unreadable.join('\n'));
    if (p.unknown.length) throw new GatehouseError('not_found', `no server named ${p.unknown.join(', ')}`);
    if (p.bad_grants.length) throw new GatehouseError('invalid_value', p.bad_grants.join('\n'));
    return p.planned;
  };
  const connectDeps = () => ({
    dataDir: deps.dataDir,
    dispatch: deps.dispatch(),
    place: place(),
    mcpUrl: deps.mcpUrl(),
    launch: deps.launch,
    vault: deps.vault,
  });
  return {
    async list() {
      const importedAs = importedAsFrom(await readState(deps.dataDir), await upstreamIds());
      return (await discoverAll(place(), importedAs)).map(reportView);
    },
    async plan(input) {
      return (await plan(input)).map((p): ClientPlanItem => ({
        scope: p.location.scope,
        file: p.location.file,
        server: p.server.name,
        upstream: p.id,
        skip: p.skip,
        how: howOf(p.server),
        placeholders: p.server.placeholders,
        sandbox:
          p.input?.transport.kind === 'stdio'
            ? sandboxOf(p.input.transport.command, p.input.transport.args ?? [], p.input.transport.sandbox)
            : null,
        process_suggestion:
          p.input?.transport.kind === 'stdio'
            ? statefulServer(p.input.transport.command, p.input.transport.args ?? [])
            : null,
      }));
    },
    async importOne(input) {
      const g = input.sandbox;
      const grants: ImportGrant[] = [
        ...(g?.unconfined ? [{ server: input.server, kind: 'unconfined' as const, value: '' }] : []),
        ...(['read', 'write', 'net'] as const).flatMap((kind) =>
          (g?.[kind] ?? []).map((value) => ({ server: input.server, kind, value })),
        ),
      ];
      const planned = await plan(
        { client: input.client, servers: [input.server], as: input.as ? { [input.server]: input.as } : {} },
        grants,
      );
      if (planned.length !== 1)
        throw new GatehouseError(
          'conflict',
          `"${input.server}" names ${planned.length} servers: add its scope (user:NAME)`,
        );
      const p = planned[0]!;
      if (!p.input) throw new GatehouseError('conflict', `${p.location.scope}:${p.server.name}: ${p.skip}`);
      // One process per client, as the person chose it on the import screen (the service refuses it for an HTTP server).
      if (input.process) p.input.process = input.process;
      const [e] = await runImport([p], deps.dataDir, deps.dispatch(), () => undefined);
      if (!e || e.phase === 'starting') throw new GatehouseError('internal_error', 'the import gave no answer');
      return e;
    },
    connect: (client) => connectClient(client, connectDeps()),
    restore: (client) => restoreClient(client, { dataDir: deps.dataDir, dispatch: deps.dispatch() }),
  };
}
