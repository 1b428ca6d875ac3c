package cli

import (
	"strings"
	"testing"
	"time"

	"oplab.dev/oplab/internal/jsonconv"
	"oplab.dev/oplab/internal/session"
)

// TestQueuePrinted: a start waiting for room prints its place and
// estimate, as the lab page shows them.
func TestQueuePrinted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		q    session.QueueData
		want string
	}{
		{session.QueueData{Position: 3, Length: 7, Estimate: jsonconv.Duration(125 * time.Second), Reason: "memory"},
			" ⧗ the machine is full (memory): 3 of 7 in the queue for a cluster, about 2m5s to wait\n"},
		{session.QueueData{Position: 1, Length: 1, Reason: "max-clusters"},
			" ⧗ the machine is full (max-clusters): 1 of 1 in the queue for a cluster\n"},
	} {
		var out strings.Builder
		sessionPrinter(&out, style{})(session.QueueUpdate(tc.q))
		if got := out.String(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}
