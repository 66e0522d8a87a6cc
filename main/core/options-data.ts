import { z } from 'zod';
import { Settings } from '../contract/settings.ts';
import { User } from '../contract/users.ts';
import { TokenRecord } from '../contract/tokens.ts';
import { Stats } from '../contract/audit.ts';
import { StagedPayload } from '../contract/staged.ts';

/** A record with an expiry; ignored once expired and swept on a timer. */
export const Transient = z.object({ value: z.unknown(), expires_at: z.number() });

/** The options file (`options.json`): everything the service keeps except pages, audit and secrets. */
export const OptionsData = z.object({
  schema_version: z.literal(1).default(1),
  settings: Settings.default(Settings.parse({})),
  users: z.array(User).default([]),
  tokens: z.array(TokenRecord).default([]),
  stats: Stats.default(Stats.parse({})),
  transients: z.record(z.string(), Transient).default({}),
  /** decided or expired staged writes, newest last, capped */
  staged_history: z.array(StagedPayload).default([]),
});
export type OptionsData = z.infer<typeof OptionsData>;
export const emptyOptions = (): OptionsData => OptionsData.parse({});
