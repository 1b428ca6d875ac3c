# apt-install.sh is sourced by the scripts/ensure-*.sh scripts: apt_install
# installs Debian packages as root, or through sudo, and fails with a clear
# message where neither apt-get nor the rights to use it are there.
#
# Usage: apt_install WHO WHAT PACKAGE...
#   WHO names the calling script in messages, WHAT what it was looking for.

apt_install() {
	who=$1
	what=$2
	shift 2
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "$who: $what not found and apt-get is not available; install $*" >&2
		return 1
	fi
	sudo=""
	if [ "$(id -u)" -ne 0 ]; then
		if ! command -v sudo >/dev/null 2>&1; then
			echo "$who: $what not found; run as root or install Debian's $*" >&2
			return 1
		fi
		sudo="sudo"
	fi
	echo "$who: installing Debian's $*"
	$sudo apt-get update
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "$@"
}
