package room

import (
	"testing"

	"oplab.dev/oplab/internal/jsonconv"
)

// TestJSONConvention: a waiting start's position and the Gate's snapshot
// keep docs/api.md's convention (see jsonconv.Check), so whatever shows
// them writes milliseconds, not the nanoseconds a time.Duration would.
func TestJSONConvention(t *testing.T) {
	t.Parallel()
	for _, v := range []any{Position{}, Snapshot{}} {
		for _, err := range jsonconv.Check(v) {
			t.Errorf("%T: %v", v, err)
		}
	}
}
