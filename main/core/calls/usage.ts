import type { RecordedUsage, UsageSink } from '../ports/ports.ts';
import type { Clock } from '../../lib/clock.ts';
import { uuidv7 } from '../../lib/ids.ts';

/** The usage event names Gatehouse emits (the spec shows `ai.generation.completed`). */
export const USAGE_EVENTS = {
  /** a tools/call that ran (a read) or staged a write */
  toolCalled: 'mcp.tool.called',
  /** a staged write applied after approval */
  writeConfirmed: 'mcp.write.confirmed',
  /** an AI provider answered; carries its token counts */
  aiCompleted: 'ai.generation.completed',
  /** a page's text was machine-translated; units = characters of the source text (the gateway's translation_characters metric) */
  translated: 'translation.page.translated',
} as const;

/** What a caller says about a usage event; the recorder adds the id and time, the sink the site. */
export interface UsageFacts {
  event: string;
  product: string;
  feature: string;
  model?: string;
  units?: number;
  tokens_input?: number;
  tokens_output?: number;
}

/** The small port plugins get to report usage (the translation's AI tokens). */
export interface UsageReporter {
  record(facts: UsageFacts): void;
}

const count = (n: number | undefined, fallback: number) => (Number.isSafeInteger(n) && n! >= 0 ? n! : fallback);

/**
 * Makes usage events in the spec's shape, each with its UUIDv7 `event_id`
 * from the moment it happened, and hands them to the sink, which stamps the
 * site (the cloud outbox: the connected site's id). A sink that fails
 * is reported and never fails the call that was being counted.
 */
export class UsageRecorder implements UsageReporter {
  constructor(
    private readonly sink: UsageSink,
    private readonly clock: Clock,
    private readonly onError: (error: unknown, event: RecordedUsage) => void = () => {},
  ) {}

  record(facts: UsageFacts): void {
    const now = this.clock.now();
    const event: RecordedUsage = {
      event_id: uuidv7(now),
      event: facts.event,
      product: facts.product,
      feature: facts.feature,
      model: facts.model ?? '',
      units: count(facts.units, 1),
      tokens_input: count(facts.tokens_input, 0),
      tokens_output: count(facts.tokens_output, 0),
      timestamp: new Date(now).toISOString(),
    };
    try {
      this.sink.record(event);
    } catch (e) {
      this.onError(e, event);
    }
  }
}
