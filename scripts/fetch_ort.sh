#!/usr/bin/env bash
# fetch_ort.sh: fetch the ONNX Runtime shared library that package predictor loads
# (through github.com/yalue/onnxruntime_go) into a cache directory, once.
#
# The library comes from the npm registry package onnxruntime-node, which ships a
# prebuilt libonnxruntime.so.1 for linux/x64. Nothing is downloaded when the
# library is already in the cache. The path of the library is printed on stdout.
#
#   PITSTOP_CACHE   cache root (default: $HOME/.cache/pitstop)
#   ORT_VERSION     onnxruntime-node version (default: 1.24.3; onnxruntime_go
#                   v1.27.0 needs ORT >= 1.24)
#
# Usage: scripts/fetch_ort.sh            # prints .../ort/1.24.3/libonnxruntime.so.1
#        export PITSTOP_ORT_LIB="$(scripts/fetch_ort.sh)"
set -euo pipefail

version="${ORT_VERSION:-1.24.3}"
cache="${PITSTOP_CACHE:-${HOME}/.cache/pitstop}"
dir="${cache}/ort/${version}"
lib="${dir}/libonnxruntime.so.1"

if [[ -s "${lib}" ]]; then
	echo "${lib}"
	exit 0
fi

case "$(uname -s)/$(uname -m)" in
Linux/x86_64) member="package/bin/napi-v6/linux/x64/libonnxruntime.so.1" ;;
Linux/aarch64) member="package/bin/napi-v6/linux/arm64/libonnxruntime.so.1" ;;
*)
	echo "fetch_ort.sh: no prebuilt onnxruntime for $(uname -s)/$(uname -m) in onnxruntime-node; set PITSTOP_ORT_LIB to a libonnxruntime you built" >&2
	exit 1
	;;
esac

command -v npm >/dev/null || {
	echo "fetch_ort.sh: npm not found (needed to fetch onnxruntime-node@${version})" >&2
	exit 1
}

tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT

# npm pack downloads the package tarball without running its install scripts.
(cd "${tmp}" && npm pack --silent "onnxruntime-node@${version}" >/dev/null) || {
	echo "fetch_ort.sh: npm pack onnxruntime-node@${version} failed" >&2
	exit 1
}
tarball="$(ls "${tmp}"/onnxruntime-node-*.tgz 2>/dev/null | head -n1)"
[[ -n "${tarball}" ]] || {
	echo "fetch_ort.sh: npm pack produced no tarball" >&2
	exit 1
}
tar -xzf "${tarball}" -C "${tmp}" "${member}" || {
	echo "fetch_ort.sh: ${member} not found in ${tarball##*/}" >&2
	exit 1
}

mkdir -p "${dir}"
# Write under a temporary name and rename, so a concurrent run never sees half a file.
cp "${tmp}/${member}" "${dir}/.libonnxruntime.so.1.$$"
chmod 0644 "${dir}/.libonnxruntime.so.1.$$"
mv -f "${dir}/.libonnxruntime.so.1.$$" "${lib}"
echo "${lib}"
