#!/usr/bin/env bash
# fetch_openai_node.sh: install the official OpenAI Node SDK (npm package
# "openai") into a cache directory, once, for scripts/openai_node_check.sh.
# Prints the node_modules directory that holds it.
#
#   PITSTOP_CACHE        cache root (default: $HOME/.cache/pitstop)
#   OPENAI_NODE_VERSION  SDK version (default: 6.49.0)
set -euo pipefail

version="${OPENAI_NODE_VERSION:-6.49.0}"
cache="${PITSTOP_CACHE:-${HOME}/.cache/pitstop}"
dir="${cache}/openai-node/${version}"

if [[ -s "${dir}/node_modules/openai/package.json" ]]; then
	echo "${dir}/node_modules"
	exit 0
fi
command -v npm >/dev/null || {
	echo "fetch_openai_node.sh: npm not found (needed to install openai@${version})" >&2
	exit 1
}
mkdir -p "${dir}"
tmp="$(mktemp -d "${dir}.XXXXXX")"
trap 'rm -rf "${tmp}"' EXIT
(cd "${tmp}" && npm install --silent --no-audit --no-fund --no-save --prefix "${tmp}" "openai@${version}" >&2)
rm -rf "${dir}/node_modules"
mv "${tmp}/node_modules" "${dir}/node_modules"
echo "${dir}/node_modules"
