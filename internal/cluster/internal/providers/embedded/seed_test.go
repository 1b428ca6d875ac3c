package embedded

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// TestCopyTreeSparse copies a tree whose file has data between long runs of
// zeros: the copy reads back identical, keeps its length (a trailing hole
// included), and takes fewer disk blocks than the original.
func TestCopyTreeSparse(t *testing.T) {
	src := filepath.Join(t.TempDir(), "seed")
	if err := os.MkdirAll(filepath.Join(src, "member", "wal"), 0o700); err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 4<<20)
	copy(data[100:], "first record")
	copy(data[1<<20+7:], "second record") // not block-aligned
	file := filepath.Join("member", "wal", "0.wal")
	if err := os.WriteFile(filepath.Join(src, file), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "member", "empty"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "etcd")
	if err := copyTree(src, dst); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dst, file))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("copy differs from the original (%d bytes, want %d)", len(got), len(data))
	}
	if fi, err := os.Stat(filepath.Join(dst, "member", "empty")); err != nil || fi.Size() != 0 {
		t.Fatalf("empty file: %v %v", fi, err)
	}
	if blocks(t, filepath.Join(dst, file)) >= blocks(t, filepath.Join(src, file)) {
		t.Errorf("copy takes %d blocks, the original %d: zeros were written", blocks(t, filepath.Join(dst, file)), blocks(t, filepath.Join(src, file)))
	}
	if err := copyTree(src, dst); err == nil {
		t.Error("copy onto an existing tree succeeded")
	}
}

func blocks(t *testing.T, path string) int64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Blocks
}

// TestProcessOnly cuts kube-controlplane's arguments after the first
// component's group.
func TestProcessOnly(t *testing.T) {
	p := process{
		args:    []string{"kube-apiserver", "--a=1", groupSeparator, "kube-scheduler", "--b=2", groupSeparator, "kwok"},
		members: []member{{name: "kube-apiserver"}, {name: "kube-scheduler"}, {name: "kwok"}},
	}
	one := p.only(1)
	if want := []string{"kube-apiserver", "--a=1"}; !slices.Equal(one.args, want) || len(one.members) != 1 {
		t.Errorf("only(1): args %q, %d members; want %q, 1", one.args, len(one.members), want)
	}
	two := p.only(2)
	if want := p.args[:5]; !slices.Equal(two.args, want) || len(two.members) != 2 {
		t.Errorf("only(2): args %q, %d members; want %q, 2", two.args, len(two.members), want)
	}
	if !slices.Equal(p.only(3).args, p.args) {
		t.Errorf("only(3) changed the arguments: %q", p.only(3).args)
	}
}

// TestSeedKey changes when a binary is rebuilt.
func TestSeedKey(t *testing.T) {
	bin := t.TempDir()
	for _, b := range binaries {
		if err := os.WriteFile(filepath.Join(bin, b), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p, err := New(Options{BinDir: bin, DataDir: t.TempDir(), CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	k1, err := p.seedKey()
	if err != nil {
		t.Fatal(err)
	}
	if k2, _ := p.seedKey(); k2 != k1 {
		t.Fatalf("key not stable: %s, %s", k1, k2)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(filepath.Join(bin, controlPlaneBinary), later, later); err != nil {
		t.Fatal(err)
	}
	if k3, _ := p.seedKey(); k3 == k1 {
		t.Errorf("key %s unchanged after %s was rebuilt", k1, controlPlaneBinary)
	}
}

// TestPruneSeeds keeps the current seed, a recently used one and a seed
// being made; it removes a seed unused for longer than seedUnused, and an
// abandoned half-made seed together with the process it recorded.
func TestPruneSeeds(t *testing.T) {
	p, err := New(Options{BinDir: t.TempDir(), DataDir: t.TempDir(), CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(p.cacheDir, seedsDir)
	old := time.Now().Add(-seedUnused - time.Hour)
	dirs := map[string]time.Time{
		"current":       old, // kept whatever its age
		"recent":        time.Now(),
		"unused":        old,
		".making-live":  time.Now(),
		".making-stale": time.Now().Add(-seedAbandoned - time.Minute),
	}
	for name := range dirs {
		if err := os.MkdirAll(filepath.Join(root, name), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	stale := filepath.Join(root, ".making-stale")
	log := filepath.Join(t.TempDir(), "sleep.log")
	pid, err := p.reaper.start("/bin/sleep", []string{"60"}, p.env(stale, nil), stale, log, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.reaper.stop(pid, stale, time.Second) })
	if err := writeState(stale, &clusterState{Name: "seed", Processes: []processRecord{{Name: "etcd", PID: pid, Log: log}}}); err != nil {
		t.Fatal(err)
	}
	for name, mtime := range dirs {
		if err := os.Chtimes(filepath.Join(root, name), mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}

	p.pruneSeeds(root, "current")

	var left []string
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if want := []string{".making-live", "current", "recent"}; !slices.Equal(left, want) {
		t.Errorf("after pruning: %q, want %q", left, want)
	}
	if p.reaper.alive(pid, stale) {
		t.Errorf("the abandoned seed's process %d is still running", pid)
	}
}
