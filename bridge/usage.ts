import { CLIENTS, DEFAULT_CONNECT_TIMEOUT_S } from './args.ts';

/** Exit codes, also listed in --help and docs/bridge.md. */
export const EXIT = {
  ok: 0,
  internal: 1,
  usage: 2,
  credential: 3,
  configFile: 4,
} as const;

export const USAGE_LINE =
  'usage: gatehouse-bridge [--url URL | --remote URL] [--token-keychain ACCOUNT | --token-env VAR] [--header "Name: value"]... [options]   (gatehouse-bridge --help for more)';

export const HELP = `gatehouse-bridge: connects an MCP client that speaks stdio to a Streamable HTTP MCP endpoint
(the local Gatehouse service, a site's /wp-json/gatehouse-mcp/v1/mcp, or any other MCP server).
stdout carries the protocol only; logs go to stderr.

usage:
  gatehouse-bridge [options]
  gatehouse-bridge config --client ${CLIENTS.join('|')} [--write] [--name NAME] [--config-file PATH] [options]

target:
  --url URL                 the MCP endpoint, reached straight (the bridge sends the token and headers
                            itself); without it, the local Gatehouse service found through runtime.json
                            in the data dir
  --remote URL              a remote MCP server reached THROUGH the running Gatehouse service: the
                            upstream configured for URL (\`gatehouse upstreams add ID --url URL --oauth\`)
                            with its own tool names; the service holds its sign-in and headers, stages
                            its writes for approval and audits every call. Needs this bridge's Gatehouse
                            token (--token-keychain or --token-env); --header does not apply
  --data-dir DIR            Gatehouse data dir (default: $GATEHOUSE_DATA_DIR, else the platform's app data folder)
  --connect-timeout SECS    how long to wait for the endpoint to come up (default ${DEFAULT_CONNECT_TIMEOUT_S})

credentials (kept out of the client's config file where possible):
  --token-keychain ACCOUNT  read the bearer token from the OS keychain (put it there with
                            \`gatehouse tokens create --keychain ACCOUNT\`)
  --vault auto|keychain|file  where --token-keychain looks (default auto: the keychain, else the file vault)
  --token-env VAR           read the bearer token from the environment variable VAR
  --header "Name: value"    extra request header, repeatable; \${VAR} in the value expands from the environment

logging:
  --log-level debug|info|warn|error   (default info)
  --log-file PATH           also append log lines to PATH

config:
  prints the snippet (or, for claude-code, the \`claude mcp add\` command) that starts this bridge with
  the given options; --write edits the client's config file in place, keeping a timestamped backup
  and every other entry; running it again changes nothing.

exit codes:
  ${EXIT.ok}  stdin closed, SIGINT or SIGTERM (in-flight requests aborted, session closed), or --help/--version
  ${EXIT.internal}  unexpected internal error
  ${EXIT.usage}  bad command line
  ${EXIT.credential}  the token could not be read (keychain entry missing, vault unreachable, variable unset)
  ${EXIT.configFile}  config --write: the client's config file is not valid JSON or could not be written (left untouched)
`;
