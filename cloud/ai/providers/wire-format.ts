import { z } from 'zod';
import type { AiMessage } from '../../../main/contract/cloud/ai.ts';
import type { SseEvent } from './sse.ts';
import type { ProviderFailure } from './outcome.ts';

/** What the routing layer hands an adapter: one concrete model and the messages. */
export interface GenerateInput {
  model: string;
  messages: AiMessage[];
  max_tokens: number;
  /** ask the provider to stream (SSE); the answer is the same either way */
  stream?: boolean;
}

/** Tokens as the provider counted them; absent when it did not say. */
export interface ReportedUsage {
  tokens_input?: number;
  tokens_output?: number;
}

export interface Answer {
  text: string;
  model: string;
  usage: ReportedUsage;
}

/** Reads one streamed answer event by event. */
export interface StreamReader {
  /** `done` when the provider said the answer is complete; a failure when it said it failed */
  onEvent(event: SseEvent): 'more' | 'done' | ProviderFailure;
  /** what arrived so far (the whole answer after `done`) */
  sofar(): Answer;
}

/** One provider wire format: how to ask and how to read the answer. */
export interface WireFormat {
  /** appended to the provider's base URL */
  path: string;
  headers(key: string): Record<string, string>;
  body(input: GenerateInput): unknown;
  /** a non-streamed success body; a string is a reason it could not be read */
  parseAnswer(json: unknown): Answer | string;
  /** the provider's own message in an error body, if it has one */
  errorMessage(json: unknown): string | undefined;
  streamReader(onText?: (delta: string) => void): StreamReader;
}

/** Both formats put the provider's message at `error.message` of an error body. */
const ErrorBody = z.object({ error: z.object({ message: z.string() }).loose() }).loose();

export function errorMessageOf(json: unknown): string | undefined {
  const r = ErrorBody.safeParse(json);
  return r.success ? r.data.error.message : undefined;
}
