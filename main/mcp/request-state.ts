import { createHash, randomBytes } from 'node:crypto';
import { createRequestStateCodec, type ServerContext } from '@modelcontextprotocol/server';
import type { CallContext } from '../core/calls/tool.ts';

/** How long a client may take to answer what an upstream asked (its wrapped requestState expires then). */
export const REQUEST_STATE_TTL_S = 15 * 60;

/** What a wrapped requestState carries: the tool (so the upstream), a digest of the arguments, and the upstream's own state. */
interface Wrapped {
  t: string;
  a: string;
  s: string | null;
}

/**
 * The requestState a client holds between rounds of a 2026-07-28 call that
 * needs its input: the upstream's own state wrapped in the SDK's HMAC codec
 * (createRequestStateCodec), keyed with a per-process random key and bound to
 * the token (the HMAC's binding) and to the call (the tool, which names the
 * upstream, and the arguments' digest, inside the sealed payload). A client
 * cannot forge one, and one issued for another upstream, another call or
 * another token is refused. The key dies with the process: a flow does not
 * survive a restart of the service (the client calls again).
 */
const codec = createRequestStateCodec<Wrapped>({
  key: randomBytes(32),
  ttlSeconds: REQUEST_STATE_TTL_S,
  bind: (ctx) => `gatehouse.tools/call\u0000${ctx.http?.authInfo?.clientId ?? '(no token)'}`,
});

/** Why the codec refused a state (its error's message), in words for the audit. */
const VERIFY_REASONS = new Map([
  ['malformed', 'the requestState is malformed'],
  ['mac', 'the requestState was not issued by Gatehouse (its signature does not match)'],
  ['expired', 'the requestState expired'],
  ['bind', 'the requestState was issued to another token'],
]);

/**
 * Goes in the Server's options: the SDK verifies an echoed state before the
 * handler runs (-32602 "Invalid or expired requestState" when not).
 * `refused` hears each refusal first (the reason and the tool the 2026-07-28
 * request names in its Mcp-Name header), so it is audited.
 */
export function requestStateOptions(refused: (reason: string, tool: string) => void) {
  return {
    verify: async (state: string, ctx: ServerContext): Promise<unknown> => {
      try {
        return await codec.verify(state, ctx);
      } catch (e) {
        refused(
          VERIFY_REASONS.get(e instanceof Error ? e.message : '') ?? 'the requestState is invalid',
          ctx.http?.req?.headers.get('mcp-name') ?? '',
        );
        throw e;
      }
    },
  };
}

/** The arguments as a short stable digest (keys sorted), so a state answers only the call it was issued for. */
export function argsDigest(args: Record<string, unknown>): string {
  const sorted = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sorted);
    if (v && typeof v === 'object')
      return Object.fromEntries(
        Object.keys(v)
          .sort()
          .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
      );
    return v;
  };
  return createHash('sha256')
    .update(JSON.stringify(sorted(args)))
    .digest('base64url')
    .slice(0, 22);
}

export function wrapState(
  tool: string,
  args: Record<string, unknown>,
  state: string | undefined,
  extra: ServerContext,
): Promise<string> {
  return codec.mint({ t: tool, a: argsDigest(args), s: state ?? null }, extra);
}

/**
 * A retried call's answers and its unwrapped state (the SDK verified the
 * HMAC already): the state must have been issued for this very tool and
 * arguments, else the call is refused before anything reaches an upstream.
 */
export function resumeOf(tool: string, args: Record<string, unknown>, extra: ServerContext): CallContext['resume'] {
  // (the refusal travels in `resume.refused`: the pipeline refuses and audits it like every refusal)
  const responses = extra.mcpReq.inputResponses;
  const wrapped = extra.mcpReq.requestState<Wrapped>();
  if (wrapped === undefined && responses === undefined) return undefined;
  if (wrapped !== undefined) {
    const ok =
      typeof wrapped === 'object' && wrapped !== null && typeof wrapped.t === 'string' && typeof wrapped.a === 'string';
    if (!ok || wrapped.t !== tool || wrapped.a !== argsDigest(args)) {
      const otherTool = ok && wrapped.t !== tool;
      const reason = `the requestState was issued for ${otherTool ? 'another tool' : 'another call (other arguments)'}`;
      const message = `the requestState was issued for ${otherTool ? `another tool ('${wrapped.t.slice(0, 128)}')` : 'another call (other arguments)'}, not for this call of '${tool.slice(0, 128)}': refused; call the tool again without requestState to start over`;
      return { refused: { message, reason } };
    }
  }
  return {
    ...(responses ? { inputResponses: responses } : {}),
    ...(wrapped?.s != null ? { requestState: wrapped.s } : {}),
  };
}
