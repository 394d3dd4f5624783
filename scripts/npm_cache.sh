# npm_cache.sh: what the fetch_*.sh scripts share to install npm packages into
# pitstop's cache (sourced, not run):
#
#   npm_cache_check NAME WHY   npm and node present and the registry reachable
#                              (npm install would otherwise retry for minutes);
#                              fails with a one-line error naming NAME and WHY.
#   npm_cache_install NAME DIR PACKAGE_JSON PKG...
#                              installs PKG... into a fresh directory beside DIR
#                              and renames it to DIR, so a concurrent run never
#                              sees half an install; when another run placed
#                              DIR first, that one is kept.
#
# Both return non-zero with the message on stderr; callers run under set -e.

npm_cache_check() {
	local name=$1 why=$2
	command -v npm >/dev/null || {
		echo "${name}: npm not found (needed to install ${why})" >&2
		return 1
	}
	command -v node >/dev/null || {
		echo "${name}: node not found (${why} run on it)" >&2
		return 1
	}
	timeout 20 npm ping --loglevel=error >/dev/null 2>&1 || {
		echo "${name}: the npm registry is not reachable (npm ping failed)" >&2
		return 1
	}
}

npm_cache_install() {
	local name=$1 dir=$2 pkgjson=$3
	shift 3
	mkdir -p "$(dirname "${dir}")"
	local tmp
	tmp="$(mktemp -d "${dir}.install.XXXXXX")"
	if ! (cd "${tmp}" && echo "${pkgjson}" >package.json &&
		npm install --no-audit --no-fund --loglevel=error "$@" >&2); then
		rm -rf "${tmp}"
		echo "${name}: npm install of $* failed (is the npm registry reachable?)" >&2
		return 1
	fi
	if ! mv -T "${tmp}" "${dir}" 2>/dev/null; then
		rm -rf "${tmp}"
		[[ -d "${dir}/node_modules" ]] || {
			echo "${name}: could not move the install into ${dir}" >&2
			return 1
		}
	fi
}
