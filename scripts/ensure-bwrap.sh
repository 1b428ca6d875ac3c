#!/bin/sh
# ensure-bwrap.sh makes bubblewrap (bwrap) available so that the web
# console's kubectl runs in a sandbox that cannot read the server's files.
# It does nothing when bwrap is already in PATH; otherwise it installs
# Debian's bubblewrap package. Whether bwrap can create namespaces on this
# machine is decided at run time by internal/console, which falls back to
# running unsandboxed (and says so) where it cannot.
set -eu

if command -v bwrap >/dev/null 2>&1; then
	echo "bwrap found at $(command -v bwrap)"
	exit 0
fi

. "$(dirname "$0")/apt-install.sh"
apt_install ensure-bwrap "bwrap" bubblewrap

if ! command -v bwrap >/dev/null 2>&1; then
	echo "ensure-bwrap: bubblewrap was installed but bwrap is not in PATH" >&2
	exit 1
fi
