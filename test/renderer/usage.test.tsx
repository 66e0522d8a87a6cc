// @vitest-environment jsdom
import { cleanup, screen, within } from '@testing-library/react';
import { userEvent } from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';
import { Usage } from '../../renderer/screens/usage/usage.tsx';
import { FakeApi, makeHealth } from './fake-api.ts';
import { renderWith } from './render.tsx';

afterEach(cleanup);

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
        hourly: { [hourKey(0)]: { ok: 4, staged: 1 }, [hourKey(3_600_000)]: { ok: 3, error: 1 }, [hourKey(40 * 3_600_000)]: { ok: 9 } },
        usage: {},
      },
    });
    renderWith(fake, <Usage />);
    const chart = await screen.findByRole('img', { name: /Calls per hour, last 24 hours, by result/ });
    expect(screen.getByText('9 calls in this period.')).toBeTruthy();
    expect(chart.querySelectorAll('rect.fill-ok')).toHaveLength(2);
    expect(chart.querySelectorAll('rect.fill-error')).toHaveLength(1);
    expect(within(screen.getByRole('list', { name: 'Results' })).getAllByRole('listitem').map((l) => l.textContent?.trim())).toEqual(['ok', 'error', 'staged']);
    const rows = within(screen.getByRole('region', { name: 'By tool and result' })).getAllByRole('row').slice(1);
    expect(rows.map((r) => r.querySelector('th')?.textContent)).toEqual(['pages_get', 'pages_update']);
    expect(rows[1]!.textContent).toContain('staged 3 · confirmed 2 · error 1');
    await userEvent.selectOptions(screen.getByLabelText('Period'), '7d');
    expect(screen.getByText('18 calls in this period.')).toBeTruthy();
  });

  it('lists the local usage totals: events per name and feature, AI tokens', async () => {
    const fake = new FakeApi({
      stats: {
        since: '2026-11-01T00:00:00.000Z', tools: {}, hourly: {},
        usage: {
          'mcp.tool.called': { 'site.pages.read': { events: 12, units: 12, tokens_input: 0, tokens_output: 0 } },
          'ai.generation.completed': { 'verto.translate': { events: 6, units: 6, tokens_input: 1200, tokens_output: 900 } },
        },
      },
    });
    renderWith(fake, <Usage />);
    const region = await screen.findByRole('region', { name: 'Metered usage' });
    const rows = within(region).getAllByRole('row').slice(1).map((r) => r.textContent);
    expect(rows).toEqual(['Tool calls that ran or staged a writesite.pages.read12—', 'AI answers (translation)verto.translate61200 / 900']);
  });

  it('says what a connected cloud has not reported, inventing nothing', async () => {
    const health = makeHealth();
    health.cloud.gateway.connected = true;
    renderWith(new FakeApi({ health }), <Usage />);
    expect(await screen.findByText(/has not reported any quota figures yet/)).toBeTruthy();
  });
});
