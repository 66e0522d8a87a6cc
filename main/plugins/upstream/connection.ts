import type { Client, RequestOptions, Tool, Transport } from '@modelcontextprotocol/client';
import { sdkAs } from '../../mcp/sdk-shapes.ts';
import { clientSdk, loadedClientSdk, type ClientSdk } from './client-sdk.ts';
import type { StdioLauncher } from './sandbox/confinement.ts';
import { z } from 'zod';
import type { UpstreamHealth } from '../../contract/upstreams.ts';
import { eraOfSdk, type ProtocolEra } from '../../contract/protocol-era.ts';
import { GatehouseError } from '../../core/errors.ts';
import { LineRing } from '../../lib/line-ring.ts';
import { IdleTimer } from '../../lib/idle-timer.ts';
import { redact } from '../../lib/redact.ts';
import type { Logger } from '../../lib/logger.ts';
import { VERSION } from '../../version.ts';
import type { StoredTransport, ToolDefinition, UpstreamSecrets } from './upstream-data.ts';
import { checkListing } from './listing-bounds.ts';
import { definitionOf } from './pinning.ts';
import type { CallContext } from '../../core/calls/tool.ts';
import { AskRelay, type InputRequired } from './ask-relay.ts';
import { askedSummary, askLabel } from './client-asks.ts';
import type { UpstreamAuth } from './oauth/oauth-errors.ts';
import { isPlainSetting, KnownValues } from './known-values.ts';
import { OneQueued } from '../../lib/one-queued.ts';
import { ANSWER_TOO_LARGE, MAX_UPSTREAM_MESSAGE_BYTES } from './stdio-transport.ts';
import type { UpstreamTransport } from './upstream-transport.ts';
import { StdioUpstream } from './stdio-upstream.ts';
import { HttpUpstream } from './http-upstream.ts';
import { UI_EXTENSION, VIEW_MIME } from '../../contract/mcp-apps.ts';
import { lazySchema } from '../../contract/lazy-schema.ts';

export interface ConnectionSpec {
  id: string;
  transport: StoredTransport;
  secrets: UpstreamSecrets;
  /** a bearer token for an HTTP upstream (from the vault); never the client's Gatehouse token */
  token: string | null;
  timeoutMs: number;
  era: ProtocolEra | null;
  /** an OAuth upstream's sign-in (oauth/coordinator.ts): the token per request, what a 401 does */
  auth?: UpstreamAuth;
  /** how a stdio upstream is started: confined by the OS sandbox, or as it is (sandbox/confinement.ts) */
  launcher?: StdioLauncher;
}

export interface ConnectionHooks {
  /** every (re)listing of the upstream's tools: at connect, after a reconnect, on its list_changed */
  onTools(tools: ToolDefinition[]): void;
  /** health or era changed (the console reloads) */
  onChange(): void;
  log: Logger;
  /** first and largest wait between reconnects */
  backoff?: { baseMs: number; maxMs: number };
  /** connected (again), or the upstream's prompts or resources list changed: its surface re-lists them (upstream-surface.ts) */
  onSurface?(what: 'connected' | 'prompts' | 'resources'): void;
  /** the upstream's notifications/resources/updated of one of its own URIs */
  onResourceUpdated?(uri: string): void;
  /** the upstream's notifications/message, masked (log-relay.ts bounds and names them) */
  onLog?(params: unknown): void;
  /** connected (again): the instructions it sent with this connection, masked (instructions.ts pins them) */
  onInstructions?(text: string | undefined): void;
}

/** A call's result as the upstream gave it. */
export interface UpstreamResult {
  content: Array<Record<string, unknown>>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  /** its own result metadata (an MCP App's keys tying the result to its view), masked like the rest */
  _meta?: Record<string, unknown>;
  /** the upstream (2026-07-28) needs the client's input first: handed on to a 2026-07-28 client as the call's answer */
  inputRequired?: InputRequired;
  /** what was asked of the client on the way (audit) */
  asked?: string;
}

/** One of the SDK's own errors with one of these codes (none can be, before the SDK loaded). */
function isSdkError(e: unknown, ...codes: Array<keyof ClientSdk['SdkErrorCode']>): boolean {
  const sdk = loadedClientSdk();
  return !!sdk && e instanceof sdk.SdkError && codes.some((c) => e.code === sdk.SdkErrorCode[c]);
}

/**
 * The JSON-RPC codes an upstream answers about the request it was sent (not
 * about itself), as our codes: they are passed on as what they are, not as
 * an `upstream_error`. -32002 is the 2025-era "resource not found"; a -32602
 * naming a `uri` is the same answer in 2026-07-28 (SEP-2164).
 */
function protocolCodeOf(e: unknown): 'not_found' | 'invalid_params' | 'method_not_found' | 'invalid_request' | null {
  const sdk = loadedClientSdk();
  if (!sdk || !(e instanceof sdk.ProtocolError)) return null;
  const uri = (e.data as { uri?: unknown } | undefined)?.uri;
  if (e.code === -32002 || (e.code === -32602 && typeof uri === 'string')) return 'not_found';
  if (e.code === -32602) return 'invalid_params';
  if (e.code === -32601) return 'method_not_found';
  if (e.code === -32600) return 'invalid_request';
  return null;
}

/**
 * The signal a request to an upstream is sent with: it aborts when any of
 * `signals` does, its reason in words only. The SDK tells a 2025-era
 * upstream `String(reason)` in notifications/cancelled, and our reasons are
 * GatehouseErrors, whose String() starts with the class name: the upstream
 * hears what happened ("... was cancelled by the client"), not how Gatehouse
 * names it inside.
 */
function upstreamSignal(signals: AbortSignal[]): AbortSignal {
  const any = signals.length === 1 ? signals[0]! : AbortSignal.any(signals);
  const out = new AbortController();
  const relay = () => {
    const r: unknown = any.reason;
    out.abort(r instanceof Error ? r.message : typeof r === 'string' ? r : 'the request was cancelled');
  };
  if (any.aborted) relay();
  else any.addEventListener('abort', relay, { once: true });
  return out.signal;
}

/** Anything the upstream answers (a task, its result): checked as what it is by the caller, not by the SDK's tools/call schema. */
const AnyResult = lazySchema(() => z.object({}).passthrough());

/** How long the upstream keeps a task's result we asked for: long enough to be read once it is done. */
const TASK_TTL_MS = 10 * 60 * 1000;

/**
 * A 2025-era upstream's tool that requires a task (`execution.taskSupport: "required"`), where the upstream
 * says it runs tools/call as tasks. Gatehouse offers clients no 2025 `tasks` capability, so they call such a
 * tool plainly and the gateway runs the task for them (runAsTask).
 */
function needsTask(client: Client, definition: Record<string, unknown> | undefined): boolean {
  const execution = definition?.execution as { taskSupport?: unknown } | undefined;
  if (execution?.taskSupport !== 'required' || client.getProtocolEra() === 'modern') return false;
  const tasks = client.getServerCapabilities()?.tasks as { requests?: { tools?: { call?: unknown } } } | undefined;
  return tasks?.requests?.tools?.call !== undefined;
}

/**
 * tools/call as a task (2025-11-25): the upstream answers with the task at once, and `tasks/result` waits for its
 * result (the call's bound, its cancellation). A call cancelled or timed out cancels the task too.
 */
async function runAsTask(
  client: Client,
  params: Record<string, unknown>,
  options: RequestOptions & { signal: AbortSignal },
): Promise<unknown> {
  const created = await client.request(
    { method: 'tools/call', params: { ...params, task: { ttl: TASK_TTL_MS } } },
    AnyResult,
    options,
  );
  const taskId = (created.task as { taskId?: unknown } | undefined)?.taskId;
  // an upstream that ran it at once answered with the result itself
  if (typeof taskId !== 'string') return created;
  try {
    return await client.request({ method: 'tasks/result', params: { taskId } }, AnyResult, options);
  } catch (e) {
    if (options.signal.aborted)
      void client
        .request({ method: 'tasks/cancel', params: { taskId } }, AnyResult, { timeout: 5000 })
        .catch(() => undefined);
    throw e;
  }
}

/** What a retried round sends again: the client's answers and the upstream's state. */
function resumed(ctx: CallContext): Record<string, unknown> {
  if (!ctx.resume) return {};
  return {
    ...(ctx.resume.inputResponses ? { inputResponses: ctx.resume.inputResponses } : {}),
    ...(ctx.resume.requestState !== undefined ? { requestState: ctx.resume.requestState } : {}),
  };
}

const isInputRequired = (r: unknown): r is InputRequired =>
  (r as { resultType?: unknown } | null)?.resultType === 'input_required';

/** How long a connection must have lasted for the next crash to start the backoff over. */
const STABLE_MS = 10_000;
const CONNECT_TIMEOUT_MS = 30_000;

/**
 * One upstream MCP server through the SDK client: a long-lived stdio process
 * (spawned with only its configured environment) or a Streamable HTTP
 * session. It reconnects with a growing backoff when the process exits or
 * the server stops answering, re-lists the tools on every connect and on
 * the upstream's list_changed, and keeps the health people see. While it is
 * not connected a call fails at once with `upstream_unavailable`.
 */
export class UpstreamConnection {
  readonly stderr = new LineRing();
  private client: Client | null = null;
  private stopped = false;
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** probeTools' sessions under way: a stop ends them too */
  private readonly probes = new Set<Transport>();
  /** how it is reached: a process, or a remote session */
  private readonly link: UpstreamTransport;
  private attempt = 0;
  private connecting: Promise<ToolDefinition[]> | null = null;
  /** the transport of a connect under way (not this.client's yet): a stop ends its process too */
  private opening: Transport | null = null;
  /** an OAuth upstream not connected because its sign-in ended (signed out, or a sign-in needed): what a call answers */
  private signIn: GatehouseError | null = null;
  private readonly relay: AskRelay;
  /** re-listing the tools after list_changed: one in flight, at most one more queued, however fast they come */
  private readonly toolsChanged = new OneQueued(() => this.relistChanged());
  /** what it was given (env and header values, its token, its OAuth tokens): masked in everything it answers */
  private readonly known: KnownValues;
  /** the instructions of the last connection, masked; undefined: none sent, or not connected yet */
  private sentInstructions: string | undefined;
  private readonly health: UpstreamHealth = {
    status: 'down',
    last_error: null,
    latency_ms: null,
    restarts: 0,
    protocol: null,
    era: null,
    connected_at: null,
  };

  constructor(
    private readonly spec: ConnectionSpec,
    private readonly hooks: ConnectionHooks,
  ) {
    this.health.era = spec.era;
    this.known = new KnownValues(() => [
      ...spec.secrets.env.filter((v) => !isPlainSetting(v.name, v.value)).map((v) => v.value),
      ...spec.secrets.headers.map((h) => h.value),
      ...(spec.token ? [spec.token] : []),
      ...(spec.auth?.known() ?? []),
    ]);
    this.relay = new AskRelay(spec.id, (ask) => this.known.value(ask));
    const t = spec.transport;
    this.link =
      t.kind === 'stdio' ? new StdioUpstream(spec, t, this.stderr, hooks.log) : new HttpUpstream(spec, t, hooks.log);
  }

  snapshot(): UpstreamHealth {
    return { ...this.health };
  }

  /** What it sent as `instructions` when it last connected, masked of the values it was given. */
  instructions(): string | undefined {
    return this.sentInstructions;
  }

  /** Connects and lists the tools, or throws (a clear `upstream_unavailable`, no secret in it); connected already, it lists again. */
  connect(): Promise<ToolDefinition[]> {
    this.stopped = false;
    if (this.client && this.health.status !== 'down') return this.relist(this.client);
    this.connecting ??= this.open().finally(() => (this.connecting = null));
    return this.connecting;
  }

  /** Connects now, or keeps trying in the background; never throws. */
  start(): void {
    // Signed out by a person, it tries no more: the next sign-in's end connects it (oauth/coordinator.ts).
    void this.connect().catch(() => (this.health.status === 'signed_out' ? undefined : this.scheduleReconnect()));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const c = this.client;
    this.client = null;
    const opening = this.opening;
    this.opening = null;
    const probes = [...this.probes];
    this.probes.clear();
    await Promise.all([
      c?.close().catch(() => undefined),
      opening?.close().catch(() => undefined),
      ...probes.map((p) => p.close().catch(() => undefined)),
    ]);
    await this.link.endLive();
  }

  /**
   * One tools/call. What the upstream asks of the client on the way
   * (ask-relay.ts) reaches the client in `ctx`; `definition` is the pinned
   * one, from which the SDK mirrors `x-mcp-header` parameters into
   * `Mcp-Param-*` headers (2026-07-28; `Mcp-Name` is the upstream's own name).
   */
  async call(
    name: string,
    args: Record<string, unknown>,
    opts: { ctx: CallContext; maxTotalMs: number; definition?: Record<string, unknown> },
  ): Promise<UpstreamResult> {
    const client = this.client;
    if (!client || this.health.status === 'down') throw this.unavailable();
    const { ctx } = opts;
    const started = Date.now();
    // The per-upstream timeout is ours, not the SDK's: progress extends it, and it stops while the call's client is asked
    // (a person filling a form). The SDK's own timeout is only the bound on the whole call.
    const idle = new AbortController();
    const timer = new IdleTimer(this.spec.timeoutMs, () =>
      idle.abort(`no answer within ${this.spec.timeoutMs / 1000} s without progress`),
    );
    const options = this.callOptions(client, opts, idle.signal, timer);
    const asTask = needsTask(client, opts.definition);
    const send = (extra: Record<string, unknown>) =>
      asTask
        ? runAsTask(client, { name, arguments: args, ...extra }, options)
        : (client.callTool({ name, arguments: args, ...extra }, options) as Promise<unknown>);
    const call = this.relay.open(ctx, () => timer.pause());
    try {
      let r = await send(resumed(ctx));
      if (isInputRequired(r)) {
        const done = await this.relay.fulfil(
          call,
          r,
          (inputResponses, requestState) =>
            send({ inputResponses, ...(requestState !== undefined ? { requestState } : {}) }),
          isInputRequired,
        );
        if (!done) return this.handedOn(r);
        r = done.result;
      }
      if (call.refused) throw call.refused;
      this.ok(Date.now() - started);
      this.noteRefusal(name, r);
      const asked = askedSummary(call.asked);
      return { ...this.answer(r as UpstreamResult), ...(asked ? { asked } : {}) };
    } catch (e) {
      throw call.refused
        ? this.scrubbed(call.refused)
        : idle.signal.aborted && !ctx.signal?.aborted
          ? this.timedOut()
          : this.callError(e);
    } finally {
      timer.stop();
      this.relay.close(call);
    }
  }

  /** The SDK's options of one call: the whole call's bound, our idle timeout's signal, progress, the pinned definition. */
  private callOptions(
    client: Client,
    opts: { ctx: CallContext; maxTotalMs: number; definition?: Record<string, unknown> },
    idle: AbortSignal,
    timer: IdleTimer,
  ) {
    const { ctx } = opts;
    return {
      timeout: opts.maxTotalMs,
      // A 2026-07-28 upstream's input_required comes back to us (never fulfilled by the SDK on its own).
      allowInputRequired: true,
      signal: upstreamSignal(ctx.signal ? [ctx.signal, idle] : [idle]),
      ...(opts.definition && client.getProtocolEra() === 'modern'
        ? { toolDefinition: sdkAs<Tool>(opts.definition) }
        : {}),
      // Asking for progress also lets it extend the timeout: the upstream's progress goes on to the client when it asked.
      onprogress: (p: { progress: number; total?: number; message?: string }) => {
        timer.touch();
        ctx.progress?.({
          progress: p.progress,
          ...(p.total !== undefined ? { total: p.total } : {}),
          ...(p.message !== undefined ? { message: this.known.text(String(p.message)) } : {}),
        });
      },
    };
  }

  /** Handed on to the client as the call's answer: its requests and its state are the upstream's text like any other. */
  private handedOn(r: InputRequired): UpstreamResult {
    const handed = this.known.value({ inputRequests: r.inputRequests, requestState: r.requestState });
    return {
      content: [],
      inputRequired: {
        inputRequests: handed.inputRequests,
        ...(handed.requestState !== undefined ? { requestState: handed.requestState } : {}),
      },
      asked: askedSummary(Object.values(handed.inputRequests).map(askLabel)) ?? '',
    };
  }

  /**
   * A server that answers a refused file access as a tool error (server-memory's
   * EROFS, server-filesystem's ENOENT) and prints nothing: its log gets the
   * same `gatehouse sandbox:` line as for its stderr.
   */
  private noteRefusal(tool: string, r: unknown): void {
    const result = r as { isError?: boolean; content?: unknown };
    if (result?.isError !== true || !Array.isArray(result.content)) return;
    const text = result.content
      .map((c: { type?: unknown; text?: unknown }) => (c?.type === 'text' && typeof c.text === 'string' ? c.text : ''))
      .join('\n')
      .slice(0, 20_000);
    const note = this.link.annotate(text);
    if (note) this.stderr.write(`${note.replace(/\n/g, ` (its answer to ${tool})\n`)} (its answer to ${tool})\n`);
  }

  /** A request of its own (prompts, resources) on the live session: the call's timeout, its cancellation, the same error mapping. */
  async request<T>(
    send: (client: Client, options: { timeout: number; signal?: AbortSignal }) => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T> {
    const client = this.client;
    if (!client || this.health.status === 'down') throw this.unavailable();
    const started = Date.now();
    try {
      const r = await send(client, {
        timeout: this.spec.timeoutMs,
        ...(signal ? { signal: upstreamSignal([signal]) } : {}),
      });
      this.ok(Date.now() - started);
      return this.known.value(r);
    } catch (e) {
      throw this.callError(e);
    }
  }

  private async relist(client: Client): Promise<ToolDefinition[]> {
    const started = Date.now();
    try {
      const { tools } = await client.listTools(undefined, { timeout: CONNECT_TIMEOUT_MS, cacheMode: 'bypass' });
      this.ok(Date.now() - started);
      const defs = tools.map(definitionOf);
      checkListing(this.spec.id, defs);
      this.hooks.onTools(defs);
      return defs;
    } catch (e) {
      throw this.callError(e);
    }
  }

  /**
   * The names of the tools the upstream lists to a client that declares only `capabilities` (none, sampling,
   * elicitation): a session of its own (for stdio a process of its own, confined the same way), closed once it
   * answered. What the live session lists, declaring both, is the pinned set; this says which of those a client
   * without them can use (docs/decisions.md, "Learn the sets by listing, not by guessing from schemas").
   */
  async probeTools(capabilities: Record<string, unknown>): Promise<string[]> {
    const sdk = await clientSdk();
    const client: Client = new sdk.Client(
      { name: 'gatehouse', version: VERSION },
      {
        ...(await this.clientBase()),
        capabilities: { ...capabilities, extensions: { [UI_EXTENSION]: { mimeTypes: [VIEW_MIME] } } },
      },
    );
    if (this.stopped) throw new GatehouseError('upstream_unavailable', `upstream '${this.spec.id}' is stopped`);
    const { transport, close } = await this.link.openProbe(sdk);
    this.probes.add(transport);
    try {
      if (this.stopped) throw new GatehouseError('upstream_unavailable', `upstream '${this.spec.id}' is stopped`);
      await client.connect(transport, { timeout: CONNECT_TIMEOUT_MS, ...this.link.connectOptions() });
      const { tools } = await client.listTools(undefined, { timeout: CONNECT_TIMEOUT_MS, cacheMode: 'bypass' });
      return tools.map((t) => t.name);
    } finally {
      this.probes.delete(transport);
      await client.close().catch(() => undefined);
      await transport.close().catch(() => undefined);
      await close();
    }
  }

  /**
   * What every client of this upstream is made with. The SDK checks each result against the tool's outputSchema:
   * with RE2 patterns, so no upstream schema can freeze the service; the transport adds its era negotiation
   * (http-upstream.ts).
   */
  private async clientBase() {
    const { linearSchemaValidator } = await import('../../lib/json-schema-validator.ts');
    return { jsonSchemaValidator: linearSchemaValidator, ...this.link.clientOptions() };
  }

  private async open(): Promise<ToolDefinition[]> {
    const started = Date.now();
    // Loaded here, at the first connect (after the service is ready), not when the service starts (client-sdk.ts).
    const sdk = await clientSdk();
    const client = await this.liveClient(sdk);
    // What this attempt's process writes to stderr, apart from the kept log: a failed start quotes it.
    const attempt = new LineRing(20, 300);
    let transport: Transport;
    try {
      transport = await this.link.openLive(sdk, attempt);
    } catch (e) {
      // the sandbox could not start it: down with the reason, never started unconfined behind the person's back
      const message = this.scrub(e instanceof Error ? e.message : String(e));
      this.down(message);
      throw new GatehouseError('upstream_unavailable', `upstream '${this.spec.id}' could not be reached: ${message}`);
    }
    this.opening = transport;
    try {
      await client.connect(transport, { timeout: CONNECT_TIMEOUT_MS, ...this.link.connectOptions() });
      const { tools } = await client.listTools(undefined, { timeout: CONNECT_TIMEOUT_MS, cacheMode: 'bypass' });
      if (this.stopped)
        throw new GatehouseError('upstream_unavailable', `upstream '${this.spec.id}' was stopped while connecting`);
      const defs = tools.map(definitionOf);
      checkListing(this.spec.id, defs);
      this.connected(client, transport, defs, started);
      return defs;
    } catch (e) {
      if (this.opening === transport) this.opening = null;
      await client.close().catch(() => undefined);
      await this.link.endLive();
      const signIn = this.spec.auth?.explain(e);
      if (signIn) throw this.signInEnded(signIn);
      const message = this.scrub(await this.link.startFailure(e, transport, attempt));
      this.down(message);
      throw new GatehouseError('upstream_unavailable', `upstream '${this.spec.id}' could not be reached: ${message}`);
    }
  }

  /** The live session's client: what it hears while it is the live one (list changes, logs, resource updates), what it may be asked. */
  private async liveClient(sdk: ClientSdk): Promise<Client> {
    const client: Client = new sdk.Client(
      { name: 'gatehouse', version: VERSION },
      {
        ...(await this.clientBase()),
        listChanged: {
          // Not the SDK's trailing debounce: a list_changed storm would put off every listing while it lasts.
          tools: {
            debounceMs: 0,
            autoRefresh: false,
            onChanged: () => void (client === this.client && this.toolsChanged.kick()),
          },
          prompts: {
            debounceMs: 50,
            autoRefresh: false,
            onChanged: () => client === this.client && this.hooks.onSurface?.('prompts'),
          },
          resources: {
            debounceMs: 50,
            autoRefresh: false,
            onChanged: () => client === this.client && this.hooks.onSurface?.('resources'),
          },
        },
        // What an upstream may ask of the client mid-call; whether the calling client can is checked per call (ask-relay.ts).
        // MCP Apps: servers that check for it offer their views (and their view-only tools); the views pass the desk.
        capabilities: {
          elicitation: { form: {}, url: {} },
          sampling: {},
          extensions: { [UI_EXTENSION]: { mimeTypes: [VIEW_MIME] } },
        },
      },
    );
    this.relay.install(client);
    client.setNotificationHandler('notifications/message', (n) => {
      if (client === this.client) this.hooks.onLog?.(this.known.value(n.params));
    });
    client.setNotificationHandler('notifications/resources/updated', (n) => {
      const uri = (n.params as { uri?: unknown } | undefined)?.uri;
      if (client === this.client && typeof uri === 'string') this.hooks.onResourceUpdated?.(uri);
    });
    return client;
  }

  /** Connected and listed: the health says so, the client is the live one, and the hooks hear it. */
  private connected(client: Client, transport: Transport, defs: ToolDefinition[], started: number): void {
    const sdkEra = client.getProtocolEra();
    const era = sdkEra ? eraOfSdk(sdkEra) : null;
    Object.assign(this.health, {
      status: 'connected',
      last_error: null,
      latency_ms: Date.now() - started,
      protocol: client.getNegotiatedProtocolVersion() ?? null,
      era,
      connected_at: new Date().toISOString(),
    });
    this.link.connected(era);
    this.client = client;
    if (this.opening === transport) this.opening = null;
    client.onclose = () => this.closed(client);
    const sent = client.getInstructions();
    this.sentInstructions = typeof sent === 'string' ? this.known.text(sent) : undefined;
    this.hooks.onInstructions?.(this.sentInstructions);
    this.hooks.onTools(defs);
    this.hooks.onChange();
    this.hooks.onSurface?.('connected');
  }

  private async relistChanged(): Promise<void> {
    const client = this.client;
    if (!client || this.stopped) return;
    try {
      await this.relist(client);
    } catch (e) {
      this.hooks.log.warn('upstream: re-listing tools after list_changed failed', {
        upstream: this.spec.id,
        error: this.scrub((e as Error).message ?? 'no list'),
      });
    }
  }

  /** The process exited or the session ended: down now, reconnect with backoff. */
  private closed(client: Client): void {
    if (client !== this.client) return;
    this.client = null;
    void this.link.endLive();
    if (this.stopped) return;
    const lasted = this.health.connected_at ? Date.now() - Date.parse(this.health.connected_at) : 0;
    if (lasted >= STABLE_MS) this.attempt = 0;
    this.health.restarts++;
    this.down(this.link.ended((text) => this.scrub(text)));
    this.hooks.log.warn('upstream: connection lost, reconnecting', { upstream: this.spec.id });
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.timer) return;
    const { baseMs, maxMs } = this.hooks.backoff ?? { baseMs: 500, maxMs: 30_000 };
    const wait = Math.min(maxMs, baseMs * 2 ** Math.min(this.attempt++, 16));
    this.timer = setTimeout(() => {
      this.timer = null;
      if (!this.stopped) this.start();
    }, wait);
    this.timer.unref?.();
  }

  private ok(latency: number): void {
    const changed = this.health.status !== 'connected';
    Object.assign(this.health, { status: 'connected', latency_ms: latency, last_error: null });
    if (changed) this.hooks.onChange();
  }

  private down(message: string): void {
    this.signIn = null;
    Object.assign(this.health, { status: 'down', last_error: message, connected_at: null });
    this.hooks.onChange();
  }

  /**
   * The connect failed on the sign-in. A person signed out, or a sign-in is
   * needed (the coordinator knows which): the health says so and calls answer
   * `sign_in_required`. Otherwise (a token the server refused though the
   * sign-in stands) it is down and retried like any failed connect.
   */
  private signInEnded(e: GatehouseError): GatehouseError {
    const need = this.spec.auth?.needs() ?? null;
    if (!need) return (this.down(e.message), e);
    this.signIn = e;
    Object.assign(this.health, {
      status: need,
      last_error: need === 'signed_out' ? null : e.message,
      connected_at: null,
    });
    this.hooks.onChange();
    return e;
  }

  private unavailable(): GatehouseError {
    if (this.signIn && !this.stopped)
      return new GatehouseError(this.signIn.code, `${this.signIn.message}; nothing was sent to it`, {
        upstream: this.spec.id,
      });
    return new GatehouseError(
      'upstream_unavailable',
      `upstream '${this.spec.id}' is ${this.stopped ? 'stopped' : 'down'}${this.health.last_error ? `: ${this.health.last_error}` : ''}; nothing was sent to it`,
      { upstream: this.spec.id },
    );
  }

  /** An SDK failure as one of our codes; the connection's health follows. */
  private callError(e: unknown): GatehouseError {
    if (e instanceof GatehouseError) return this.scrubbed(e);
    const signIn = this.spec.auth?.explain(e);
    if (signIn) return signIn;
    const message = this.scrub(e instanceof Error ? e.message : String(e));
    if (isSdkError(e, 'RequestTimeout')) return this.timedOut();
    if (e instanceof Error && e.name === 'AbortError')
      return new GatehouseError('cancelled', `the call to upstream '${this.spec.id}' was cancelled`);
    if (
      isSdkError(e, 'ConnectionClosed', 'NotConnected', 'SendFailed') ||
      (e instanceof TypeError && /fetch failed/i.test(e.message))
    ) {
      if (this.link.closesOnLoss && this.client) this.closed(this.client);
      return new GatehouseError(
        'upstream_unavailable',
        `upstream '${this.spec.id}' went away during the call (${message}); it is being restarted`,
        { upstream: this.spec.id },
      );
    }
    const sdk = loadedClientSdk();
    if (sdk && e instanceof sdk.ProtocolError && e.code === ANSWER_TOO_LARGE) {
      // the whole size when it was counted (stdio, an event stream); a JSON answer is cut off once past the bound
      const bytes = (e.data as { bytes?: unknown } | undefined)?.bytes;
      return new GatehouseError(
        'upstream_error',
        `upstream '${this.spec.id}' answered with more than ${MAX_UPSTREAM_MESSAGE_BYTES / 1024 / 1024} MiB${typeof bytes === 'number' ? ` (${bytes} bytes)` : ''}, more than an upstream answer may be: the answer was dropped; the upstream keeps running`,
        { upstream: this.spec.id, limit_bytes: MAX_UPSTREAM_MESSAGE_BYTES },
      );
    }
    const code = protocolCodeOf(e) ?? 'upstream_error';
    return new GatehouseError(code, `upstream '${this.spec.id}' answered with an error: ${message}`, {
      upstream: this.spec.id,
      ...(code === 'upstream_error' ? {} : { upstream_code: (e as { code: number }).code }),
    });
  }

  private timedOut(): GatehouseError {
    Object.assign(this.health, {
      status: 'degraded',
      last_error: `a call timed out after ${this.spec.timeoutMs} ms without progress`,
    });
    this.hooks.onChange();
    return new GatehouseError(
      'timeout',
      `upstream '${this.spec.id}' did not answer within ${this.spec.timeoutMs / 1000} s (without progress); the call was cancelled`,
      { upstream: this.spec.id, timeout_ms: this.spec.timeoutMs },
    );
  }

  /**
   * A call's result as handed on: every string of it (content, structuredContent, an error result's text, `_meta`)
   * with the known values masked. The one place a tool result is adapted; `request` does the same for prompts,
   * resources and listings, the relay for what the upstream asks of the client, `scrub` for errors.
   */
  private answer(r: UpstreamResult): UpstreamResult {
    return this.known.value(r);
  }

  /**
   * The kept stderr lines for people (`upstreams show`, `GET upstreams/ID`, the console): a server that prints
   * its configuration prints the values it was given, so those and every known secret shape are masked.
   */
  stderrLines(): string[] {
    return this.stderr.snapshot().map((line) => this.scrub(line));
  }

  /** One of our errors whose text quotes the upstream (what it asked for, a refusal's reason): as `scrub` makes any message. */
  private scrubbed(e: GatehouseError): GatehouseError {
    const message = this.known.text(e.message);
    const details = this.known.value(e.details);
    return message === e.message && details === e.details ? e : new GatehouseError(e.code, message, details);
  }

  /** No known value (a header, an env variable, the token, the OAuth tokens) ever reaches a message, whatever the upstream echoes. */
  private scrub(text: string): string {
    return redact(this.known.text(text)).slice(0, 2000);
  }
}
