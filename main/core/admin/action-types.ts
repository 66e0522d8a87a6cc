import type { ApprovalLinks } from '../staging/approval-links.ts';
import type { z } from 'zod';
import type { AnyAction, ApiActions, ApiOutput } from '../../contract/api.ts';
import type { CloudHealth, HealthReport } from '../../contract/health.ts';
import type { Principal } from '../../contract/principal.ts';
import type { AuditReader, ClientTokenVault, EntitlementSource } from '../ports/ports.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Users } from '../identity/users.ts';
import type { Tokens } from '../identity/tokens.ts';
import type { Staging } from '../staging/staging.ts';
import type { Registry } from '../calls/registry.ts';
import type { SettingsService } from './settings-service.ts';
import type { StatsRecorder } from '../calls/stats.ts';
import type { EventHub } from '../events.ts';
import type { ConsoleSessions } from '../identity/console-sessions.ts';
import type { CloudActions } from '../ports/cloud-port.ts';
import type { UpstreamActions } from '../ports/upstreams-port.ts';
import type { ClientActions } from '../ports/clients-port.ts';
import type { Profiles } from '../identity/profiles.ts';
import type { PolicyActions } from '../policy/policy-gate.ts';
import type { Auditor } from '../calls/auditor.ts';

/**
 * What the action handlers (action-handlers.ts, pro-handlers.ts,
 * cloud-handlers.ts) are given and what each is: apart from the handlers,
 * so the files that make them import these without importing each other.
 */

export interface ActionDeps {
  users: Users;
  tokens: Tokens;
  profiles: Profiles;
  staging: Staging;
  registry: Registry;
  settings: SettingsService;
  stats: StatsRecorder;
  audit: AuditReader;
  clientVault: ClientTokenVault;
  events: EventHub;
  sessions: ConsoleSessions;
  clock: Clock;
  health: () => HealthReport;
  /** the console's address ({base_url}/console/), or null while no HTTP server listens */
  consoleUrl: () => string | null;
  cloud: () => CloudHealth;
  entitlements: () => EntitlementSource;
  /** the cloud client's actions (main/cloud-client); absent where no client runs (unit fixtures) */
  cloudActions?: CloudActions;
  /** the upstream MCP servers (main/plugins/upstream); absent in unit fixtures */
  upstreams?: UpstreamActions;
  /** the MCP clients' config files (main/clients); absent in unit fixtures */
  clients?: ClientActions;
  /** approval links (docs/tasks.md); absent in unit fixtures */
  approvalLinks?: ApprovalLinks;
  /** the tool-call policy (main/policy); absent in unit fixtures */
  policy?: PolicyActions;
  /** the audit log, for the configuration changes that are audited (an upstream's sandbox grants); absent in unit fixtures */
  auditor?: Auditor;
}

/** Per-call facts a transport knows beyond the principal. */
export interface InvokeMeta {
  request_id?: string | null;
}

export type Handler<A extends AnyAction> = (
  input: z.output<ApiActions[A]['input']>,
  principal: Principal,
  meta: InvokeMeta,
) => Promise<ApiOutput<A>>;
export type Handlers = { [A in AnyAction]: Handler<A> };
