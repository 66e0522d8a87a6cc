import type { z } from 'zod';
import type { CloudHealth } from '../contract/health.ts';
import type {
  CloudConnectAnswer,
  CloudConnectInput,
  CloudDisconnectAnswer,
  CloudLicenseAnswer,
  CloudStatusView,
  CloudSyncAnswer,
  CloudUsageInput,
  CloudUsageView,
  UpdatesCheckInput,
  UpdatesView,
} from '../contract/cloud-actions.ts';

/**
 * What the action handlers need of the cloud client (main/cloud implements
 * it in cloud-actions-port.ts), so the core stays free of HTTP. A method
 * that may send a request is reached only after `invoke` verified the
 * caller (people only, see API_ACTIONS); `connected`, `health`, `status`,
 * `cachedUsage` and `updatesStatus` never send one.
 */
export interface CloudActions {
  connected(): boolean;
  health(): CloudHealth;
  status(): CloudStatusView;
  connect(input: z.output<typeof CloudConnectInput>): Promise<CloudConnectAnswer>;
  activate(licenseKey: string): Promise<CloudLicenseAnswer>;
  deactivate(): Promise<CloudLicenseAnswer>;
  sync(): Promise<CloudSyncAnswer>;
  disconnect(): Promise<CloudDisconnectAnswer>;
  usage(input: z.output<typeof CloudUsageInput>): Promise<CloudUsageView>;
  /** the usage figures as last fetched, with the local counts (no request) */
  cachedUsage(): CloudUsageView;
  updatesStatus(): UpdatesView;
  updatesCheck(input: z.output<typeof UpdatesCheckInput>): Promise<UpdatesView>;
}
