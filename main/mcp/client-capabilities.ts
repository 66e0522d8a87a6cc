/** Tokens whose last declared client capabilities are remembered; the least recently seen is forgotten first. */
const MAX_TOKENS = 10_000;
/** A declaration longer than this (as JSON) is not remembered: the client is then treated as declaring nothing. */
const MAX_JSON = 8_192;

type Caps = Readonly<Record<string, unknown>>;

/**
 * What a 2025-era client declared in `initialize`, remembered per token: a
 * 2025 client says it once, and each later request is served by a fresh
 * server instance (no session), which would otherwise know nothing of it.
 * A 2026-07-28 client declares them on every request (`_meta`), which wins.
 * Like the client name, it is the last declaration seen with the token.
 */
export class ClientCapabilities {
  private readonly byToken = new Map<string, Caps>();

  /** Notes an `initialize`'s declaration; answers what is known for the token. */
  seen(message: { method?: string; params?: Record<string, unknown> }, tokenId: string): Caps | undefined {
    if (message.method === 'initialize') {
      const declared = message.params?.capabilities;
      this.byToken.delete(tokenId);
      if (
        typeof declared === 'object' &&
        declared !== null &&
        !Array.isArray(declared) &&
        JSON.stringify(declared).length <= MAX_JSON
      ) {
        if (this.byToken.size >= MAX_TOKENS) this.byToken.delete(this.byToken.keys().next().value!);
        // a null-prototype copy: a declared `__proto__` is a plain key here, never a prototype
        this.byToken.set(
          tokenId,
          Object.freeze(Object.assign(Object.create(null) as Record<string, unknown>, declared)),
        );
      }
    }
    return this.byToken.get(tokenId);
  }
}
