package clustertest

import "testing"

// RequireKind skips a test that runs kind clusters through another layer
// (an App on the kind provider) unless the kind tests are on, as
// NewKindProvider does, and holds the machine's kind lock for the rest of
// the test: its clusters are made one at a time with every other kind
// test's.
func RequireKind(t testing.TB) {
	t.Helper()
	NewKindProvider(t)
	lockKind(t)
}
