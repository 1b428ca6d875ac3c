package embedded

import (
	"context"
	"errors"
	"fmt"
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
	ps, err := freePorts(50, nil)
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

// TestNewPortsPassOverOtherClusters: a new cluster never takes a port of
// another cluster under the data directory, stopped ones included (a
// session asleep starts again on its own ports, and its cell runs as the
// user its API server's port names), and a pinned API server port that is
// another cluster's is refused with that cluster's name.
func TestNewPortsPassOverOtherClusters(t *testing.T) {
	bin, data := t.TempDir(), t.TempDir()
	p, err := New(Options{BinDir: bin, DataDir: data, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	high := portHigh
	if low, _, ok := ephemeralRange(); ok && low-1 < high {
		high = low - 1
	}
	// Stopped clusters hold three quarters of the range: a pick that did
	// not pass over them would land on one of their ports nearly always.
	held := map[int]bool{}
	for i, port := 0, portLow; port+6 <= portLow+(high-portLow)*3/4; i, port = i+1, port+6 {
		dir := p.clusterDir(fmt.Sprintf("asleep-%d", i))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		pt := ports{EtcdClient: port, EtcdPeer: port + 1, APIServer: port + 2, ControllerManager: port + 3, Scheduler: port + 4, Kwok: port + 5}
		if err := writeState(dir, &clusterState{Name: filepath.Base(dir), Ready: true, Ports: pt}); err != nil {
			t.Fatal(err)
		}
		for _, x := range pt.all() {
			held[x] = true
		}
	}
	for range 20 {
		pt, err := p.newPorts(0)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range pt.all() {
			if held[x] {
				t.Fatalf("new ports %+v: %d is a stopped cluster's", pt, x)
			}
		}
	}
	if _, err := p.newPorts(portLow + 2); err == nil || !strings.Contains(err.Error(), `"asleep-0"`) {
		t.Errorf("pinned to asleep-0's API server port: got %v, want an error naming asleep-0", err)
	}
}
