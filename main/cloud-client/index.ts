/**
 * main/cloud-client: the app's client for the vendor's cloud gateway
 * (docs/cloud-client.md). The composition root needs only what is
 * exported here: `CloudClient.open(...)` gives the client, whose
 * `entitlements` is the EntitlementSource, `usage` the UsageSink, `api` the
 * typed endpoints and `status()` the health data.
 */
export { CloudClient, OUTBOX_FILE } from './cloud-client.ts';
export type {
  CloudClientOptions,
  ConnectInput,
  ConnectResult,
  DisconnectResult,
  SyncResult,
} from './cloud-client-types.ts';
export { CloudApi, type Call } from './cloud-api.ts';
export { CloudEntitlements } from './cloud-entitlements.ts';
export { UsageOutbox, CLOUD_RECORDED_EVENTS, type FlushResult, type OutboxInput } from './usage-outbox.ts';
export { CloudClientError, isCloudClientError } from './errors.ts';
export { cloudAiFor, cloudAiProvider, cloudAiSource, type AiUse } from './cloud-ai.ts';
export { parsePublicKey, fingerprintOf, verifyManifest, type PinnedKey } from './pinned-key.ts';
export { normalizeGatewayUrl } from './gateway-url.ts';
export type { CallMode, Timeouts } from './cloud-http.ts';
export type { Transport } from './transport.ts';
export type { Decision, RefusalCode } from './grant-policy.ts';
