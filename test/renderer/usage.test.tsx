// @vitest-environment jsdom
import { cleanup, screen, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';
import { USAGE_EVENTS } from '../../main/core/calls/usage.ts';
import { EVENT_LABELS } from '../../renderer/screens/usage/usage-events.tsx';
import { Usage } from '../../renderer/screens/usage/usage.tsx';
import type { LimitState } from '../../main/contract/cloud/usage.ts';
import { FakeApi, iso } from './fake-api.ts';
import { makeCloudUsage, quotaAlert } from './fake-cloud.ts';
import { renderWith } from './render.tsx';

afterEach(cleanup);

const limit = (over: Partial<LimitState>): LimitState => ({
  scope: 'site',
  subject: 'site_01JD5K',
  metric: 'mcp_actions',
  period: 'month',
  limit: 100,
  used: 0,
  reserved: 0,
  remaining: 100,
  period_start: '2026-11-01T00:00:00.000Z',
  reset_at: '2026-12-01T00:00:00.000Z',
  source: 'plan',
  ...over,
});

const hourKey = (msAgo: number) => new Date(Date.now() - msAgo).toISOString().slice(0, 13);

describe('Usage', () => {
  it('shows loading, then empty figures and the cloud as not connected', async () => {
    const fake = new FakeApi().hold('stats.get');
    renderWith(fake, <Usage />);
    expect(screen.getByText(/Loading usage figures/)).toBeTruthy();
    fake.release('stats.get');
    expect(await screen.findByText(/No calls in this period/)).toBeTruthy();
    expect(screen.getByText('No tool has been called yet.')).toBeTruthy();
    const quota = screen.getByRole('region', { name: 'Cloud quotas' });
    expect(within(quota).getByText(/^Not connected\./)).toBeTruthy();
    expect(quota.querySelector('svg, progress, meter')).toBeNull();
  });

  it('shows an error', async () => {
    renderWith(new FakeApi().fail('stats.get', 'store_corrupt', 'stats unreadable'), <Usage />);
    expect((await screen.findByRole('alert')).textContent).toContain('stats unreadable');
  });

  it('charts calls per hour by result and lists tools busiest first', async () => {
    const fake = new FakeApi({
      stats: {
        since: '2026-11-01T00:00:00.000Z',
        tools: { pages_get: { ok: 7 }, pages_update: { staged: 3, confirmed: 2, error: 1 } },
        hourly: {
          [hourKey(0)]: { ok: 4, staged: 1 },
          [hourKey(3_600_000)]: { ok: 3, error: 1 },
          [hourKey(40 * 3_600_000)]: { ok: 9 },
        },
        usage: {},
      },
    });
    renderWith(fake, <Usage />);
    const chart = await screen.findByRole('img', { name: /Calls per hour, last 24 hours, by result/ });
    expect(screen.getByText('9 calls in this period.')).toBeTruthy();
    expect(chart.querySelectorAll('rect.fill-ok')).toHaveLength(2);
    expect(chart.querySelectorAll('rect.fill-error')).toHaveLength(1);
    expect(
      within(screen.getByRole('list', { name: 'Results' }))
        .getAllByRole('listitem')
        .map((l) => l.textContent?.trim()),
    ).toEqual(['ok', 'error', 'staged']);
    const rows = within(screen.getByRole('region', { name: 'By tool and result' }))
      .getAllByRole('row')
      .slice(1);
    expect(rows.map((r) => r.querySelector('th')?.textContent)).toEqual(['pages_get', 'pages_update']);
    expect(rows[1]!.textContent).toContain('staged 3 · confirmed 2 · error 1');
    await userEvent.selectOptions(screen.getByLabelText('Period'), '7d');
    expect(screen.getByText('18 calls in this period.')).toBeTruthy();
  });

  it('lists the local usage totals: events per name and feature, AI tokens', async () => {
    const fake = new FakeApi({
      stats: {
        since: '2026-11-01T00:00:00.000Z',
        tools: {},
        hourly: {},
        usage: {
          'mcp.tool.called': { 'site.pages.read': { events: 12, units: 12, tokens_input: 0, tokens_output: 0 } },
          'ai.generation.completed': {
            'verto.translate': { events: 6, units: 6, tokens_input: 1200, tokens_output: 900 },
          },
        },
      },
    });
    renderWith(fake, <Usage />);
    const region = await screen.findByRole('region', { name: 'Metered usage' });
    const rows = within(region)
      .getAllByRole('row')
      .slice(1)
      .map((r) => r.textContent);
    expect(rows).toEqual([
      'Tool calls that ran or staged a writesite.pages.read12—',
      'AI answers (translation)verto.translate61200 / 900',
    ]);
  });

  it('names every usage event the service emits in words, none as its raw name', () => {
    for (const name of Object.values(USAGE_EVENTS)) expect(EVENT_LABELS[name], name).toMatch(/^[A-Z][A-Za-z]* [a-z]/);
  });

  it('says what a connected cloud has not reported, inventing nothing', async () => {
    const fake = new FakeApi();
    fake.state.cloud.usage = makeCloudUsage({ connected: true, source: 'cloud', fetched_at: iso(Date.now()) });
    renderWith(fake, <Usage />);
    expect(await screen.findByText(/has not reported any quota figures yet/)).toBeTruthy();
    expect(screen.getByText('No daily history from the gateway yet.')).toBeTruthy();
    expect(fake.callsTo('cloud.usage')).toEqual([{ period: 'month', days: 30 }]);
  });

  it('shows a bar per quota, most urgent first, with used, left, reset and a warning when near or over', async () => {
    const now = Date.now();
    const day = (n: number) => new Date(Math.floor(now / 86_400_000) * 86_400_000 - n * 86_400_000).toISOString();
    const reset = '2026-12-01T00:00:00.000Z';
    const fake = new FakeApi();
    fake.state.cloud.usage = makeCloudUsage({
      connected: true,
      source: 'cloud',
      fetched_at: iso(now),
      limits: [
        limit({ metric: 'mcp_actions', limit: 1000, used: 120, remaining: 880, reset_at: reset }),
        limit({ metric: 'ai_tokens', limit: 10_000, used: 10_000, remaining: 0, reset_at: reset }),
        limit({
          metric: 'translation_characters',
          scope: 'account',
          subject: 'acme',
          limit: 50_000,
          used: 42_000,
          reserved: 500,
          remaining: 7500,
          reset_at: reset,
          source: 'operator',
        }),
        limit({ metric: 'reports', limit: 0, used: 0, remaining: 0, reset_at: reset }),
      ],
      summary: {
        period: 'month',
        period_start: '2026-11-01T00:00:00.000Z',
        reset_at: reset,
        events: 1234,
        totals: {},
        by_product: {},
      },
      history: [
        {
          period_start: day(0),
          metric: 'mcp_actions',
          product: 'mcp',
          feature: 'site.pages.read',
          amount: 40,
          events: 40,
        },
        {
          period_start: day(1),
          metric: 'mcp_actions',
          product: 'mcp',
          feature: 'site.pages.read',
          amount: 60,
          events: 60,
        },
        {
          period_start: day(1),
          metric: 'mcp_actions',
          product: 'verto',
          feature: 'verto.translate',
          amount: 20,
          events: 20,
        },
        {
          period_start: day(2),
          metric: 'ai_tokens',
          product: 'verto',
          feature: 'verto.translate',
          amount: 9000,
          events: 3,
        },
        {
          period_start: day(45),
          metric: 'mcp_actions',
          product: 'mcp',
          feature: 'site.pages.read',
          amount: 999,
          events: 999,
        },
      ],
      quota_alerts: [
        quotaAlert({ reset_at: reset }),
        quotaAlert({
          level: 'near',
          metric: 'translation_characters',
          scope: 'account',
          subject: 'acme',
          limit: 50_000,
          used: 42_000,
          reset_at: reset,
        }),
      ],
    });
    renderWith(fake, <Usage />);
    const region = await screen.findByRole('region', { name: 'Cloud quotas' });
    const alerts = within(region).getByRole('alert');
    expect(
      within(alerts)
        .getAllByRole('listitem')
        .map((li) => li.textContent?.replace(/resets .*?\./, 'resets R.')),
    ).toEqual([
      'AI tokens per month (this site) is used up: 10,000 of 10,000. It resets R. (code quota_exceeded)',
      'Translated characters per month (account acme) is nearly used up: 42,000 of 50,000. It resets R.',
    ]);
    const bars = within(within(region).getByRole('list', { name: 'Quotas' })).getAllByRole('listitem');
    expect(bars.map((b) => b.querySelector('.quota-name')!.textContent)).toEqual([
      'AI tokens per month (this site)',
      'Translated characters per month (account acme)',
      'MCP tool calls per month (this site)',
      'Reports per month (this site)',
    ]);
    const meters = within(region).getAllByRole('meter');
    expect(
      meters.map((m) => [
        m.getAttribute('aria-label'),
        m.getAttribute('aria-valuenow'),
        m.getAttribute('aria-valuemax'),
        m.getAttribute('aria-valuetext'),
      ]),
    ).toEqual([
      ['AI tokens per month (this site)', '10000', '10000', '100% used, used up'],
      ['Translated characters per month (account acme)', '42000', '50000', '84% used, nearly used up'],
      ['MCP tool calls per month (this site)', '120', '1000', '12% used'],
    ]);
    expect(bars[1]!.textContent).toContain('(+500 held for running AI calls)');
    expect(bars[1]!.textContent).toMatch(/Nearly used up\. 7,500 left · resets .+ · set by the gateway’s operator/);
    expect(bars[0]!.textContent).toMatch(/Used up\. 0 left · resets /);
    expect(bars[3]!.textContent).toMatch(/^Reports per month \(this site\)not included in the planresets /);
    expect(region.textContent).toContain('1,234 events this month');

    const tokens = within(region).getByRole('img', { name: 'AI tokens per day, last 30 days, by product' });
    expect(tokens.querySelectorAll('rect.fill-product-verto')).toHaveLength(1);
    expect(tokens.textContent).toContain('10k');
    await userEvent.selectOptions(within(region).getByLabelText('Metric'), 'mcp_actions');
    const chart = within(region).getByRole('img', { name: 'MCP tool calls per day, last 30 days, by product' });
    // 45 days ago is outside the window
    expect(chart.querySelectorAll('rect.fill-product-mcp')).toHaveLength(2);
    expect(chart.querySelectorAll('rect.fill-product-verto')).toHaveLength(1);
    expect(within(region).getByRole('list', { name: 'Products' }).textContent).toBe(' MCP gateway (this app) Verto');
  });

  it('says when the figures are cached because the gateway could not be asked, and why', async () => {
    const fake = new FakeApi();
    fake.state.cloud.usage = makeCloudUsage({
      connected: true,
      source: 'cached',
      fetched_at: '2026-11-22T08:00:00.000Z',
      limits: [limit({ metric: 'mcp_actions', limit: 1000, used: 10, remaining: 990 })],
      error: { code: 'gateway_unavailable', message: 'connect ECONNREFUSED', request_id: 'req_u1' },
    });
    renderWith(fake, <Usage />);
    const note = await screen.findByText(/The gateway could not be asked now; these figures are from/);
    expect(note.textContent).toContain(
      'The cloud gateway could not be reached: connect ECONNREFUSED (code gateway_unavailable, request id req_u1)',
    );
    expect(screen.getAllByRole('meter')).toHaveLength(1);
  });
});
