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

if ! command -v apt-get >/dev/null 2>&1; then
	echo "ensure-chromium: chromium not found and apt-get is not available; install Chromium" >&2
	exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO="sudo"
	else
		echo "ensure-chromium: chromium not found; run as root or install Debian's chromium package" >&2
		exit 1
	fi
fi

echo "ensure-chromium: installing Debian's chromium package"
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends chromium fonts-noto-cjk

if ! have_chromium; then
	echo "ensure-chromium: chromium was installed but is not in PATH" >&2
	exit 1
fi
