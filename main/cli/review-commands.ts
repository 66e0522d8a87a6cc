import type { SettleOutcome } from '../contract/staged.ts';
import { safe, table, unwrap, UsageError } from './output.ts';
import { out, parse, withConnection } from './args.ts';
import { stagedText } from './staged-text.ts';
import { principalLabel } from '../contract/principal-label.ts';

/** `applied` or `not-applied` (`not_applied` too), the person's finding on a write whose outcome is unknown. */
function settleOutcome(word: string | undefined): SettleOutcome {
  const outcome = word?.replace('-', '_');
  if (outcome !== 'applied' && outcome !== 'not_applied')
    throw new UsageError('staged settle ID needs what you found on the other side: applied or not-applied');
  return outcome;
}

/** `gatehouse staged list|show|confirm|discard|settle`: a person's decision on staged writes. */
export async function staged(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  const { values, positionals } = parse(rest, { status: { type: 'string' }, 'preview-hash': { type: 'string' } });
  const json = !!values.json;
  const id = positionals[0];
  if (sub !== 'list' && !id)
    throw new UsageError(`staged ${sub ?? '<command>'} needs a staged id (see: gatehouse staged list)`);
  if (sub === 'settle') settleOutcome(positionals[1]);
  await withConnection(values, async (c) => {
    if (sub === 'list') {
      const rows = unwrap(await c.dispatch('staged.list', values.status ? { status: values.status as 'pending' } : {}));
      return out(json, rows, () =>
        table(
          rows.map((s) => ({
            id: s.id,
            status: s.blocked ? `${s.status}, blocked: ${s.blocked}` : s.status,
            tool: s.tool,
            summary: s.preview.summary,
            by: s.token_label,
            expires_at: s.expires_at,
            decided_by: s.decided_by ? principalLabel(s.decided_by) : null,
          })),
          ['id', 'status', 'tool', 'summary', 'by', 'expires_at', 'decided_by'],
        ),
      );
    }
    if (sub === 'show') {
      const s = unwrap(await c.dispatch('staged.get', { id: id! }));
      return out(json, s, () => stagedText(s));
    }
    if (sub === 'confirm' || sub === 'discard') {
      // An approval names the preview it approves: the one `staged show` printed (--preview-hash), or the one fetched now.
      const previewHash =
        sub === 'confirm'
          ? (values['preview-hash'] ?? unwrap(await c.dispatch('staged.get', { id: id! })).preview_hash ?? undefined)
          : undefined;
      const s = unwrap(
        sub === 'confirm'
          ? await c.dispatch('staged.confirm', { id: id!, ...(previewHash ? { preview_hash: previewHash } : {}) })
          : await c.dispatch('staged.discard', { id: id! }),
      );
      return out(
        json,
        s,
        () =>
          safe`${s.id} ${s.status}.` +
          (s.status === 'confirmed'
            ? `\n${JSON.stringify(s.result, null, 2)
                .split('\n')
                .map((l) => safe`${l}`)
                .join('\n')}`
            : ''),
      );
    }
    if (sub === 'settle') {
      const s = unwrap(await c.dispatch('staged.settle', { id: id!, outcome: settleOutcome(positionals[1]) }));
      return out(
        json,
        s,
        () =>
          safe`${s.id} settled: ${s.settlement?.outcome === 'applied' ? 'it was applied (now confirmed)' : 'it was not applied'}. Nothing was sent to the upstream.`,
      );
    }
    throw new UsageError(`unknown staged command '${sub ?? ''}': use list, show, confirm, discard or settle`);
  });
}

/** `gatehouse console-link`: a fresh one-time login link from the running service. */
export async function consoleLink(args: string[]): Promise<void> {
  const { values } = parse(args, {});
  await withConnection(values, async (c) => {
    const { url } = unwrap(await c.dispatch('console.loginLink', {}));
    out(!!values.json, { url }, () => safe`${url}`);
  });
}
