import { z } from 'zod';
import { ProtocolError, type Server } from '@modelcontextprotocol/server';
import { JSONRPC_CODES } from '../contract/errors.ts';
import type { StagedPayload } from '../contract/staged.ts';
import type { CallContext, ToolOutput } from '../core/calls/tool.ts';
import { GatehouseError, toErrorShape } from '../core/errors.ts';
import { missingCapabilityError } from './missing-capability.ts';
import { TASKS_EXTENSION, findTask, taskOf, type DeclaredCapabilities, type TaskDeps } from './staged-tasks.ts';
import { sdkAs, sdkInternals } from './sdk-shapes.ts';
import { lazySchema } from '../contract/lazy-schema.ts';

const CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
const ByTask = lazySchema(() => z.object({ taskId: z.string() }).passthrough());
const TaskUpdate = lazySchema(() =>
  z.object({ taskId: z.string(), inputResponses: z.record(z.string(), z.unknown()).optional() }).passthrough(),
);

/** A tools/call answer that is a task: carried past the SDK's CallToolResult check (see serveTasks). */
class TaskAnswer {
  constructor(readonly result: Record<string, unknown>) {}
}

type Extra = { mcpReq?: { envelope?: unknown } };

type Internals = {
  _ondiscover(): Record<string, unknown>;
  _wrapHandler(
    method: string,
    handler: (request: unknown, ctx: unknown) => Promise<unknown>,
  ): (request: unknown, ctx: unknown) => Promise<unknown>;
};

/**
 * What the client declared: on a 2026-07-28 request, its envelope; on a
 * 2025-era one (no envelope), URL-mode elicitation as its token's last
 * `initialize` declared it (tasks are 2026-07-28 only).
 */
export function declaredCapabilities(
  extra: { mcpReq?: { envelope?: unknown } },
  ctx?: CallContext,
): DeclaredCapabilities {
  // 2025 era: what its initialize declared, remembered per token (client-capabilities.ts)
  if (!extra.mcpReq?.envelope)
    return {
      tasks: false,
      urlElicitation: Boolean((ctx?.clientCapabilities?.elicitation as { url?: unknown } | undefined)?.url),
    };
  const envelope = extra.mcpReq.envelope as Record<string, unknown>;
  const caps = (envelope[CLIENT_CAPABILITIES] ?? envelope['clientCapabilities'] ?? {}) as {
    extensions?: Record<string, unknown>;
    elicitation?: { url?: unknown };
  };
  return {
    tasks: Boolean(caps.extensions && Object.hasOwn(caps.extensions, TASKS_EXTENSION)),
    urlElicitation: Boolean(caps.elicitation?.url),
  };
}

/**
 * The write a `pending_approval` answer staged here, for this token; null for
 * any other answer, including a remote Gatehouse's own `pending_approval`
 * passed through by an upstream (its staged id is not ours).
 */
function stagedHere(output: ToolOutput, deps: TaskDeps, ctx: CallContext): StagedPayload | null {
  const id = output.structured.status === 'pending_approval' ? output.structured.staged_id : undefined;
  if (typeof id !== 'string') return null;
  try {
    return findTask(deps, id, ctx);
  } catch {
    return null;
  }
}

/**
 * A staged write's answer for a client that declared the Tasks extension: the
 * task (resultType "task"), durable before it is returned since it is the
 * staged record itself. Null for any other answer or client.
 */
export function taskAnswer(
  output: ToolOutput,
  caps: DeclaredCapabilities,
  deps: TaskDeps | undefined,
  ctx: CallContext,
): TaskAnswer | null {
  const item = deps && caps.tasks ? stagedHere(output, deps, ctx) : null;
  return item && deps ? new TaskAnswer({ resultType: 'task', ...taskOf(item, caps, deps.approvalUrl) }) : null;
}

/** A staged write's plain answer, plus its approval link for a client that declared URL-mode elicitation. */
export function withApprovalLink(
  output: ToolOutput,
  caps: DeclaredCapabilities,
  deps: TaskDeps | undefined,
  ctx: CallContext,
): ToolOutput {
  const item = deps && caps.urlElicitation ? stagedHere(output, deps, ctx) : null;
  const url = item && deps ? deps.approvalUrl(item.id) : null;
  if (!url) return output;
  return {
    ...output,
    structured: { ...output.structured, approval_url: url },
    ...(output.text ? { text: `${output.text}\nA person can approve or discard it here: ${url}` } : {}),
  };
}

/**
 * The Tasks extension (SEP-2663) on one request's server, backed by the
 * staging ledger (staged-tasks.ts): `tasks/get` reads a task, `tasks/cancel`
 * withdraws its write (a discard audited with the token as principal),
 * `tasks/update` is acknowledged and changes nothing, since a write is
 * approved by a person in Gatehouse and never by its client. A client that
 * did not declare the extension on the request gets -32021 from each. `tasks/result`
 * and `tasks/list` do not exist in 2026-07-28 (-32601, from the SDK).
 * Must run before `tools/call` is registered: the SDK checks every
 * tools/call result against CallToolResult, and a task is let past that
 * check here (a private seam, like discover's in server-factory.ts).
 */
export function serveTasks(server: Server, ctx: CallContext, deps: TaskDeps | undefined): void {
  if (!deps) return;
  const s = sdkInternals<Internals>(server);
  const discover = s._ondiscover.bind(server);
  s._ondiscover = () => {
    const answer = discover();
    const capabilities = (answer.capabilities ?? {}) as Record<string, unknown>;
    return {
      ...answer,
      capabilities: {
        ...capabilities,
        extensions: { ...(capabilities.extensions as object | undefined), [TASKS_EXTENSION]: {} },
      },
    };
  };
  const wrap = s._wrapHandler.bind(server);
  s._wrapHandler = (method, handler) => {
    if (method !== 'tools/call') return wrap(method, handler);
    const checked = wrap(method, async (request, c) => {
      const result = await handler(request, c);
      if (result instanceof TaskAnswer) throw result;
      return result;
    });
    return async (request, c) => {
      try {
        return await checked(request, c);
      } catch (e) {
        if (e instanceof TaskAnswer) return e.result;
        throw e;
      }
    };
  };

  /**
   * The call's context once a 2026-07-28 client declared the extension on this request; -32021 otherwise
   * (SEP-2663), before any task is looked up. A 2025-era request (no envelope: those revisions have no
   * -32021) goes on as before.
   */
  const declaring = (extra: Extra, method: string): CallContext => {
    if (!extra.mcpReq?.envelope || declaredCapabilities(extra).tasks) return ctx;
    throw missingCapabilityError(
      `${method} needs the Tasks extension: declare '${TASKS_EXTENSION}' in this request's client capabilities`,
      ['extensions', TASKS_EXTENSION],
      ctx,
    );
  };
  const register = sdkAs<
    (method: string, schemas: { params: z.ZodType }, handler: (params: never, extra: never) => Promise<unknown>) => void
  >(server.setRequestHandler.bind(server));
  register('tasks/get', { params: ByTask }, async (params: z.infer<typeof ByTask>, extra: Extra) =>
    rpc(ctx, () => ({
      ...taskOf(
        findTask(deps, params.taskId, declaring(extra, 'tasks/get')),
        declaredCapabilities(extra),
        deps.approvalUrl,
      ),
    })),
  );
  register('tasks/cancel', { params: ByTask }, async (params: z.infer<typeof ByTask>, extra: Extra) =>
    rpc(ctx, async () => {
      declaring(extra, 'tasks/cancel');
      const item = findTask(deps, params.taskId, ctx);
      // Cancellation is cooperative: a write already decided (or being applied) stays as it is, and the ack is the same.
      if (item.status === 'pending')
        await deps.staging.withdraw(item.id, ctx).catch((e: unknown) => {
          if (!(e instanceof GatehouseError && (e.code === 'staged_already_decided' || e.code === 'staged_expired')))
            throw e;
        });
      return {};
    }),
  );
  register('tasks/update', { params: TaskUpdate }, async (params: z.infer<typeof TaskUpdate>, extra: Extra) =>
    rpc(ctx, () => {
      findTask(deps, params.taskId, declaring(extra, 'tasks/update'));
      // Whatever the client answers (a URL elicitation's "accept" only says the page was opened), nothing is approved here.
      return {};
    }),
  );
}

/** A task method's refusal as a JSON-RPC error with our data (unknown task: -32602, as SEP-2663 asks). */
async function rpc<T>(ctx: CallContext, fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof ProtocolError) throw e;
    const shape = toErrorShape(e);
    const code = shape.code === 'invalid_params' ? JSONRPC_CODES.invalid_params : JSONRPC_CODES.internal_error;
    throw new ProtocolError(code, shape.message, { code: shape.code, request_id: ctx.request_id });
  }
}
