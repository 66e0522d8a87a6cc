import { StrictMode } from 'react';
import { config as zodConfig } from 'zod';
import { createRoot } from 'react-dom/client';
import { pickConsoleEnv } from './api/index.ts';
import { App } from './app.tsx';
import './styles.css';

// zod compiles fast parsers with new Function(), which the console's CSP
// (no 'unsafe-eval') refuses; say so up front instead of letting it try.
zodConfig({ jitless: true });

const root = document.getElementById('root');
if (root) {
  createRoot(root).render(
    <StrictMode>
      <App env={pickConsoleEnv()} />
    </StrictMode>,
  );
}
