/** The gate glyph (the same drawing as the tray and app icons in assets/). */
export function Logo({ size = 28 }: { size?: number }) {
  return (
    <svg width={size} height={size} viewBox="0 0 32 32" aria-hidden="true" className="logo">
      <rect x="1" y="1" width="30" height="30" rx="7" className="logo-bg" />
      <g className="logo-fg">
        <rect x="6" y="8" width="4" height="18" rx="1" />
        <rect x="22" y="8" width="4" height="18" rx="1" />
        <rect x="5" y="6" width="22" height="3.5" rx="1.5" />
        <rect x="12.5" y="11" width="2" height="15" rx="1" />
        <rect x="17.5" y="11" width="2" height="15" rx="1" />
      </g>
    </svg>
  );
}
