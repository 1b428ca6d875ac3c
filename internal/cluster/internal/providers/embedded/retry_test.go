package embedded

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"oplab.dev/oplab/internal/cluster/internal/providers"
)

// TestCreateRetriesWhenAPortIsTaken: a component that cannot bind its port
// makes Create start over on other ports, a bounded number of times, and
// nothing is left behind.
func TestCreateRetriesWhenAPortIsTaken(t *testing.T) {
	bin, data := t.TempDir(), t.TempDir()
	count := filepath.Join(t.TempDir(), "starts")
	etcd := "#!/bin/sh\necho start >> " + count + "\necho 'listen tcp 127.0.0.1:1: bind: address already in use' >&2\nexit 1\n"
	for _, b := range binaries {
		script := "#!/bin/sh\nexit 1\n"
		if b == "etcd" {
			script = etcd
		}
		if err := os.WriteFile(filepath.Join(bin, b), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p, err := New(Options{BinDir: bin, DataDir: data, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	err = p.Create(context.Background(), "busy", providers.CreateOptions{})
	if !errors.Is(err, errPortTaken) || !strings.Contains(err.Error(), "etcd exited (exit status 1)") {
		t.Fatalf("create: got %v, want a taken-port error naming etcd", err)
	}
	starts, _ := os.ReadFile(count)
	if got := strings.Count(string(starts), "start"); got != 3 {
		t.Errorf("etcd starts: got %d, want 3 (one try and two retries)", got)
	}
	if entries, _ := os.ReadDir(filepath.Join(data, "clusters")); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}

func TestFreePortsAvoidTheEphemeralRange(t *testing.T) {
	low, _, ok := ephemeralRange()
	if !ok {
		t.Fatal("cannot read /proc/sys/net/ipv4/ip_local_port_range")
	}
	ps, err := freePorts(50)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ps {
		if p < portLow || p >= low {
			t.Errorf("port %d: want %d <= port < %d (below the ephemeral range)", p, portLow, low)
		}
		if seen[p] {
			t.Errorf("port %d handed out twice", p)
		}
		seen[p] = true
	}
}
