import { VERSION } from '../../main/version.ts';

export const USAGE = `gatehouse-cloud ${VERSION} — the reference cloud gateway (licenses, entitlements, usage, quotas)

Usage: gatehouse-cloud <command> [options]

  serve [--host 127.0.0.1] [--port 8787|0] [--trust-proxy]
        [--rate-limit-address N] [--rate-limit-site N] [--rate-limit-register N]   start the service
  accounts add NAME | accounts list
  licenses create --plan P [--account A] [--sites N] [--expires DATE]   print the key (shown once)
  licenses list [--account A] | licenses revoke ID | licenses extend ID --expires DATE|never
  plans list | plans set ID [--rank N] [--features a,b] [--products a,b] [--site-limit N]
                            [--limits metric:period:N,...] [--channels stable,beta]
  limits list | limits set --scope account|department|site|project --subject ID
                           --metric M --period day|month --limit N|none
  products list | products enable|disable PRODUCT (--account A | --site S)
  sites list [--account A] | sites disconnect ID | sites assign ID [--department D] [--project P]
  keys show | keys rotate

Every command: --data-dir DIR (or GATEHOUSE_CLOUD_DATA_DIR), --database-url URL (or DATABASE_URL;
default: the embedded database in the data dir), --json, --log-level, --help.
Exit codes: 0 ok, 1 the operation failed, 2 bad usage.`;
