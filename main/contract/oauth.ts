/** Loopback redirect ports a registration names, so a stored registration stays valid; tried in order. */
export const OAUTH_CALLBACK_PORTS = [47823, 47824, 47825] as const;
export const OAUTH_CALLBACK_PATH = '/oauth/callback';
/** Where the reference cloud gateway serves Gatehouse's Client ID Metadata Document. */
export const CLIENT_METADATA_PATH = '/.well-known/gatehouse/oauth-client.json';
