import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';

/** The one revision of the stateless era we serve (no handshake, `server/discover`). */
export const PROTOCOL_VERSION_2026 = '2026-07-28';

/**
 * Every MCP revision the endpoint serves, newest first: 2026-07-28 and the
 * 2025-era revisions the SDK negotiates with `initialize`. The one list named
 * wherever a version is refused (-32022's `data.supported`) and in
 * `server/discover`'s `supportedVersions`, so a client reads the same truth
 * in both places.
 */
export const SERVED_PROTOCOL_VERSIONS: readonly string[] = [
  PROTOCOL_VERSION_2026,
  ...SUPPORTED_PROTOCOL_VERSIONS.filter((v) => v < PROTOCOL_VERSION_2026),
];

export const servesVersion = (v: string): boolean => SERVED_PROTOCOL_VERSIONS.includes(v);
