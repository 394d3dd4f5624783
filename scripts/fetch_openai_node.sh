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
. "$(dirname "$0")/npm_cache.sh"
npm_cache_check fetch_openai_node.sh "openai@${version}"
npm_cache_install fetch_openai_node.sh "${dir}" '{"private":true}' "openai@${version}"
echo "${dir}/node_modules"
