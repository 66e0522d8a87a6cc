import type { z } from 'zod';
import type {
  ClientConnectAnswer,
  ClientImportAnswer,
  ClientImportInput,
  ClientPlanInput,
  ClientPlanItem,
  ClientReportView,
  ClientRestoreAnswer,
} from '../../contract/clients.ts';
import type { ClientId } from '../../contract/client-locations.ts';

/**
 * What the action handlers need of the MCP clients' config files
 * (main/clients/clients-service.ts implements it), so the core stays free of
 * the file system. Reached only after `invoke` checked the caller: people only.
 */
export interface ClientActions {
  list(): Promise<ClientReportView[]>;
  plan(input: z.output<typeof ClientPlanInput>): Promise<ClientPlanItem[]>;
  importOne(input: z.output<typeof ClientImportInput>): Promise<ClientImportAnswer>;
  connect(client: ClientId): Promise<ClientConnectAnswer>;
  restore(client: ClientId): Promise<ClientRestoreAnswer>;
}
