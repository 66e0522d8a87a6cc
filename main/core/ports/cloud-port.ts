import type { z } from 'zod';
import type { ApiActions, ApiOutput } from '../../contract/api.ts';
import type { CloudHealth } from '../../contract/health.ts';
import type { CloudStatusView, CloudUsageView } from '../../contract/cloud-actions.ts';

/** The console's cloud actions (main/contract/cloud-actions.ts): each one a method of the port, named by the action. */
export const CLOUD_ACTIONS = [
  'cloud.status',
  'cloud.connect',
  'cloud.activate',
  'cloud.deactivate',
  'cloud.sync',
  'cloud.disconnect',
  'cloud.usage',
  'updates.status',
  'updates.check',
] as const;
export type CloudAction = (typeof CLOUD_ACTIONS)[number];

/** Input and answer straight from API_ACTIONS, so the port cannot drift from the contract. */
export type CloudActionMethods = {
  [A in CloudAction]: (input: z.output<ApiActions[A]['input']>) => Promise<ApiOutput<A>>;
};

/**
 * What the action handlers need of the cloud client (main/cloud-client implements
 * it in cloud-actions-port.ts), so the core stays free of HTTP. An action
 * method that may send a request is reached only after `invoke` verified
 * the caller (people only, see API_ACTIONS); the synchronous views
 * (`connected`, `health`, `status`, `cachedUsage`) never send one.
 */
export interface CloudActions extends CloudActionMethods {
  connected(): boolean;
  health(): CloudHealth;
  status(): CloudStatusView;
  /** the usage figures as last fetched, with the local counts (no request) */
  cachedUsage(): CloudUsageView;
}
