import type { z } from 'zod';
import type { OAuthStatus } from '../../contract/oauth-status.ts';
import type {
  UpstreamAddInput,
  UpstreamDetail,
  UpstreamGrantInput,
  UpstreamProcessSetInput,
  UpstreamPromptView,
  UpstreamRecipeInput,
  UpstreamRecipeRemoveInput,
  UpstreamReviewInput,
  UpstreamTestAnswer,
  UpstreamToolView,
  UpstreamView,
} from '../../contract/upstreams.ts';
import type { RecipeView } from '../../contract/preview-recipes.ts';

/**
 * What the action handlers need of the upstream servers (main/plugins/upstream
 * implements it in upstream-manager.ts), so the core stays free of processes
 * and sockets. Reached only after `invoke` checked the caller: people only.
 */
export interface UpstreamActions {
  /**
   * Resolves once this machine was asked whether it can confine stdio upstreams, when one is stored (asked once, at
   * the first need): a view before that says "checking". Not asked by a command that shows no upstream.
   */
  settled(): Promise<void>;
  list(): UpstreamView[];
  get(id: string): UpstreamDetail;
  add(input: z.output<typeof UpstreamAddInput>): Promise<UpstreamDetail>;
  remove(id: string): Promise<{ id: string }>;
  setEnabled(id: string, enabled: boolean): Promise<UpstreamView>;
  test(id: string): Promise<UpstreamTestAnswer>;
  tools(id: string): UpstreamToolView[];
  /** reviews tools and prompts in one step (all or nothing); answers the tools, as before prompts were pinned (the prompts: `prompts`) */
  review(input: z.output<typeof UpstreamReviewInput>): Promise<UpstreamToolView[]>;
  prompts(id: string): UpstreamPromptView[];
  /** replaces a stdio upstream's sandbox grants and restarts it with them (docs/upstreams.md, "Confinement") */
  grant(input: z.output<typeof UpstreamGrantInput>): Promise<UpstreamDetail>;
  /** one process shared by every client, or one per client token, and their bounds; restarts it (docs/upstreams.md, "One process per client") */
  setProcess(input: z.output<typeof UpstreamProcessSetInput>): Promise<UpstreamDetail>;
  /** a write's preview recipes (docs/staging.md): the person's and the shipped ones; a person's set (checked against the pinned definitions) or removed */
  recipes(id: string): RecipeView[];
  setRecipe(input: z.output<typeof UpstreamRecipeInput>): Promise<RecipeView[]>;
  removeRecipe(input: z.output<typeof UpstreamRecipeRemoveInput>): Promise<RecipeView[]>;
  /** OAuth sign-in (docs/oauth.md): start or join, end, and its state (waiting up to waitMs while a sign-in is under way) */
  login(id: string): Promise<OAuthStatus>;
  logout(id: string): Promise<OAuthStatus>;
  oauthStatus(id: string, waitMs?: number): Promise<OAuthStatus>;
}
