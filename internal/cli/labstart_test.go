package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/session"
)

// TestLabStartInterrupted interrupts `oplab lab start` (Ctrl-C) while the
// cluster is being made: the session is recorded as failed with its steps,
// no cluster or process is left behind (clustertest.Main checks the
// processes), and the learner can start again.
func TestLabStartInterrupted(t *testing.T) {
	bin := clustertest.BinDir(t)
	flags := []string{"--data-dir", t.TempDir(), "--bin-dir", bin}
	interruptStart(t, flags)

	stdout, _, err := run(t, append([]string{"lab", "status", "-o", "json"}, flags...)...)
	if err != nil {
		t.Fatal(err)
	}
	var st localStatus
	if err := json.Unmarshal([]byte(stdout), &st); err != nil {
		t.Fatalf("status -o json: %v\n%s", err, stdout)
	}
	if st.State != session.Failed || !strings.Contains(st.Error, "context canceled") || st.Kubeconfig != "" {
		t.Errorf("after the interruption: got state %s, error %q, kubeconfig %q; want failed, context canceled, no cluster", st.State, st.Error, st.Kubeconfig)
	}
	if stdout, _, _ := run(t, append([]string{"cluster", "list"}, flags...)...); !strings.Contains(stdout, "No clusters") {
		t.Errorf("clusters after the interruption:\n%s", stdout)
	}
	stdout, _, err = run(t, append([]string{"lab", "status", "--timeline"}, flags...)...)
	if err != nil || !strings.Contains(stdout, "state") || !strings.Contains(stdout, "provisioning → failed: create cluster") || !strings.Contains(stdout, "Starting etcd") {
		t.Errorf("timeline: %v\n%s\nwant the start, its steps and the failure", err, stdout)
	}
	// A failed session is not active: the next start is not refused for it.
	interruptStart(t, flags)
	var list []json.RawMessage
	stdout, _, err = run(t, append([]string{"lab", "status", "--all", "-o", "json"}, flags...)...)
	if err := json.Unmarshal([]byte(stdout), &list); err != nil || len(list) != 2 || strings.Count(stdout, `"state": "failed"`) != 2 {
		t.Errorf("sessions after two interrupted starts: %v\n%s\nwant two, both failed", err, stdout)
	}
}

// interruptStart runs `oplab lab start failover` and cancels it once etcd
// has started, as Ctrl-C would.
func interruptStart(t *testing.T, flags []string) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Streams{In: strings.NewReader(""), Out: &out, ErrOut: &out}, append([]string{"lab", "start", "failover"}, flags...))
	}()
	waitFor(t, &out, "✓ starting etcd", time.Minute)
	cancel()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "failed") {
			t.Errorf("interrupted start: got %v, want the session failed", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("lab start did not return within a minute of its interruption")
	}
}
