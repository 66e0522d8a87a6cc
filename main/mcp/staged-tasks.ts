import type { StagedPayload } from '../contract/staged.ts';
import type { ErrorCode } from '../contract/errors.ts';
import type { CallContext } from '../core/calls/tool.ts';
import type { Staging } from '../core/staging/staging.ts';
import { GatehouseError } from '../core/errors.ts';

/** The MCP Tasks extension (SEP-2663), declared per request by a 2026-07-28 client and by us in server/discover. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
/** How often a client is asked to poll a task that waits for a person. */
export const TASK_POLL_MS = 2000;
/** The JSON-RPC code a failed task's `error` carries: the write was not applied (data.code says why). */
export const WRITE_NOT_APPLIED = -32012;

/** What tasks need of the service: the staging ledger (the tasks' only store) and the approval links. */
export interface TaskDeps {
  staging: Pick<Staging, 'get' | 'withdraw'>;
  /** the approval page's address for a staged write, or null while none can be made */
  approvalUrl: (stagedId: string) => string | null;
}

/** What a client declared it can do on this request (2026-07-28 envelope capabilities). */
export interface DeclaredCapabilities {
  tasks: boolean;
  urlElicitation: boolean;
}

type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** SEP-2663's DetailedTask, as a `tasks/get` answer or (with resultType "task") a `tools/call` answer. */
export interface TaskView {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number | null;
  pollIntervalMs?: number;
  inputRequests?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data: { code: ErrorCode | string; staged_id: string } };
}

/** The key of the one input request a waiting task carries; unique per write, so per task. */
export const approvalRequestKey = (item: Pick<StagedPayload, 'id'>): string => `approval:${item.id}`;

/**
 * The task store adapter (docs/tasks.md): a staged write seen as an MCP task.
 * The task id is the staged id and the record is the staged record, so a
 * task survives a restart exactly as its write does; there is no second
 * store. A task is visible to the token that staged its write and to no one
 * else (another token's id answers as unknown).
 */
export function findTask(deps: TaskDeps, taskId: unknown, ctx: CallContext): StagedPayload {
  const unknown = () =>
    new GatehouseError('invalid_params', 'Failed to retrieve task: Task not found', {
      taskId: typeof taskId === 'string' ? taskId.slice(0, 64) : null,
    });
  if (typeof taskId !== 'string' || taskId.length > 64 || !ctx.token) throw unknown();
  let item: StagedPayload;
  try {
    item = deps.staging.get(taskId);
  } catch {
    throw unknown();
  }
  if (item.token_id !== ctx.token.id) throw unknown();
  return item;
}

/** The task a staged write is now; `caps` are the polling request's own, so a link is offered to clients that can open one. */
export function taskOf(
  item: StagedPayload,
  caps: DeclaredCapabilities,
  approvalUrl: (id: string) => string | null,
): TaskView {
  const base = {
    taskId: item.id,
    createdAt: item.created,
    lastUpdatedAt: item.decided_at ?? item.created,
    ttlMs: null,
    pollIntervalMs: TASK_POLL_MS,
  };
  const failed = (code: ErrorCode | string, message: string): TaskView => ({
    ...base,
    status: 'failed',
    statusMessage: message,
    error: { code: WRITE_NOT_APPLIED, message, data: { code, staged_id: item.id } },
  });
  switch (item.status) {
    case 'pending': {
      const url = caps.urlElicitation ? approvalUrl(item.id) : null;
      const waiting = `Waiting for a person to approve this write in Gatehouse before ${item.expires_at}: ${item.preview.summary}`;
      if (!url) return { ...base, status: 'working', statusMessage: waiting };
      return {
        ...base,
        status: 'input_required',
        statusMessage: waiting,
        inputRequests: {
          [approvalRequestKey(item)]: {
            method: 'elicitation/create',
            params: {
              mode: 'url',
              elicitationId: item.id,
              url,
              message: `Gatehouse: a person approves or discards this write on this page: ${item.preview.summary}`,
            },
          },
        },
      };
    }
    case 'applying':
      return { ...base, status: 'working', statusMessage: 'Approved: the write is being applied' };
    case 'confirmed':
      return { ...base, status: 'completed', statusMessage: 'Approved and applied', result: callResultOf(item.result) };
    case 'discarded':
      // The client's own tasks/cancel withdrew it: cancelled. A person's discard: the request failed.
      if (item.decided_by?.kind === 'token' && item.decided_by.token_id === item.token_id)
        return { ...base, status: 'cancelled', statusMessage: 'Cancelled by the client; nothing was changed' };
      // Revoking the token that staged it discarded it (docs/tasks.md): the reason is the revocation, not a person's review.
      if (item.error_code === 'token_revoked')
        return failed(
          'token_revoked',
          'The token that staged this write was revoked, so the write was discarded; nothing was changed',
        );
      return failed('staged_discarded', 'A person discarded this write; nothing was changed');
    case 'expired':
      return failed(
        'staged_expired',
        `Nobody approved this write before ${item.expires_at}; nothing was changed (stage it again)`,
      );
    case 'failed':
      return failed(item.error_code ?? 'internal_error', failureMessage(item.error_code));
  }
}

function failureMessage(code: string | null): string {
  if (code === 'stale_preview')
    return 'The target changed since the preview was made; nothing was changed (stage it again)';
  if (code === 'apply_interrupted' || code === 'outcome_unknown')
    return 'The service stopped while the write was being applied; a person checks whether it took effect';
  return `The write was approved but could not be applied (${code ?? 'internal_error'}); nothing was changed`;
}

/**
 * A confirmed write's result as the tools/call result it stands for. An
 * upstream tool's write keeps the upstream's own answer as its result
 * (`{content, structuredContent?}`, upstream-tools.ts): that answer is the
 * result, as the upstream gave it, so its structuredContent is what the
 * upstream's outputSchema describes. A built-in write's result is its
 * structured output.
 */
function callResultOf(result: unknown): Record<string, unknown> {
  const answer = upstreamAnswerOf(result);
  if (answer) return { ...answer, isError: false };
  const structured =
    result !== null && typeof result === 'object' && !Array.isArray(result) ? { structuredContent: result } : {};
  return { content: [{ type: 'text', text: JSON.stringify(result ?? null, null, 2) }], ...structured, isError: false };
}

/** `{content: [blocks], structuredContent?: {...}}` and nothing else: an upstream call's answer kept as a write's result. */
function upstreamAnswerOf(result: unknown): { content: unknown[]; structuredContent?: unknown } | null {
  if (result === null || typeof result !== 'object' || Array.isArray(result)) return null;
  const r = result as Record<string, unknown>;
  if (!Object.keys(r).every((k) => k === 'content' || k === 'structuredContent')) return null;
  if (
    !Array.isArray(r.content) ||
    !r.content.every((b) => b !== null && typeof b === 'object' && typeof (b as { type?: unknown }).type === 'string')
  )
    return null;
  const sc = r.structuredContent;
  if (sc !== undefined && (sc === null || typeof sc !== 'object' || Array.isArray(sc))) return null;
  return { content: r.content, ...(sc !== undefined ? { structuredContent: sc } : {}) };
}
