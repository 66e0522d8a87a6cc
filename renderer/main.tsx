import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { pickConsoleEnv } from './api/index.ts';
import { App } from './app.tsx';
import './styles.css';

const root = document.getElementById('root');
if (root) {
  createRoot(root).render(
    <StrictMode>
      <App env={pickConsoleEnv()} />
    </StrictMode>,
  );
}
