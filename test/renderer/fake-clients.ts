import { sandboxOf, type ClientId, type ClientPlanItem, type ClientReportView } from '../../main/contract/index.ts';

/**
 * The MCP clients the console's fixtures have: Cursor with a server that can be
 * imported, one that stays in it, and Gatehouse's own entry; the actions act on
 * this state as the service would (main/clients/).
 */
export interface FakeClientsState {
  reports: ClientReportView[];
  connected: string[];
}

export function initialClients(): FakeClientsState {
  return {
    connected: [],
    reports: [
      {
        client: 'cursor',
        label: 'Cursor',
        locations: [
          {
            scope: 'user',
            file: '/home/ada/.cursor/mcp.json',
            read_only: false,
            error: null,
            servers: [
              {
                name: 'files',
                how: {
                  kind: 'stdio',
                  command: 'npx',
                  args: ['-y', 'server-filesystem', '/tmp'],
                  env_names: ['API_KEY'],
                },
                disabled: false,
                gatehouse: false,
                imported_as: null,
                stays: null,
                placeholders: [],
              },
              {
                name: 'per-workspace',
                how: { kind: 'stdio', command: 'srv', args: ['${workspaceFolder}'], env_names: [] },
                disabled: false,
                gatehouse: false,
                imported_as: null,
                stays: 'uses ${workspaceFolder}, which only the client can resolve (per workspace)',
                placeholders: ['${workspaceFolder}'],
              },
            ],
          },
        ],
      },
    ],
  };
}

export function clientHandlers(s: FakeClientsState) {
  const servers = (client: string) =>
    s.reports
      .filter((r) => r.client === client)
      .flatMap((r) => r.locations.flatMap((l) => l.servers.map((x) => ({ l, x }))));
  return {
    'clients.list': () => s.reports,
    'clients.plan': (input: { client: string; servers?: string[]; as?: Record<string, string> }): ClientPlanItem[] =>
      servers(input.client).map(({ l, x }) => ({
        scope: l.scope,
        file: l.file,
        server: x.name,
        upstream: x.stays ? null : (input.as?.[x.name] ?? x.name),
        skip: x.stays
          ? `stays in the client: ${x.stays}`
          : x.imported_as
            ? `imported already, as upstream ${x.imported_as}`
            : null,
        how: x.how,
        placeholders: x.placeholders,
        sandbox: x.how?.kind === 'stdio' ? sandboxOf(x.how.command ?? '', x.how.args ?? [], undefined) : null,
      })),
    'clients.import': (input: { client: string; server: string; as?: string }) => {
      const name = input.server.split(':').pop()!;
      const found = servers(input.client).find(({ x }) => x.name === name)!;
      found.x.imported_as = input.as ?? name;
      return {
        server: name,
        scope: found.l.scope,
        id: found.x.imported_as,
        phase: 'pinned' as const,
        tools: 14,
        prompts: 0,
        sign_in: false,
      };
    },
    'clients.connect': (input: { client: ClientId }) => {
      s.connected.push(input.client);
      return {
        client: input.client,
        files: [
          {
            file: '/home/ada/.cursor/mcp.json',
            backup: '/data/client-backups/cursor.bak',
            entry_name: 'gatehouse',
            removed: ['files'],
            readable_by_others: false,
          },
        ],
        skipped: [],
        token_id: 'tok_9',
      };
    },
    'clients.restore': (input: { client: string }) => {
      s.connected = s.connected.filter((c) => c !== input.client);
      return [{ file: '/home/ada/.cursor/mcp.json', how: 'bytes' as const, put_back: ['files'], kept: [] }];
    },
  };
}
