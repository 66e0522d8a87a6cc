import { z } from 'zod';
import {
  AiGenerateRequest,
  UpdatesQuery,
  UpdatesVerifyBody,
  type CloudAiUpdatesEndpoint,
} from '../../main/contract/cloud/index.ts';
import { aiGenerate, aiModels, aiProviders, aiRoute } from '../services/ai-service.ts';
import { updatesCheck, updatesFile, updatesPackage, updatesVerify } from '../services/updates-service.ts';
import { parseBody, parseQuery } from './query.ts';
import { noQuery, ok, type RouteHandler } from './routes.ts';

const UPDATES_QUERY = ['product', 'version', 'channel', 'platform', 'arch'];
/** electron-updater adds `noCache` to feed requests. */
const FilesQuery = z.object({ noCache: z.string().max(40).optional() });

/** The site endpoints of AI and updates and the token-gated release files. */
export const AI_UPDATES_ROUTES: Record<CloudAiUpdatesEndpoint, RouteHandler> = {
  aiProviders: (i) => (noQuery(i), ok(aiProviders(i.ctx, i.site))),
  aiModels: (i) => (noQuery(i), ok(aiModels(i.ctx, i.site))),
  aiRoute: (i) => ok(aiRoute(i.ctx, i.site, parseBody(AiGenerateRequest, i.body))),
  aiGenerate: (i) =>
    ok(aiGenerate(i.ctx, i.site, parseBody(AiGenerateRequest, i.body), { requestId: i.requestId, signal: i.signal })),
  updatesCheck: (i) => ok(updatesCheck(i.ctx, i.site, parseQuery(UpdatesQuery, i.query, UPDATES_QUERY), i.origin)),
  updatesPackage: (i) => ok(updatesPackage(i.ctx, i.site, parseQuery(UpdatesQuery, i.query, UPDATES_QUERY), i.origin)),
  updatesVerify: (i) => ok(updatesVerify(i.ctx, parseBody(UpdatesVerifyBody, i.body))),
  updatesFiles: async (i) => {
    parseQuery(FilesQuery, i.query, ['noCache']);
    const { site, support, answer } = await updatesFile(i.ctx, i.params.token!, i.params.name!, i.admitSite);
    if (answer.kind === 'yaml')
      return { site, support, raw: { contentType: 'text/yaml; charset=utf-8', text: answer.text } };
    return {
      site,
      support,
      raw: {
        contentType: 'application/octet-stream',
        file: { size: answer.size, stream: answer.stream, name: answer.name },
      },
    };
  },
};
