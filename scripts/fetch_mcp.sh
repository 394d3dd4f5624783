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

command -v npm >/dev/null || {
	echo "fetch_mcp.sh: npm not found (needed to install the MCP test packages)" >&2
	exit 1
}
command -v node >/dev/null || {
	echo "fetch_mcp.sh: node not found (the MCP test packages run on it)" >&2
	exit 1
}

# Fail fast when the registry cannot be reached (npm install would retry for minutes).
timeout 20 npm ping --loglevel=error >/dev/null 2>&1 || {
	echo "fetch_mcp.sh: the npm registry is not reachable (npm ping failed)" >&2
	exit 1
}

mkdir -p "${cache}/mcp"
tmp="$(mktemp -d "${cache}/mcp/.install.XXXXXX")"
trap 'rm -rf "${tmp}"' EXIT

# Install into a fresh directory and rename it into place, so a concurrent run
# never sees half an install.
(cd "${tmp}" && echo '{"private":true}' >package.json &&
	npm install --no-audit --no-fund --loglevel=error \
		"@modelcontextprotocol/server-everything@${everything}" \
		"@modelcontextprotocol/inspector@${inspector}" >&2) || {
	echo "fetch_mcp.sh: npm install of @modelcontextprotocol/server-everything@${everything} and @modelcontextprotocol/inspector@${inspector} failed (is the npm registry reachable?)" >&2
	exit 1
}
if ! mv -T "${tmp}" "${dir}" 2>/dev/null; then
	# Another run got there first.
	[[ -x "${bin}/mcp-server-everything" ]] || {
		echo "fetch_mcp.sh: could not move the install into ${dir}" >&2
		exit 1
	}
fi
echo "${bin}"
