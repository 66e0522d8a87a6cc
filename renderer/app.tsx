import { useEffect, useMemo, useRef, useState } from 'react';
import type { ComponentType } from 'react';
import type { ConsoleEnv } from './api/index.ts';
import { CONSOLE_SCREENS, type ConsoleScreen } from '../main/contract/index.ts';
import { Logo } from './components/logo.tsx';
import { ConsoleProvider } from './lib/console-context.tsx';
import { watchSession } from './lib/session-watch.ts';
import { useApprovalLinkRoute, useHashRoute } from './lib/use-hash-route.ts';
import { ApprovalLinkPage } from './screens/approval-link.tsx';
import { Activity } from './screens/activity/activity.tsx';
import { Approvals } from './screens/approvals/approvals.tsx';
import { Cloud } from './screens/cloud/cloud.tsx';
import { Overview } from './screens/overview.tsx';
import { SettingsScreen } from './screens/settings.tsx';
import { Tokens } from './screens/tokens/tokens.tsx';
import { Usage } from './screens/usage/usage.tsx';
import { Upstreams } from './screens/upstreams/upstreams.tsx';
import { Clients } from './screens/clients/clients.tsx';
import { PolicyScreen } from './screens/policy/policy.tsx';

// The screen list (keys, titles, order) is the contract's, shared with the desktop shell's links.
const COMPONENTS: Record<ConsoleScreen, ComponentType> = {
  overview: Overview,
  approvals: Approvals,
  tokens: Tokens,
  upstreams: Upstreams,
  clients: Clients,
  policy: PolicyScreen,
  activity: Activity,
  usage: Usage,
  cloud: Cloud,
  settings: SettingsScreen,
};
const SCREENS: ReadonlyArray<{ key: ConsoleScreen; title: string; Screen: ComponentType }> = CONSOLE_SCREENS.map(
  (s) => ({ ...s, Screen: COMPONENTS[s.key] }),
);

const KEYS = SCREENS.map((s) => s.key);

export function App({ env }: { env: ConsoleEnv }) {
  const link = useApprovalLinkRoute();
  if (link) return <ApprovalLinkApp env={env} link={link} />;
  return <ConsoleApp env={env} />;
}

/** An approval link's page: that one write, no navigation to the rest of the console. */
function ApprovalLinkApp({ env, link }: { env: ConsoleEnv; link: string }) {
  return (
    <ConsoleProvider value={env}>
      <div className="shell">
        <header className="top">
          <div className="brand">
            <Logo />
            <span>Gatehouse</span>
          </div>
        </header>
        <main id="main">
          <h1>Approve a staged write</h1>
          <ApprovalLinkPage link={link} />
        </main>
      </div>
    </ConsoleProvider>
  );
}

function ConsoleApp({ env }: { env: ConsoleEnv }) {
  const [signedOut, setSignedOut] = useState(false);
  const watched = useMemo<ConsoleEnv>(() => ({ ...env, api: watchSession(env.api, () => setSignedOut(true)) }), [env]);
  const route = useHashRoute(KEYS, 'overview');
  const screen = SCREENS.find((s) => s.key === route) ?? SCREENS[0]!;
  const pending = usePendingCount(watched);
  const heading = useRef<HTMLHeadingElement>(null);
  const shownRoute = useRef(route);

  useEffect(() => {
    document.title = `${pending ? `(${pending}) ` : ''}${screen.title} · Gatehouse`;
  }, [screen.title, pending]);
  // Moving to another screen puts focus on its heading, so keyboard and screen-reader users start there.
  useEffect(() => {
    if (shownRoute.current === route) return;
    shownRoute.current = route;
    heading.current?.focus();
  }, [route]);

  const { Screen } = screen;
  return (
    <ConsoleProvider value={watched}>
      <div className="shell">
        <header className="top">
          <button type="button" className="skip" onClick={() => heading.current?.focus()}>
            Skip to content
          </button>
          <div className="brand">
            <Logo />
            <span>Gatehouse</span>
          </div>
          <nav aria-label="Console">
            <ul>
              {SCREENS.map((s) => (
                <li key={s.key}>
                  <a href={`#${s.key}`} aria-current={s.key === route ? 'page' : undefined}>
                    {s.title}
                    {s.key === 'approvals' && pending > 0 ? (
                      <>
                        <span className="nav-count" aria-hidden="true">
                          {pending}
                        </span>
                        <span className="visually-hidden">, {pending} pending</span>
                      </>
                    ) : null}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
        </header>
        <main id="main">
          <h1 ref={heading} tabIndex={-1}>
            {screen.title}
          </h1>
          {/* Signed out, every card would show the admin API's refusal (written for scripts: "send the admin key as a Bearer token"); a person needs the way back in instead. */}
          {signedOut && env.mode === 'browser' ? <SignedOut /> : <Screen key={screen.key} />}
        </main>
      </div>
    </ConsoleProvider>
  );
}

function SignedOut() {
  return (
    <div className="banner" role="alert">
      This browser is not signed in to Gatehouse, or its session has ended. Open the one-time login link that{' '}
      <code>gatehouse serve</code> printed, or get a new one with <code>gatehouse console-link</code>.
    </div>
  );
}

/** Pending approvals for the nav badge: from the health report, refreshed when something changes. */
function usePendingCount(env: ConsoleEnv): number {
  const [count, setCount] = useState(0);
  useEffect(() => {
    let alive = true;
    const refresh = () => {
      void env.api['health.get']({}).then((r) => {
        if (alive && r.ok) setCount(r.data.pending_approvals);
      });
    };
    refresh();
    const stop = env.api.subscribe((event) => {
      if (event.type === 'staged' || event.type === 'health') refresh();
    });
    return () => {
      alive = false;
      stop();
    };
  }, [env]);
  return count;
}
