import { z } from 'zod';
import { AiModelName, AiTag } from '../../main/contract/cloud/ai.ts';

/**
 * One entry of the operator's provider registry (`gatehouse-cloud providers
 * add ID --kind openai|anthropic --base-url URL --api-key-env VAR --models a,b
 * --tags eu,approved`). The key itself never lives here: only the name of the
 * environment variable that holds it, read when a call is made.
 */
export const ProviderKind = z.enum(['openai', 'anthropic']);
export type ProviderKind = z.infer<typeof ProviderKind>;

export const ProviderId = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,47}$/, 'a provider id: lower-case letters, digits, _ and -, at most 48');

/** http(s) only, no credentials in the URL (they would end up in logs), no query or fragment. */
export const ProviderBaseUrl = z
  .string()
  .max(2048)
  .refine((s) => {
    let u: URL;
    try {
      u = new URL(s);
    } catch {
      return false;
    }
    return (u.protocol === 'http:' || u.protocol === 'https:') && !u.username && !u.password && !u.search && !u.hash;
  }, 'an http(s) URL without credentials, query or fragment');

/** A conventional environment variable name; the value is looked up at call time. */
export const ApiKeyEnv = z.string().regex(/^[A-Z_][A-Z0-9_]{0,127}$/, 'an environment variable name (A-Z, 0-9, _)');

export const ProviderRecord = z
  .object({
    id: ProviderId,
    kind: ProviderKind,
    base_url: ProviderBaseUrl,
    api_key_env: ApiKeyEnv,
    /** the first is the provider's default when a request names no model */
    models: z.array(AiModelName).min(1).max(100),
    tags: z.array(AiTag).max(16).default([]),
    enabled: z.boolean().default(true),
  })
  .strict();
export type ProviderRecord = z.infer<typeof ProviderRecord>;

/** What a site may see of a provider (`ai/providers`): never the URL or the key's variable. */
export function publicProviderView(p: ProviderRecord): {
  id: string;
  kind: ProviderKind;
  models: string[];
  tags: string[];
} {
  return { id: p.id, kind: p.kind, models: [...p.models], tags: [...p.tags] };
}
