/** Resources one token may hold subscriptions to (2025 era: resources/subscribe is per token, there are no sessions). */
export const MAX_SUBSCRIPTIONS_PER_TOKEN = 100;

/** The 2025 era's resource subscriptions, per token: what resources/subscribe and unsubscribe change. */
export interface TokenSubscriptions {
  /** false when the token holds MAX_SUBSCRIPTIONS_PER_TOKEN already */
  add(tokenId: string, uri: string): boolean;
  remove(tokenId: string, uri: string): void;
  has(tokenId: string, uri: string): boolean;
}
