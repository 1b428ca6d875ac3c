package crilog

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

var criLine = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z (stdout|stderr) [FP] `)

func TestRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		script   string
		wantCode int
		want     []string // records without the timestamp
	}{
		{
			name:   "both streams",
			script: "echo one; echo two >&2; printf 'no newline'",
			want:   []string{"stdout F one", "stderr F two", "stdout F no newline"},
		},
		{
			name:     "exit code passed on",
			script:   "echo bye; exit 3",
			wantCode: 3,
			want:     []string{"stdout F bye", "stderr F crilog: /bin/sh exited: exit status 3"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			log := filepath.Join(t.TempDir(), "pod.log")
			code, err := Run(t.Context(), log, []string{"/bin/sh", "-c", tt.script})
			if err != nil || code != tt.wantCode {
				t.Fatalf("Run = %d, %v, want %d, nil", code, err, tt.wantCode)
			}
			got := records(t, log)
			// stdout and stderr are copied concurrently: compare as sets
			// ordered within each stream.
			slices.Sort(got)
			want := slices.Clone(tt.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("got records %q, want %q", got, want)
			}
		})
	}
}

func TestRunStopsProgramOnCancel(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "pod.log")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, log, []string{"/bin/sh", "-c", "trap 'echo terminated; exit 0' TERM; echo ready; while :; do sleep 0.05; done"})
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !slices.Contains(records(t, log), "stdout F ready") {
		if time.Now().After(deadline) {
			t.Fatal("program never printed ready")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("Run returned nil after cancel, want the context's error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	if got := records(t, log); !slices.Contains(got, "stdout F terminated") {
		t.Errorf("records %q, want the program's own goodbye after SIGTERM", got)
	}
}

func TestRunMissingProgram(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "pod.log")
	code, err := Run(t.Context(), log, []string{"/nonexistent/program"})
	if err == nil || code != 127 {
		t.Fatalf("Run = %d, %v, want 127 and an error", code, err)
	}
	if got := records(t, log); len(got) != 1 || !strings.Contains(got[0], "stderr F crilog: start /nonexistent/program") {
		t.Errorf("records %q, want one stderr record naming the program", got)
	}
}

// records reads a CRI log file, checks every line's form and returns the
// lines without their timestamps.
func records(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if l == "" {
			continue
		}
		if !criLine.MatchString(l) {
			t.Fatalf("line %q is not in CRI log format", l)
		}
		_, rest, _ := strings.Cut(l, " ")
		out = append(out, rest)
	}
	return out
}
