import type { AiProviderSource, DocumentStore } from '../../core/ports/ports.ts';
import type { Clock } from '../../lib/clock.ts';
import type { UsageReporter } from '../../core/calls/usage.ts';
import type { Plugin, ResourceDef, Tool } from '../../core/calls/tool.ts';
import { siteIdentity, type SiteIdentity } from './identity.ts';
import { visiblePages } from './page-access.ts';
import { seedIfEmpty } from './seed.ts';
import { markDataLost } from './site-salvage.ts';
import type { SiteData } from './site-data.ts';
import { PLUGIN_ID, type SiteDeps } from './site-deps.ts';
import { translateTool } from './tool-translate.ts';
import { pageLifecycleTools } from './tools-pages-lifecycle.ts';
import { pageReadTools, toSummary } from './tools-pages-read.ts';
import { pageWriteTools } from './tools-pages-write.ts';
import { seoTools } from './tools-seo.ts';

export type { SiteIdentity } from './identity.ts';
export { SiteData, Page, emptySiteData } from './site-data.ts';
export { salvageSite } from './site-salvage.ts';

/** The built-in local site: pages, SEO research and translation over a JSON document in the data dir. */
export interface SitePlugin extends Plugin {
  id: 'site';
  kind: 'site';
  tools(): readonly Tool[];
  /** served by the gateway as gatehouse://site/identity */
  identity(): SiteIdentity;
  /** writes the sample pages on first run; true when it did */
  seedIfEmpty(): Promise<boolean>;
  /** after site.json was found corrupt and replaced: never seed over the lost data */
  markDataLost(): Promise<void>;
}

export const PAGES_RESOURCE_URI = 'gatehouse://site/pages';

export function createSitePlugin(opts: {
  store: DocumentStore<SiteData>;
  clock: Clock;
  ai: AiProviderSource;
  usage: UsageReporter;
  adminUserId: string;
}): SitePlugin {
  const deps: SiteDeps = { store: opts.store, clock: opts.clock, ai: opts.ai, usage: opts.usage };
  const tools: readonly Tool[] = [
    ...pageReadTools(deps),
    ...pageWriteTools(deps),
    ...pageLifecycleTools(deps),
    ...seoTools(deps),
    translateTool(deps),
  ];
  const resources: readonly ResourceDef[] = [
    {
      uri: PAGES_RESOURCE_URI,
      name: 'site-pages',
      title: 'Page index',
      description:
        "Every page of the local site the token's user may read (their own drafts; others' drafts only with edit_others_pages): id, slug, title, status, language, translations, version. Use pages_get for content.",
      mimeType: 'application/json',
      capability: 'read',
      tool: 'pages_list',
      async read(ctx) {
        const data = opts.store.read();
        const pages = visiblePages(data, ctx).map((p) => toSummary(data.site, p));
        return JSON.stringify(
          {
            site: { name: data.site.name, url: data.site.url, language: data.site.language },
            total: pages.length,
            pages,
          },
          null,
          2,
        );
      },
    },
  ];

  return {
    id: PLUGIN_ID,
    title: 'Local site',
    kind: 'site',
    tools: () => tools,
    resources: () => resources,
    status() {
      const data = opts.store.read();
      return { status: 'ok', detail: `${data.site.name}: ${data.pages.length} page(s)` };
    },
    identity: () => siteIdentity(opts.store.read(), tools),
    seedIfEmpty: () => seedIfEmpty(deps, opts.adminUserId),
    markDataLost: () => markDataLost(deps),
  };
}
