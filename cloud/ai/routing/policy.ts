import { z } from 'zod';
import { AiModelName, AiTag } from '../../../main/contract/cloud/ai.ts';
import { ProviderId } from '../provider-record.ts';

/**
 * An account's AI routing policy (enterprise controls: allowed providers,
 * approved-infrastructure tags, a fallback order) and the operator's model
 * classes. Both are stored in the database and handed to `planRoutes` as values.
 */
export const AccountAiPolicy = z
  .object({
    /** null: every enabled provider; a list: only these */
    allowed_providers: z.array(ProviderId).max(100).nullable().default(null),
    /** every route must carry all of these tags (e.g. `eu`) */
    required_tags: z.array(AiTag).max(16).default([]),
    /** providers to try first, in this order; the rest follow in registry order */
    fallback_order: z.array(ProviderId).max(100).default([]),
  })
  .strict();
export type AccountAiPolicy = z.infer<typeof AccountAiPolicy>;

export const OPEN_POLICY: AccountAiPolicy = { allowed_providers: null, required_tags: [], fallback_order: [] };

/**
 * Model classes: a name a site may ask for instead of a model id (`fast`,
 * `large`), standing for models in the operator's order of preference. A
 * request without a model uses the class `default` when there is one.
 */
export const ModelClasses = z.record(AiModelName, z.array(AiModelName).min(1).max(20));
export type ModelClasses = z.infer<typeof ModelClasses>;

/** Own keys only: a class named `constructor` must not find Object.prototype's. */
export function classModels(classes: ModelClasses, name: string): string[] | undefined {
  return Object.hasOwn(classes, name) ? classes[name] : undefined;
}
