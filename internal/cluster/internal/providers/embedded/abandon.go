package embedded

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// creatingLock is the file a Create (or the making of a seed) holds
// locked while it runs. The kernel drops a flock when its holder dies,
// however it dies, so a cluster that is not ready and whose lock is free
// was abandoned: the oplab that made it was killed half-way.
const creatingLock = ".creating"

// holdCreating takes the creation lock of dir, which the caller has just
// made, and returns its release. The lock's file is locked under a name of
// its own and only then renamed into place (a flock belongs to the open
// file, not its name), so whoever sees the file sees it held: a check in
// the instant between the file's creation and its lock would otherwise
// find a live creator gone and remove what it is making.
func holdCreating(dir string) (func(), error) {
	f, err := os.CreateTemp(dir, creatingLock+".*")
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	fmt.Fprintf(f, "%d\n", os.Getpid()) // for a person looking at the directory
	if err := os.Rename(f.Name(), filepath.Join(dir, creatingLock)); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return func() { f.Close() }, nil
}

// creatorAlive reports whether a process holds the creation lock of dir.
// A directory without the lock file has no creator either.
func creatorAlive(dir string) bool {
	f, err := os.OpenFile(filepath.Join(dir, creatingLock), os.O_RDWR, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == nil {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return false
	}
	return errors.Is(err, syscall.EWOULDBLOCK)
}

// abandoned reports whether the cluster of st, in dir, was left half-made
// by a Create that died.
func abandoned(dir string, st *clusterState) bool {
	return !st.Ready && !creatorAlive(dir)
}

// removeAbandoned deletes cluster name if its creation was abandoned, and
// reports whether it did. It holds the directory lock, as Delete does, so
// it never races another Delete.
func (p *Provider) removeAbandoned(ctx context.Context, name string) (bool, error) {
	dir := p.clusterDir(name)
	unlock, err := lockDir(dir)
	if err != nil {
		if isNotExist(err) {
			return false, nil
		}
		return false, err
	}
	defer unlock()
	st, err := readState(dir)
	if err != nil || !abandoned(dir, st) {
		return false, nil
	}
	p.logger.Info("removing a cluster whose creation was interrupted", "cluster", name)
	if err := p.teardown(ctx, dir, st); err != nil {
		return false, fmt.Errorf("remove abandoned cluster %q: %w", name, err)
	}
	return true, nil
}

// stopMarked kills every process that still carries dir as its marker
// once the recorded ones are stopped: one started by a Create killed
// before it could write the PID down, or a child that outlived its
// process group's leader. The cluster is being removed, so there is no
// grace period.
func (p *Provider) stopMarked(dir string) error {
	var errs []error
	for _, pid := range markedPIDs(dir) {
		_ = syscall.Kill(-pid, syscall.SIGKILL) // its group, when it leads one
		_ = syscall.Kill(pid, syscall.SIGKILL)
		if !p.reaper.waitGone(pid, dir, 5*time.Second) {
			errs = append(errs, fmt.Errorf("process %d did not exit after SIGKILL", pid))
		}
	}
	return errors.Join(errs...)
}

// markedPIDs lists the live processes whose environment marks them as the
// cluster's in dir.
func markedPIDs(dir string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := []byte(markerVar + "=" + dir)
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		environ, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(environ, []byte{0}) {
			if bytes.Equal(kv, want) && alive(pid, dir) {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}
