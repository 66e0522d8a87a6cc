import type { CallContext } from '../calls/tool.ts';
import type { Staging } from './staging.ts';
import type { ToolOutput } from '../calls/tool.ts';
import { GatehouseError } from '../errors.ts';

/**
 * A write the policy lets run without a person (`run_without_approval`):
 * staged as any write (its preview, payload hash and crash-safe apply),
 * then confirmed at once in the same call, the confirm's audit entry naming
 * the policies. A confirm that fails has audited itself: it is answered as
 * a refusal, not audited twice.
 */
/** The pipeline's CallOutcome, as far as this step makes one (pipeline.ts imports this file). */
type Unattended =
  | { kind: 'result'; output: ToolOutput }
  | { kind: 'refused'; code: string; message: string; details: Record<string, unknown> };

export async function runUnattended(
  { staging }: { staging: Staging },
  stagedId: string,
  ctx: CallContext,
  policies: readonly string[],
): Promise<Unattended> {
  let done;
  try {
    done = await staging.confirm(stagedId, { kind: 'agent', ctx, policy: policies });
  } catch (e) {
    if (!(e instanceof GatehouseError)) throw e;
    return { kind: 'refused', code: e.code, message: e.message, details: { staged_id: stagedId, ...e.details } };
  }
  const by = policies.map((p) => `'${p}'`).join(', ');
  return {
    kind: 'result',
    output: {
      structured: {
        status: done.status,
        staged_id: stagedId,
        summary: done.preview.summary,
        result: done.result ?? null,
        policy: [...policies],
      },
      text: `Applied without approval (policy ${by}): ${done.preview.summary}\nstaged_id: ${stagedId}`,
    },
  };
}
