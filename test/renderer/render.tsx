import { render } from '@testing-library/react';
import type { ReactElement } from 'react';
import type { ConsoleEnv } from '../../renderer/api/index.ts';
import { ConsoleProvider } from '../../renderer/lib/console-context.tsx';
import type { FakeApi } from './fake-api.ts';

/** Render a screen against a FakeApi (or the real core's Api, see core-api.ts), as the browser console would see it. */
export function renderWith(fake: Pick<FakeApi, 'api'>, ui: ReactElement, env: Partial<ConsoleEnv> = {}) {
  const value: ConsoleEnv = {
    mode: 'browser',
    api: fake.api,
    exportHref: (format, filters) =>
      `/export?format=${format}&${new URLSearchParams(filters as Record<string, string>).toString()}`,
    ...env,
  };
  return render(<ConsoleProvider value={value}>{ui}</ConsoleProvider>);
}
