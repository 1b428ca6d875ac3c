#!/usr/bin/env bash
# Prepares the kind tests of `make test` and prints the variables for the
# test run to `eval`: env.sh's (a container engine, started as root when
# none runs, with this machine's workarounds) and, once the images are
# built (cached by content; a no-op when fresh), OPLAB_KIND_TEST=1. It
# names no node image: the kind provider takes the one build-images.sh
# made, as `oplab serve --provider kind` does, and the tests check it.
# Where no engine can run at all, or the images cannot be built (that
# needs root), it prints OPLAB_KIND_SKIP with the reason instead: the
# kind tests skip saying so and `make test` goes on. A failed build that
# could have worked fails.
#
#   eval "$(hack/kind/test-env.sh)"
source "$(dirname "$0")/lib.sh"

skip() {
  step "kind tests will be skipped: $1"
  printf 'export OPLAB_KIND_SKIP=%q\n' "$1"
  exit 0
}

log=$(mktemp); trap 'rm -f "$log"' EXIT
vars=$("$KIND_HACK/env.sh" 2>"$log") || {
  cat "$log" >&2
  why=$(sed -n 's/^error: //p' "$log" | tail -1)
  skip "${why:-no container engine could be prepared}"
}
cat "$log" >&2
echo "$vars"
eval "$vars"
[ "$(id -u)" = 0 ] || skip "building the kind images offline needs root (debootstrap); run \`sudo make images\` once"
# The reference operator's images, and the course's third-party operators'
# (Zalando's and Spotahome's, for their end-to-end tests).
nice -n 19 ionice -c3 "$KIND_HACK/build-images.sh" node postgres operator zalando redis >&2
echo "export OPLAB_KIND_TEST=1"
