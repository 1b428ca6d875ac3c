#!/bin/sh
# ensure-chromium.sh makes a headless-capable Chromium available for the
# browser tests (internal/server/browser_test.go). It does nothing when
# chromium is already in PATH; otherwise it installs Debian's chromium
# package. It fails loudly when that is impossible, so the browser tests
# never run without a browser.
set -eu

have_chromium() {
	for b in chromium chromium-browser; do
		if command -v "$b" >/dev/null 2>&1; then
			echo "Chromium found: $(command -v "$b")"
			return 0
		fi
	done
	return 1
}

if have_chromium; then
	exit 0
fi

. "$(dirname "$0")/apt-install.sh"
apt_install ensure-chromium "chromium" chromium fonts-noto-cjk

if ! have_chromium; then
	echo "ensure-chromium: chromium was installed but is not in PATH" >&2
	exit 1
fi
