import { VERSION } from '../../main/version.ts';

export const USAGE = `gatehouse-cloud ${VERSION} — the reference cloud gateway (licenses, entitlements, usage, quotas, AI routing, updates, agency and enterprise)

Usage: gatehouse-cloud <command> [options]

  serve [--host 127.0.0.1] [--port 8787|0] [--trust-proxy] [--public-url URL] [--releases-dir DIR]
        [--rate-limit-address N] [--rate-limit-site N] [--rate-limit-register N]
        [--log-retention-days N]                                             start the service
        [--drain-seconds N (10)] [--max-connections-per-address N (64; 0 = off)]
        (GATEHOUSE_CLOUD_METRICS_TOKEN: a Bearer token for /metrics, else only this host reads it)
  accounts add NAME | accounts list
  accounts keys create ACCOUNT [--label L]   print an account API key (shown once)
  accounts keys list [--account A] | accounts keys revoke KEY_ID
  accounts policy show ACCOUNT | accounts policy set ACCOUNT [--ai-providers a,b|all]
                  [--ai-tags eu,approved|none] [--ai-fallback a,b|none] [--features-off x,y|none]
                  [--support-priority p1|plan]
  licenses create --plan P [--account A] [--sites N] [--staging-sites N] [--expires DATE]   print the key (shown once)
  licenses list [--account A] | licenses revoke ID | licenses extend ID --expires DATE|never
  plans list | plans set ID [--rank N] [--features a,b] [--products a,b] [--site-limit N]
                            [--limits metric:period:N,...] [--channels stable,beta] [--support-priority p3|none]
  limits list | limits set --scope account|department|site|project --subject ID
                           --metric M --period day|month --limit N|none
  products list | products enable|disable PRODUCT (--account A | --site S)
  sites list [--account A] | sites disconnect ID | sites assign ID [--department D] [--project P]
  keys show | keys rotate
  providers add ID --kind openai|anthropic --base-url URL --api-key-env VAR --models a,b [--tags eu,approved] [--disabled]
  providers list | providers remove|disable|enable ID | providers class NAME --models a,b|none
  releases publish --product P --channel C --version V [--staging 0-100] [--notes TEXT]
                   [--platform win|mac|linux --arch x64|arm64|...] FILE...
  releases list [--product P] [--channel C] | releases stage --product P --channel C --version V --percentage N

Every command: --data-dir DIR (or GATEHOUSE_CLOUD_DATA_DIR), --database-url URL (or DATABASE_URL;
default: the embedded database in the data dir), --json, --log-level, --help.
Exit codes: 0 ok, 1 the operation failed, 2 bad usage, 3 the database cannot be reached.
With PostgreSQL, operator commands need the master key serve uses: GATEHOUSE_CLOUD_MASTER_KEY, or master.key
in --data-dir; without either they read it where the database says serve keeps it (same machine and user).`;
