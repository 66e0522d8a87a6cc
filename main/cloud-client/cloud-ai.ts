import type { AiProvider, AiProviderSource } from '../core/ports/ports.ts';
import type { CloudApi } from './cloud-api.ts';

/**
 * The AiProvider port of main/core/ports/ports.ts through the gateway's
 * ai/generate (docs/cloud-gateway.md "AI"): the gateway picks the provider under the
 * account's policy, meters the tokens and records the usage itself, so the
 * caller must not queue an `ai.generation.completed` event for it (the
 * outbox skips that event name). Errors arrive as CloudClientError with the
 * gateway's code: provider_unavailable, quota_exceeded (with scope and
 * reset_at), entitlement_required (with required_plan), product_inactive.
 */
export interface AiUse {
  /** the product and dotted feature the generation is for, e.g. verto / verto.translate */
  product: string;
  feature: string;
}

export function cloudAiProvider(api: () => CloudApi | null, use: AiUse): AiProvider {
  return {
    id: 'cloud',
    async generate(req, signal) {
      const a = api();
      if (!a) throw new Error('cloud AI used while not connected');
      const messages = [
        ...(req.system ? [{ role: 'system' as const, content: req.system }] : []),
        { role: 'user' as const, content: req.prompt },
      ];
      const { data } = await a.aiGenerate(
        {
          product: use.product,
          feature: use.feature,
          messages,
          ...(req.model ? { model: req.model } : {}),
          ...(req.max_tokens ? { max_tokens: req.max_tokens } : {}),
        },
        { signal },
      );
      return {
        text: data.text,
        model: data.model,
        tokens_input: data.usage.tokens_input,
        tokens_output: data.usage.tokens_output,
      };
    },
  };
}

/** An AiProviderSource that offers the cloud provider while connected. */
export function cloudAiSource(api: () => CloudApi | null, use: AiUse): AiProviderSource {
  const provider = cloudAiProvider(api, use);
  return {
    current: () => (api() ? provider : null),
    howToConfigure:
      'AI features run through the Gatehouse cloud gateway: connect it (gatehouse cloud connect --url GATEWAY_URL) and activate a license whose plan includes the feature (gatehouse cloud activate LICENSE_KEY).',
  };
}

/**
 * The site plugin's AI source in the service: the cloud provider while
 * connected, and every refusal seen on the way (quota_exceeded above all)
 * reported to `seen` before it reaches the tool, so the console warns too.
 */
export function cloudAiFor(api: () => CloudApi | null, use: AiUse, seen: (e: unknown) => void): AiProviderSource {
  const inner = cloudAiSource(api, use);
  return {
    howToConfigure: inner.howToConfigure,
    current() {
      const p = inner.current();
      if (!p) return null;
      return {
        id: p.id,
        generate: (req, signal) =>
          p.generate(req, signal).catch((e: unknown) => {
            seen(e);
            throw e;
          }),
      };
    },
  };
}
