/** Tokens whose 2025-era declaration is remembered; the least recently declared is forgotten first. */
const MAX_TOKENS = 10_000;

/**
 * Whether a token's 2025-era client declared URL-mode elicitation: that era
 * declares capabilities only in `initialize`, and the endpoint is stateless,
 * so the last declaration seen per token is remembered (as client-names.ts
 * remembers its name). Bounded; a restart forgets (the next initialize tells).
 */
export class ElicitationMemory {
  private readonly url = new Map<string, boolean>();

  /** Notes what an `initialize` declared; any other message is ignored. */
  note(tokenId: string, message: { method?: string; params?: unknown }): void {
    if (message.method !== 'initialize') return;
    const caps = (message.params as { capabilities?: { elicitation?: { url?: unknown } } } | undefined)?.capabilities;
    this.url.delete(tokenId);
    if (this.url.size >= MAX_TOKENS) this.url.delete(this.url.keys().next().value!);
    this.url.set(tokenId, Boolean(caps?.elicitation?.url));
  }

  declaredUrl(tokenId: string): boolean {
    return this.url.get(tokenId) ?? false;
  }
}
