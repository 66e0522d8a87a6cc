import { resolve } from 'node:path';
import type { AiReleasesCommand } from '../services/operator-ai-releases.ts';
import { intFlag, list, UsageError } from './args.ts';

/** Flags of the operator commands (providers, account keys and policies, releases). */
export const AI_RELEASES_FLAGS = {
  kind: { type: 'string' },
  'base-url': { type: 'string' },
  'api-key-env': { type: 'string' },
  models: { type: 'string' },
  tags: { type: 'string' },
  disabled: { type: 'boolean' },
  label: { type: 'string' },
  'ai-providers': { type: 'string' },
  'ai-tags': { type: 'string' },
  'ai-fallback': { type: 'string' },
  'features-off': { type: 'string' },
  'support-priority': { type: 'string' },
  product: { type: 'string' },
  channel: { type: 'string' },
  version: { type: 'string' },
  staging: { type: 'string' },
  percentage: { type: 'string' },
  notes: { type: 'string' },
  platform: { type: 'string' },
  arch: { type: 'string' },
} as const;

/** Commands of the form `GROUP SUB VERB` (accounts keys create). */
export const NESTED: Record<string, Record<string, string[]>> = {
  accounts: { keys: ['create', 'list', 'revoke'], policy: ['show', 'set'] },
};

type V = Record<string, string | boolean | undefined>;
const str = (v: V, k: string) => v[k] as string | undefined;

function one(p: string[], what: string): string {
  if (p[0] === undefined) throw new UsageError(`give the ${what}`);
  if (p.length > 1) throw new UsageError(`unexpected argument '${p[1]}'`);
  return p[0];
}
const none = (p: string[]) => {
  if (p.length) throw new UsageError(`unexpected argument '${p[0]}'`);
};
const defined = (o: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(o).filter(([, x]) => x !== undefined));
/** `none` (or empty) clears a list; `all` for the allowed providers means no restriction. */
const listOrNull = (v: string | undefined, nullWord: string) =>
  v === undefined ? undefined : v === nullWord ? null : list(v);

export function aiReleasesArgsFor(command: AiReleasesCommand, p: string[], v: V): Record<string, unknown> {
  switch (command) {
    case 'providers.add':
      for (const f of ['kind', 'base-url', 'api-key-env', 'models'])
        if (!v[f]) throw new UsageError(`providers add needs --${f}`);
      return defined({
        id: one(p, 'provider id'),
        kind: str(v, 'kind'),
        base_url: str(v, 'base-url'),
        api_key_env: str(v, 'api-key-env'),
        models: list(str(v, 'models')),
        tags: list(str(v, 'tags')),
        enabled: v.disabled ? false : undefined,
      });
    case 'providers.remove':
    case 'providers.disable':
    case 'providers.enable':
      return { id: one(p, 'provider id') };
    case 'providers.class':
      if (!v.models) throw new UsageError('providers class needs --models a,b (or none to remove the class)');
      return { name: one(p, 'class name'), models: listOrNull(str(v, 'models'), 'none') };
    case 'accounts.keys.create':
      return defined({ account: one(p, 'account id'), label: str(v, 'label') });
    case 'accounts.keys.list':
      none(p);
      return defined({ account: str(v, 'account') });
    case 'accounts.keys.revoke':
      return { id: one(p, 'key id') };
    case 'accounts.policy.show':
      return { account: one(p, 'account id') };
    case 'accounts.policy.set':
      return defined({
        account: one(p, 'account id'),
        ai_allowed_providers: listOrNull(str(v, 'ai-providers'), 'all'),
        ai_required_tags: str(v, 'ai-tags') === 'none' ? [] : list(str(v, 'ai-tags')),
        ai_fallback_order: str(v, 'ai-fallback') === 'none' ? [] : list(str(v, 'ai-fallback')),
        features_off: str(v, 'features-off') === 'none' ? [] : list(str(v, 'features-off')),
        support_priority: str(v, 'support-priority') === 'plan' ? null : str(v, 'support-priority'),
      });
    case 'releases.publish':
      for (const f of ['product', 'channel', 'version'])
        if (!v[f]) throw new UsageError(`releases publish needs --${f}`);
      if (!p.length)
        throw new UsageError(
          'releases publish needs the release files: releases publish --product P --channel C --version V FILE...',
        );
      return defined({
        product: str(v, 'product'),
        channel: str(v, 'channel'),
        version: str(v, 'version'),
        // Absolute: a running service reads them, from its own working directory.
        files: p.map((f) => resolve(f)),
        staging: intFlag('staging', str(v, 'staging'), 0, 100),
        notes: str(v, 'notes'),
        platform: str(v, 'platform'),
        arch: str(v, 'arch'),
      });
    case 'releases.list':
      none(p);
      return defined({ product: str(v, 'product'), channel: str(v, 'channel') });
    case 'releases.stage':
      for (const f of ['product', 'channel', 'version', 'percentage'])
        if (!v[f]) throw new UsageError(`releases stage needs --${f}`);
      none(p);
      return {
        product: str(v, 'product'),
        channel: str(v, 'channel'),
        version: str(v, 'version'),
        percentage: intFlag('percentage', str(v, 'percentage'), 0, 100),
      };
    default:
      none(p);
      return {};
  }
}
