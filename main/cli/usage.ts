import { DEFAULT_PORT } from '../contract/default-port.ts';
import { VERSION } from '../version.ts';

export const USAGE = `gatehouse ${VERSION} — local MCP gateway

Usage: gatehouse <command> [options]

  serve [--host 127.0.0.1] [--port ${DEFAULT_PORT}|0] [--enable] [--max-connections 1024]    start the headless service
  status                                                         on or off, approvals waiting, warnings (what the Overview says)
  tokens create --label L [--user LOGIN] [--keychain ACCOUNT]
                [--read-only] [--tools a,b] [--plugins p,q]        create a token (shown once), bound to
                                                                 LOGIN, or to the editor 'agent' (--user admin: the administrator)
                [--profile NAME]                                 narrowed to a profile (see profiles)
  tokens list | tokens revoke ID
  users list | users add LOGIN --role R | users set-role LOGIN R
  settings get [KEY] | settings set KEY VALUE
  staged list [--status S] | staged show ID | staged confirm ID [--preview-hash H] | staged discard ID
  staged settle ID applied|not-applied                           record what you found for a write whose outcome is unknown
  audit list [--tool T] [--result R] [--user U] [--token ID] [--plugin P] [--from ISO] [--to ISO] [--limit N] [--cursor C]
  audit export --format csv|jsonl [filters as for list] [> file]
  console-link                                                   a one-time console login link
  cloud connect --url GATEWAY_URL [--environment production|staging] [--public-key KEY] [--name N]
  cloud activate LICENSE_KEY|-   (- reads the key from stdin)    activate a license for this site
  cloud deactivate | cloud status | cloud sync | cloud disconnect
  upstreams add ID --stdio [--env NAME=VALUE]... [--read TOOL]... [--timeout-ms N] [--per-client [--max-processes N] [--idle-minutes N]] -- COMMAND ARGS...
                  [--allow-write DIR]... [--allow-read DIR]... [--allow-net HOST[:PORT]]... [--no-suggest] [--unconfined]
  upstreams process ID --per-client [--max-processes N] [--idle-minutes N] | --shared   one process per client token, or one for all
  upstreams grant ID [--allow-write DIR]... [--allow-read DIR]... [--allow-net HOST]... [--unconfined]   replaces its sandbox grants
  upstreams add ID --url URL [--header "Name: value"]... [--token-keychain ACCOUNT] [--read TOOL]... [--timeout-ms N]
  upstreams add ID --url URL --sse [--header "Name: value"]...   a server on the old HTTP+SSE transport
  upstreams list | show ID | remove ID | enable ID | disable ID | test ID | tools ID
  upstreams add ID --url URL --oauth [--client-id ID [--client-secret -]] [--client-metadata-url URL] [--scopes "a b"]   a remote server that signs in with OAuth
                  (--client-secret - reads a pre-registered confidential client's secret from stdin)
  upstreams login ID [--no-browser]     sign in (prints the URL, waits for the browser); upstreams logout ID
  profiles create NAME [--tools a,b] [--upstreams x,y]         a named tool set for tokens
  profiles list | show NAME | remove NAME   (remove refuses while tokens use it)
  upstreams review ID [--approve TOOL=HASH]... [--approve-all] [--hide TOOL]... [--read TOOL]... [--write TOOL]...
  upstreams review ID [--approve-prompt NAME=HASH]... [--hide-prompt NAME]...   prompts (--approve-all covers them); upstreams prompts ID lists them
  upstreams recipes ID                  the preview recipes of its writes (yours and the shipped ones), and whether each is used
  upstreams recipe ID TOOL --shows file_write|file_edit|state --via READ:ARG=PATH[,ARG=PATH][@LABEL]... [--content ARG] [--edits ARG] [--path ARG] [--stat READ:ARG=PATH]
  upstreams recipe ID TOOL --remove     your recipe for a write (in place of a shipped one), or removed
  upstreams review ID [--approve-view URI=HASH]... [--hide-view URI]...   MCP App views (--approve-all covers them); upstreams show ID lists them
  upstreams review ID [--approve-instructions HASH] [--hide-instructions]   its instructions to the model (--approve-all covers them); upstreams show ID shows them
  clients list [CLIENT]                                          the MCP clients here, their servers, which go through Gatehouse
  clients import CLIENT [--server [SCOPE:]NAME]... [--as [SCOPE:]NAME=ID]... [--dry-run] [--yes]   their servers as upstreams
                  [--allow-write [NAME=]DIR]... [--allow-read [NAME=]DIR]... [--allow-net [NAME=]HOST]... [--unconfined [NAME]]
  clients connect CLIENT | clients restore CLIENT                point the client at Gatehouse (backup first) | undo it
                                   CLIENT: claude-desktop, claude-code, cursor, vscode, windsurf, codex, gemini, zed
  policy show | check FILE | set FILE                            the tool-call policy (Cedar; FILE - reads stdin)
  policy explain --token ID --tool NAME [--args JSON]            what a call would do, and the policies that decide it

Every command: --data-dir DIR (or GATEHOUSE_DATA_DIR), --json, --vault auto|keychain|file, --help.
Exit codes: 0 ok, 1 the operation failed, 2 bad usage.`;
