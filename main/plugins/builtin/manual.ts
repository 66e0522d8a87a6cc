import { STAGED_LIFETIME_MS, STAGED_LIMITS } from '../../contract/staged.ts';

export const MANUAL_URI = 'gatehouse://manual';
export const IDENTITY_URI = 'gatehouse://site/identity';
/** The tool whose visibility decides what the manual says about approving. */
export const CONFIRM_TOOL = 'staged_writes_confirm';

const manuals = new Map<boolean, string>();

/**
 * The operating manual: returned as `instructions` by initialize and served as
 * the gatehouse://manual resource. Written for the agent that reads it first.
 * What it says about approving follows what this caller can actually do: it
 * may confirm its own writes exactly when it can see `staged_writes_confirm`
 * (approval mode `agent`, the tool not disabled, the token not narrowed away
 * from it). Built once per variant, since every request's server gets it.
 */
export function operatingManual(agentMayConfirm: boolean): string {
  let text = manuals.get(agentMayConfirm);
  if (!text) manuals.set(agentMayConfirm, (text = writeManual(agentMayConfirm)));
  return text;
}

function writeManual(agentMayConfirm: boolean): string {
  const minutes = STAGED_LIFETIME_MS / 60_000;
  return `# Gatehouse operating manual

Gatehouse is a local MCP gateway. It stands between you (an AI agent) and a person's site and tools.
Every call you make runs with the permissions of the person your token belongs to, and every call is audited.

## Before you start
1. Read the site identity first: call the \`site_identity\` tool (or read the resource ${IDENTITY_URI}).
   It tells you the site's name, languages, content conventions and what exists, so your work fits the site.
2. Find tools with \`discover_tools\` (search by keyword, plugin or capability, paginated) instead of guessing.
   tools/list shows only the tools your token may call. The list can change while you work (a plugin adds tools,
   the person changes settings); clients that listen are sent notifications/tools/list_changed, then list again.

## Writes are staged, never immediate
A write tool (pages_create, pages_update, pages_delete, pages_publish, translate_page, ...) changes nothing when you call it.
It returns {status: "pending_approval", staged_id, preview, expires_at}: a readable preview of exactly what would change.
${
  agentMayConfirm
    ? '- Approval mode is "agent": you may confirm or discard your own staged writes with staged_writes_confirm / staged_writes_discard, after checking the preview. A person may also decide them in Gatehouse.'
    : '- A person approves or discards it in Gatehouse (tray, console or CLI). You cannot approve your own writes.'
}
- A staged write expires after ${minutes} minutes if nobody decides; then stage it again.
- Check progress with \`staged_writes_status\` (one) or \`staged_writes_list\` (yours).
- If the target changed after the preview, confirming fails with stale_preview: read the page again and stage a new write.
- Tell the person what you staged and why, in one or two sentences, so they can decide quickly.

## Errors (error.data.code, or _meta["gatehouse/error"].code on a tool result with isError)
- unauthorized: the token is missing, unknown or revoked; the person must create one (\`gatehouse tokens create\`).
- forbidden: the request came from a disallowed Origin/Host, or your user lacks the permission for this action.
- gateway_disabled: the person switched Gatehouse off; ask them to switch it on.
- rate_limited: too many requests; wait Retry-After seconds.
- payload_too_large: the request body is over 4 MiB.
- unknown_tool: no such tool for your token (it may exist but be hidden from you: do not retry).
- invalid_params: the arguments do not match the tool's input schema; the message says which field.
- entitlement_required: the feature is not in the current plan (required_plan says which plan has it).
- not_found / conflict: the target does not exist / clashes with existing content (e.g. a slug in use).
- staged_expired, stale_preview, staged_not_found, staged_already_decided: see "Writes are staged".
- staged_limit_reached: you have too many writes waiting for a decision (${STAGED_LIMITS.pendingPerToken} per token, ${STAGED_LIMITS.pendingTotal} in all); ask the person to decide some before staging more.
- staged_too_large: one write's payload and preview are over ${STAGED_LIMITS.writeBytes / 1024 / 1024} MiB; split it into smaller writes.
- provider_unavailable: no AI provider is configured for AI features such as translation.
- timeout / cancelled: the call took longer than its time limit, or your client cancelled it; it was stopped.
`;
}
