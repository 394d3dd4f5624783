#!/usr/bin/env bash
# fetch_mcp.sh: install the npm MCP packages the MCP tests run (tools/mcp,
# runtime/api) into a cache directory, once, at pinned versions:
#
#   @modelcontextprotocol/server-everything  the reference server (tools add, echo,
#                                            longRunningOperation; 2025.11.25 is the
#                                            last release with those names)
#   @modelcontextprotocol/inspector          the MCP Inspector (its --cli mode)
#
# Nothing is downloaded when the cache already holds them. The directory of their
# executables (node_modules/.bin) is printed on stdout.
#
#   PITSTOP_CACHE                cache root (default: $HOME/.cache/pitstop)
#   MCP_EVERYTHING_VERSION       default 2025.11.25
#   MCP_INSPECTOR_VERSION        default 0.17.2 (later ones want node >= 22.19)
#
# Usage: scripts/fetch_mcp.sh            # prints .../mcp/<versions>/node_modules/.bin
#        export PITSTOP_MCP_BIN="$(scripts/fetch_mcp.sh)"
set -euo pipefail

everything="${MCP_EVERYTHING_VERSION:-2025.11.25}"
inspector="${MCP_INSPECTOR_VERSION:-0.17.2}"
cache="${PITSTOP_CACHE:-${HOME}/.cache/pitstop}"
dir="${cache}/mcp/everything-${everything}_inspector-${inspector}"
bin="${dir}/node_modules/.bin"

if [[ -x "${bin}/mcp-server-everything" && -x "${bin}/mcp-inspector" ]]; then
	echo "${bin}"
	exit 0
fi

. "$(dirname "$0")/npm_cache.sh"
npm_cache_check fetch_mcp.sh "the MCP test packages"
npm_cache_install fetch_mcp.sh "${dir}" '{"private":true}' \
	"@modelcontextprotocol/server-everything@${everything}" \
	"@modelcontextprotocol/inspector@${inspector}"
echo "${bin}"
