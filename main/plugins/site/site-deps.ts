import type { AiProviderSource, DocumentStore } from '../../core/ports/ports.ts';
import type { Clock } from '../../lib/clock.ts';
import type { UsageReporter } from '../../core/calls/usage.ts';
import type { SiteData } from './site-data.ts';

/** What the site plugin's tools are built from; injected by createSitePlugin. */
export interface SiteDeps {
  store: DocumentStore<SiteData>;
  clock: Clock;
  ai: AiProviderSource;
  /** where the AI token counts of translations go */
  usage: UsageReporter;
}

export const PLUGIN_ID = 'site';

export const isoNow = (deps: Pick<SiteDeps, 'clock'>) => new Date(deps.clock.now()).toISOString();
