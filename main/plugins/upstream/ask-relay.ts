import type { Client } from '@modelcontextprotocol/client';
import type { CallContext, ClientAsk } from '../../core/calls/tool.ts';
import { GatehouseError } from '../../core/errors.ts';
import { sdkRelayed } from '../../mcp/sdk-shapes.ts';
import { askLabel, capabilityMissing, checkAsks, missingCapability } from './client-asks.ts';

/** One call in flight on an upstream, with what was asked of its client so far. */
export interface RelayedCall {
  ctx: CallContext;
  asked: string[];
  /** set when the client could not be asked: the call fails with this, whatever the upstream makes of it */
  refused: GatehouseError | null;
  /** stops the call's upstream timeout while its client is asked (the time a person takes is not the upstream's); returns the resume */
  pause?: () => () => void;
}

/** An upstream's 2026-07-28 answer asking for input first. */
export interface InputRequired {
  inputRequests: Record<string, ClientAsk>;
  requestState?: string;
}

/** Rounds of input one call may take before Gatehouse gives up (the SDK's client driver allows 10). */
const MAX_ROUNDS = 10;

/**
 * Passes what an upstream asks in the middle of a call to the client that
 * made the call. A 2025-era upstream sends `elicitation/create` or
 * `sampling/createMessage` to Gatehouse's SDK client while the call is in
 * flight, with nothing on the wire naming the call: it goes to the one call
 * in flight on that upstream, and is refused when there are several (no
 * client is ever asked on another's behalf). A 2026-07-28 upstream embeds
 * its requests in an `input_required` answer to the call itself.
 */
export class AskRelay {
  private readonly calls = new Set<RelayedCall>();

  /** `mask`: what the upstream asks is its text like any answer: the values it was given are masked before a client sees it (connection.ts) */
  constructor(
    private readonly upstream: string,
    private readonly mask: <T>(ask: T) => T = (a) => a,
  ) {}

  install(client: Client): void {
    client.setRequestHandler('elicitation/create', (req, extra) =>
      this.pushed(
        { method: 'elicitation/create', params: req.params as Record<string, unknown> },
        extra.mcpReq.signal,
      ).then(sdkRelayed),
    );
    client.setRequestHandler('sampling/createMessage', (req, extra) =>
      this.pushed(
        { method: 'sampling/createMessage', params: req.params as Record<string, unknown> },
        extra.mcpReq.signal,
      ).then(sdkRelayed),
    );
  }

  open(ctx: CallContext, pause?: RelayedCall['pause']): RelayedCall {
    const call: RelayedCall = { ctx, asked: [], refused: null, ...(pause ? { pause } : {}) };
    this.calls.add(call);
    return call;
  }

  close(call: RelayedCall): void {
    this.calls.delete(call);
  }

  /**
   * An upstream's input_required answer: asked of a 2025-era client now (its
   * answers then go back in a retry, here), or handed on to a 2026-07-28
   * client as the call's answer (null: the caller returns it).
   */
  async fulfil(
    call: RelayedCall,
    first: InputRequired,
    retry: (inputResponses: Record<string, unknown>, requestState: string | undefined) => Promise<unknown>,
    isInputRequired: (r: unknown) => r is InputRequired,
  ): Promise<{ result: unknown } | null> {
    let pending = first;
    for (let round = 1; ; round++) {
      const asks = this.mask(pending.inputRequests);
      checkAsks(this.upstream, asks, call.ctx);
      if (!call.ctx.ask) return null;
      if (round > MAX_ROUNDS)
        throw new GatehouseError(
          'upstream_error',
          `upstream '${this.upstream}' asked for input more than ${MAX_ROUNDS} times in one call; Gatehouse stopped it there`,
          { upstream: this.upstream },
        );
      const answers: Record<string, unknown> = {};
      for (const [key, ask] of Object.entries(asks)) {
        call.asked.push(askLabel(ask));
        answers[key] = await asking(call, () => call.ctx.ask!(ask, call.ctx.signal));
      }
      const r = await retry(answers, pending.requestState);
      if (!isInputRequired(r)) return { result: r };
      pending = r;
    }
  }

  /** A 2025-era upstream's request while a call is in flight: the call's client answers it, or it is refused with why. */
  private async pushed(raw: ClientAsk, signal: AbortSignal): Promise<Record<string, unknown>> {
    const ask = this.mask(raw);
    const calls = [...this.calls];
    if (calls.length !== 1) {
      throw new GatehouseError(
        'upstream_error',
        calls.length === 0
          ? `Gatehouse has no call in progress on upstream '${this.upstream}' whose client could answer ${askLabel(ask)}: refused`
          : `${calls.length} calls are in progress on upstream '${this.upstream}': Gatehouse cannot tell which client ${askLabel(ask)} is meant for, so it asks none (refused)`,
      );
    }
    const call = calls[0]!;
    const missing = missingCapability(ask, call.ctx.clientCapabilities);
    if (missing) call.refused = capabilityMissing(this.upstream, ask, missing);
    else if (!call.ctx.ask) {
      call.refused = new GatehouseError(
        'client_capability_missing',
        `upstream '${this.upstream}' asks for ${askLabel(ask)} in the middle of the call, and this client cannot be asked then (a 2026-07-28 client is asked through an input-required answer, which a 2025-era upstream does not give; a write confirmed in the desk has no client to ask)`,
        { upstream: this.upstream, asked: askLabel(ask) },
      );
    }
    if (call.refused) throw call.refused;
    call.asked.push(askLabel(ask));
    // Given up by either side: the upstream cancels its request, or the client cancels (or leaves) its call.
    return asking(call, () =>
      call.ctx.ask!(ask, call.ctx.signal ? AbortSignal.any([signal, call.ctx.signal]) : signal),
    );
  }
}

/** The client's answer, with the call's upstream timeout stopped while it is awaited. */
async function asking<T>(call: RelayedCall, ask: () => Promise<T>): Promise<T> {
  const resume = call.pause?.();
  try {
    return await ask();
  } finally {
    resume?.();
  }
}
