#!/bin/sh
# ensure-bwrap.sh makes bubblewrap (bwrap) available: every embedded
# cluster runs in a cell of bubblewrap namespaces (internal/cell), and the
# web console's kubectl in a sandbox that cannot read the server's files.
# It does nothing when bwrap is already in PATH; otherwise it installs
# Debian's bubblewrap package. Whether bwrap can create namespaces on this
# machine is decided at run time: where it cannot, oplab serve says so and
# serves only this machine's learner, without classes, unless
# --insecure-clusters is given.
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
