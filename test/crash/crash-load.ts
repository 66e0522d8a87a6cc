import type { Client } from '@modelcontextprotocol/client';
import type { ApiDispatch } from '../../main/contract/api.ts';
import type { StagedResponse } from '../../main/contract/staged.ts';
import { connectClient } from '../helpers/service.ts';

/**
 * The load one round puts on the service until it is killed: a few workers,
 * each with its own MCP client, staging page creations (each with a slug of
 * its own, so every apply is visible), confirming them through the admin API
 * or, in agent mode, through the MCP tool, discarding some and reading. The
 * journal keeps what the service acknowledged; a call cut off by the kill
 * counts as unknown, never as acknowledged.
 */

/** A small seeded PRNG (mulberry32): the same seed replays the same choices. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface StagedKnown {
  id: string;
  slug: string;
  title: string;
  round: number;
}

export interface Journal {
  staged: Map<string, StagedKnown>;
  /** confirms answered "confirmed" (HTTP 200 or a tool result), by staged id */
  confirmed: Map<string, 'admin' | 'mcp'>;
  discarded: Set<string>;
  /** confirms answered staged_expired */
  refusedExpired: Set<string>;
  ops: number;
  unknown: number;
}

/** The kinds of call the load makes, as counted at the moment of a kill. */
export type OpKind = 'stage' | 'confirm_admin' | 'confirm_mcp' | 'discard' | 'read';

/** What one round's load is doing right now. */
export interface LoadProbe {
  /** calls sent and not yet answered, by kind */
  inFlight: Map<OpKind, number>;
  /** resolves when the round's first write is staged (the load is past connecting and the first policy decision) */
  firstStage: Promise<void>;
}

export const newJournal = (): Journal => ({
  staged: new Map(),
  confirmed: new Map(),
  discarded: new Set(),
  refusedExpired: new Set(),
  ops: 0,
  unknown: 0,
});

export interface LoadTarget {
  mcpUrl: string;
  token: string;
  admin: ApiDispatch;
}

const structured = (r: { structuredContent?: unknown }) => (r.structuredContent ?? {}) as Record<string, unknown>;

/** Runs `workers` loops until `stop()` says so; at most `stageBudget` new writes in all. */
export function runLoad(
  t: LoadTarget,
  j: Journal,
  opts: { round: number; seed: number; workers: number; stageBudget: number; stop: () => boolean },
): { done: Promise<void>; probe: LoadProbe } {
  let staged!: () => void;
  const probe: LoadProbe = { inFlight: new Map(), firstStage: new Promise((r) => (staged = r)) };
  const done = loadWorkers(t, j, opts, probe, staged);
  return { done, probe };
}

async function loadWorkers(
  t: LoadTarget,
  j: Journal,
  opts: { round: number; seed: number; workers: number; stageBudget: number; stop: () => boolean },
  probe: LoadProbe,
  staged: () => void,
): Promise<void> {
  let budget = opts.stageBudget;
  let n = 0;
  const sent = async <T>(kind: OpKind, call: Promise<T>): Promise<T> => {
    probe.inFlight.set(kind, (probe.inFlight.get(kind) ?? 0) + 1);
    try {
      return await call;
    } finally {
      probe.inFlight.set(kind, probe.inFlight.get(kind)! - 1);
    }
  };
  const worker = async (w: number) => {
    const rnd = prng(opts.seed * 1000 + opts.round * 10 + w);
    const client: Client | null = await connectClient(t.mcpUrl, t.token).catch(() => null);
    if (!client) {
      j.unknown++;
      return;
    }
    try {
      while (!opts.stop()) {
        const pick = rnd();
        const mine = [...j.staged.values()].filter((s) => !j.confirmed.has(s.id) && !j.discarded.has(s.id));
        const target = mine[Math.floor(rnd() * mine.length)];
        j.ops++;
        try {
          if (pick < 0.4 && budget > 0) {
            budget--;
            const k = n++;
            const slug = `crash-r${opts.round}-n${k}-s${opts.seed}`;
            const title = `Crash ${opts.seed} round ${opts.round} write ${k}`;
            const r = await sent('stage', client.callTool({ name: 'pages_create', arguments: { title, slug } }));
            const s = structured(r) as Partial<StagedResponse>;
            if (!r.isError && s.staged_id) {
              j.staged.set(s.staged_id, { id: s.staged_id, slug, title, round: opts.round });
              staged();
            }
          } else if (pick < 0.75 && target) {
            if (rnd() < 0.5) {
              const r = await sent('confirm_admin', t.admin('staged.confirm', { id: target.id }));
              if (r.ok && r.data.status === 'confirmed') j.confirmed.set(target.id, 'admin');
              else if (!r.ok && r.code === 'staged_expired') j.refusedExpired.add(target.id);
              else if (!r.ok && r.code === 'service_unavailable') j.unknown++;
            } else {
              const r = await sent(
                'confirm_mcp',
                client.callTool({ name: 'staged_writes_confirm', arguments: { staged_id: target.id } }),
              );
              const s = structured(r);
              if (!r.isError && s.status === 'confirmed') j.confirmed.set(target.id, 'mcp');
              else if ((r._meta?.['gatehouse/error'] as { code?: string } | undefined)?.code === 'staged_expired')
                j.refusedExpired.add(target.id);
            }
          } else if (pick < 0.85 && target) {
            const r = await sent('discard', t.admin('staged.discard', { id: target.id }));
            if (r.ok && r.data.status === 'discarded') j.discarded.add(target.id);
          } else if (rnd() < 0.5) {
            await sent('read', client.callTool({ name: 'pages_list', arguments: { limit: 5 } }));
          } else if (target) {
            await sent('read', client.callTool({ name: 'staged_writes_status', arguments: { staged_id: target.id } }));
          }
        } catch {
          // cut off by the kill (or the connection it broke): the outcome is unknown, not acknowledged
          j.unknown++;
          if (opts.stop()) break;
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    } finally {
      await client.close().catch(() => undefined);
    }
  };
  await Promise.all(Array.from({ length: opts.workers }, (_, w) => worker(w)));
}
