package embedded

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"oplab.dev/oplab/internal/cluster/internal/providers"
)

// TestAbandonedCluster: a cluster left half-made is "creating" while its
// creator holds the creation lock and "abandoned" once the lock is free;
// List then removes it, stopping its recorded processes and one that
// carries its marker without a record.
func TestAbandonedCluster(t *testing.T) {
	p, err := New(Options{BinDir: t.TempDir(), DataDir: t.TempDir(), CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	const name = "half"
	dir := p.clusterDir(name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	release, err := holdCreating(dir)
	if err != nil {
		t.Fatal(err)
	}
	start := func() int {
		pid, err := p.reaper.start("/bin/sleep", []string{"60"}, p.env(dir, nil), dir, filepath.Join(dir, "sleep.log"), 0)
		if err != nil {
			t.Fatal(err)
		}
		return pid
	}
	recorded, unrecorded := start(), start()
	t.Cleanup(func() {
		for _, pid := range []int{recorded, unrecorded} {
			_ = p.reaper.stop(pid, dir, time.Second)
		}
	})
	st := &clusterState{Name: name, Created: time.Now(), Processes: []processRecord{{Name: "etcd", PID: recorded}}}
	if err := writeState(dir, st); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	got, err := p.Status(ctx, name)
	if err != nil || got.State != providers.StateCreating {
		t.Fatalf("status while the creator holds the lock: got %s (%v), want %s", got.State, err, providers.StateCreating)
	}
	release() // the creator dies
	got, err = p.Status(ctx, name)
	if err != nil || got.State != providers.StateAbandoned {
		t.Fatalf("status once the creator is gone: got %s (%v), want %s", got.State, err, providers.StateAbandoned)
	}
	list, err := p.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 0 {
		t.Errorf("list: got %+v, want the abandoned cluster removed", list)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("directory after list: %v, want it removed", err)
	}
	for _, pid := range []int{recorded, unrecorded} {
		if p.reaper.alive(pid, dir) {
			t.Errorf("process %d of the abandoned cluster is alive after list", pid)
		}
	}
}

// TestCreatorAliveOnceLockSeen: from the moment the creation lock's file
// can be seen, it is held. A prune that found it free in the instant
// between its creation and its flock took a live seed's directory for an
// abandoned one, stopped its etcd and removed files while the seed was
// copied.
func TestCreatorAliveOnceLockSeen(t *testing.T) {
	root := t.TempDir()
	for i := range 500 {
		dir := filepath.Join(root, strconv.Itoa(i))
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		seen := make(chan bool)
		go func() {
			for {
				if _, err := os.Stat(filepath.Join(dir, creatingLock)); err == nil {
					seen <- creatorAlive(dir)
					return
				}
				runtime.Gosched()
			}
		}()
		release, err := holdCreating(dir)
		if err != nil {
			t.Fatalf("attempt %d: %v", i, err)
		}
		alive := <-seen
		release()
		if !alive {
			t.Fatalf("attempt %d: the creation lock's file was seen free while its creator lived", i)
		}
	}
}
