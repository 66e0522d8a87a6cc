import { z } from 'zod';
import { lazySchema } from './lazy-schema.ts';

/**
 * The two MCP protocol eras Gatehouse serves and speaks, named by year: `2025`
 * (the initialize handshake, 2025-11-25 and the revisions before it, what most
 * clients speak) and `2026` (2026-07-28: stateless, `server/discover`, the
 * `_meta` envelope).
 */
export const ProtocolEra = lazySchema(() => z.enum(['2026', '2025']));
export type ProtocolEra = z.infer<typeof ProtocolEra>;

/** The MCP SDK names the same two by age: its `legacy` is 2025, its `modern` 2026. */
export const eraOfSdk = (kind: 'legacy' | 'modern'): ProtocolEra => (kind === 'legacy' ? '2025' : '2026');

/** An era as a stored record has it: records written before the eras were named by year say `legacy` or `modern`. */
export const StoredProtocolEra = lazySchema(() =>
  z.preprocess((v) => (v === 'legacy' ? '2025' : v === 'modern' ? '2026' : v), ProtocolEra),
);
