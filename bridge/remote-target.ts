import { quotePosix } from '../main/contract/client-config.ts';
import { UPSTREAM_LOOKUP_PATH, type UpstreamLookupAnswer } from '../main/contract/remote-upstreams.ts';
import * as fail from './failures.ts';
import { NetworkError, readBody, type HttpSide } from './http-side.ts';
import { readRuntimeUrl, type TargetLookup, type TargetSource } from './target.ts';

/**
 * `--remote URL`: the remote MCP server is reached through the running
 * Gatehouse service, which holds its sign-in and its headers and stages its
 * writes. The bridge asks the service (with its own client token) which
 * upstream the person configured for URL, then relays to that upstream's
 * endpoint on the service. The remote's credentials never reach this process.
 * A service that is not up yet is waited for like the local endpoint; a
 * service that answers "none" ends the request at once with what to run.
 */

const NO_SERVICE = ': --remote goes through the Gatehouse service, which holds the sign-in to the remote server';
const ANSWER_LIMIT = 64 * 1024;

export class RemoteTarget implements TargetSource {
  private cached: URL | undefined;

  constructor(
    private readonly remote: string,
    private readonly dataDir: () => string,
    private readonly http: HttpSide,
    private readonly headers: () => Promise<Record<string, string>>,
    private readonly hasCredential: boolean,
  ) {}

  async lookup(signal: AbortSignal = new AbortController().signal): Promise<TargetLookup> {
    if (this.cached) return { ok: true, url: this.cached };
    const service = await readRuntimeUrl(this.dataDir(), NO_SERVICE);
    if (!service.ok) return service;
    const at = new URL(UPSTREAM_LOOKUP_PATH, service.url);
    let status: number;
    let body: Buffer;
    try {
      const res = await this.http.send(
        at,
        'POST',
        { ...(await this.headers()), 'content-type': 'application/json', accept: 'application/json' },
        Buffer.from(JSON.stringify({ url: this.remote })),
        signal,
      );
      status = res.statusCode ?? 0;
      body = await readBody(res, ANSWER_LIMIT);
    } catch (e) {
      if (e instanceof NetworkError && e.unreached)
        return {
          ok: false,
          reason: `${service.url.origin}: ${e.code === 'ECONNREFUSED' ? 'connection refused' : e.message}`,
        };
      throw e;
    }
    const found = this.judge(status, body);
    if (!found.ok) return found;
    this.cached = new URL(found.path, service.url);
    return { ok: true, url: this.cached };
  }

  invalidate(): void {
    this.cached = undefined;
  }

  describe(): string {
    return `${this.remote} through the Gatehouse service (runtime.json in ${this.dataDir()})`;
  }

  private judge(status: number, body: Buffer): { ok: true; path: string } | Extract<TargetLookup, { ok: false }> {
    const refused = (failure: fail.Failure) => ({ ok: false as const, reason: failure.message, failure });
    if (status === 401) return refused(fail.unauthorized(this.hasCredential));
    const said = fail.serverMessage(body);
    if (status === 503 && said.dataCode === 'gateway_disabled') return refused(fail.gatewayDisabled());
    if (status === 404)
      return refused({
        code: 'not_found',
        httpStatus: 404,
        announce: true,
        message: 'this Gatehouse service does not relay remote servers (--remote): update Gatehouse',
      });
    if (status !== 200) return refused(fail.httpError(status, said.text));
    let answer: UpstreamLookupAnswer | undefined;
    try {
      answer = (JSON.parse(body.toString('utf8')) as { data?: UpstreamLookupAnswer }).data;
    } catch {
      // judged below as an answer without upstreams
    }
    const found = Array.isArray(answer?.upstreams) ? answer.upstreams : [];
    if (found.length === 1 && typeof found[0]!.mcp_path === 'string' && found[0]!.mcp_path.startsWith('/'))
      return { ok: true, path: found[0]!.mcp_path };
    if (found.length > 1) {
      const ids = found.map((u) => String(u.id)).join(', ');
      return refused({
        code: 'conflict',
        announce: true,
        message: `several upstreams in Gatehouse use ${this.remote} (${ids}): give this bridge a token bound to a profile that names one (\`gatehouse profiles create NAME --upstreams ID\`, \`gatehouse tokens create --profile NAME --keychain ACCOUNT\`), or remove the others`,
      });
    }
    return refused(notConfigured(this.remote));
  }
}

export function notConfigured(remote: string): fail.Failure {
  const shown = remote.length > 300 ? `${remote.slice(0, 300)}…` : remote;
  return {
    code: 'not_found',
    announce: true,
    message:
      `no upstream in Gatehouse is configured for ${shown}, or this bridge's token may not use it. Add it once with ` +
      `\`gatehouse upstreams add ID --url ${quotePosix(shown)} --oauth\` (a server that signs in with OAuth; for a static token use --header "Name: value" or --token-keychain ACCOUNT instead of --oauth), ` +
      'and use a token whose user may use upstreams (editor or administrator) and whose profile includes it',
  };
}
