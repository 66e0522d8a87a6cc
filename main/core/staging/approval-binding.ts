import type { StagedPayload } from '../../contract/staged.ts';
import type { AuditEntry } from '../../contract/audit.ts';
import { maskSecrets } from '../../lib/secret-scan.ts';
import type { CallContext, WriteTool } from '../calls/tool.ts';
import { GatehouseError } from '../errors.ts';
import { hashPayload } from './staging-parts.ts';

/**
 * An approval is bound to what the person saw (docs/staging.md, "Bound to
 * what was shown"): the sha256 of the exact arguments (the payload apply
 * receives, canonical JSON), of the preview as shown, and for an upstream
 * tool of its pinned definition. A confirm is refused as stale when any of
 * them changed since.
 */
export type Binding = NonNullable<AuditEntry['binding']>;

/** The hashes a write was bound to when it was staged: what the audit line of its decision carries. */
export const bindingOf = (item: StagedPayload): Binding => ({
  args: item.payload_hash,
  preview: item.preview_hash ?? hashPayload(item.preview),
  definition: item.definition_hash ?? null,
  // what an upstream write's preview read of its target (the file's sha256): what the write replaced
  ...(item.preview.current?.version ? { target: item.preview.current.version } : {}),
});

export interface Staleness {
  /** `target`: what the write acts on changed since the preview read it (the file, the entities): stale_preview */
  what: 'arguments' | 'preview' | 'definition' | 'target';
  message: string;
}

const again = 'ask the agent to stage it again';

/**
 * What changed since the write was staged, or null: its stored arguments or
 * preview no longer match their hashes, the tool's approved definition is
 * another one, or (for a tool whose preview depends on the payload alone)
 * the preview built again now differs from the one shown.
 */
export async function stalenessOf(item: StagedPayload, tool: WriteTool, ctx: CallContext): Promise<Staleness | null> {
  if (hashPayload(item.payload) !== item.payload_hash)
    return {
      what: 'arguments',
      message: `the arguments of staged write '${item.id}' changed since they were shown (their hash differs); it was not applied: ${again}`,
    };
  if (item.preview_hash != null && hashPayload(item.preview) !== item.preview_hash)
    return {
      what: 'preview',
      message: `the preview of staged write '${item.id}' changed since it was shown; it was not applied: ${again}`,
    };
  if (item.definition_hash != null && (tool.definition_hash ?? null) !== item.definition_hash) {
    return {
      what: 'definition',
      message: `the definition of '${item.tool}' changed since this write was staged (approved ${item.definition_hash.slice(0, 19)}…, now ${tool.definition_hash?.slice(0, 19) ?? 'none'}…); it was not applied: ${again}`,
    };
  }
  if (tool.repeatablePreview && item.preview_hash != null) {
    const rebuilt = maskSecrets((await tool.preview(item.payload, ctx)).preview);
    const was = item.preview.current?.version ?? null;
    const now = rebuilt.current?.version ?? null;
    if (was !== null && now !== was)
      return {
        what: 'target',
        message:
          now === null
            ? `what '${item.tool}' acts on could not be read again to check it is as shown (${rebuilt.current?.unavailable ?? 'no recipe now'}); it was not applied: look again, or ${again}`
            : `what '${item.tool}' acts on changed since the preview read it (${item.preview.current!.summary}); it was not applied and nothing was changed: ${again}`,
      };
    if (hashPayload(rebuilt) !== item.preview_hash)
      return {
        what: 'preview',
        message: `the preview of '${item.tool}' built from these arguments now differs from the one shown; it was not applied: ${again}`,
      };
  }
  return null;
}

/**
 * The person's approve request names the preview they saw (its hash, as the
 * desk was given it): another one means they approved something else than
 * this write shows now. Refused; the write stays pending for a fresh look.
 */
export function checkPresented(item: StagedPayload, presented: string | null | undefined): void {
  if (!presented) return;
  const shown = item.preview_hash ?? hashPayload(item.preview);
  if (presented !== shown) {
    throw new GatehouseError(
      'stale_approval',
      `the preview you approved is not the one staged write '${item.id}' shows now; look at it again and approve that one`,
      { staged_id: item.id, changed: 'preview' },
    );
  }
}
