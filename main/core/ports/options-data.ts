import { z } from 'zod';
import { Settings } from '../../contract/settings.ts';
import { User } from '../../contract/users.ts';
import { TokenRecord } from '../../contract/tokens.ts';
import { Profile } from '../../contract/profiles.ts';
import { Stats } from '../../contract/audit.ts';
import { StagedPayload } from '../../contract/staged.ts';
import { salvageDocument } from './salvage.ts';
import { StoredPolicy } from '../../contract/policy.ts';
import { lazySchema } from '../../contract/lazy-schema.ts';

/** A record with an expiry; ignored once expired and swept on a timer. */
export const Transient = lazySchema(() => z.object({ value: z.unknown(), expires_at: z.number() }));

/** The options file (`options.json`): everything the service keeps except pages, staged writes, audit and secrets. */
export const OptionsData = lazySchema(() =>
  z.object({
    schema_version: z.literal(1).default(1),
    settings: Settings.default(Settings.parse({})),
    users: z.array(User).default([]),
    tokens: z.array(TokenRecord).default([]),
    /** named tool sets tokens are bound to (`tokens create --profile NAME`) */
    profiles: z.array(Profile).default([]),
    stats: Stats.default(Stats.parse({})),
    transients: z.record(z.string(), Transient).default({}),
    /** legacy: decided staged writes before they moved to `staged/`; emptied by the migration at start */
    staged_history: z.array(StagedPayload).default([]),
    /** the person's tool-call policy (Cedar, docs/policy.md); null: the shipped default (policy/default.cedar) */
    policy: StoredPolicy.nullable().default(null),
  }),
);
export type OptionsData = z.infer<typeof OptionsData>;
export const emptyOptions = (): OptionsData => OptionsData.parse({});

/** One bad field costs that field: every valid setting, user, token and record is kept. */
export const salvageOptions = (raw: unknown) => salvageDocument(OptionsData, raw);

const LEGACY_STAGED = 'staged:';

/** Staged writes an earlier version kept in options.json (transients `staged:*` and `staged_history`). */
export function legacyStaged(d: OptionsData): StagedPayload[] {
  const out: StagedPayload[] = [];
  for (const [key, t] of Object.entries(d.transients)) {
    if (!key.startsWith(LEGACY_STAGED)) continue;
    const parsed = StagedPayload.safeParse(t.value);
    if (parsed.success) out.push(parsed.data);
  }
  return [...out, ...d.staged_history];
}

export function dropLegacyStaged(d: OptionsData): void {
  for (const key of Object.keys(d.transients)) if (key.startsWith(LEGACY_STAGED)) delete d.transients[key];
  d.staged_history = [];
}
