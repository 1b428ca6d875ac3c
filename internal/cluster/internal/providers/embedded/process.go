package embedded

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// stopGrace is how long a process gets to exit after SIGTERM before SIGKILL.
const stopGrace = 10 * time.Second

// reaper waits for the children this oplab process started, so that a child
// that dies does not linger as a zombie that still looks alive. Processes
// adopted from an earlier run of oplab are not our children; init reaps them.
type reaper struct {
	mu      sync.Mutex
	running map[int]bool
	// status keeps how each child ended, for error messages.
	status map[int]string
}

func newReaper() *reaper { return &reaper{running: map[int]bool{}, status: map[int]string{}} }

// isRunning reports whether pid is a child of this process that has not
// exited. It is known from the moment Start returns, when /proc may not yet
// show the new program's environment: the kernel lets the parent go on
// before the child's exec has laid out its environment.
func (r *reaper) isRunning(pid int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.running[pid]
}

// alive reports whether pid is a live process of the cluster marked by
// marker: a running child of ours, or any process carrying the marker.
func (r *reaper) alive(pid int, marker string) bool {
	return r.isRunning(pid) || alive(pid, marker)
}

// exitStatus says how the child pid ended ("exit status 1", "signal:
// killed"), or "" when it is not a child that has ended.
func (r *reaper) exitStatus(pid int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status[pid]
}

// start runs path with args and env in a session of its own (so a Ctrl-C in
// oplab's terminal does not reach the cluster), stdout and stderr appended to
// logPath and extra as its descriptors 3 and up, in the namespaces of
// unshare (syscall.CLONE_*) of its own, and returns its PID.
func (r *reaper) start(path string, args, env []string, dir, logPath string, unshare uintptr, extra ...*os.File) (int, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, err
	}
	defer logf.Close() // the child holds its own descriptor
	cmd := exec.Command(path, args...)
	cmd.Env = env
	cmd.Dir = dir
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.ExtraFiles = extra
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Unshareflags: unshare}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	pid := cmd.Process.Pid
	r.mu.Lock()
	r.running[pid] = true
	delete(r.status, pid)
	r.mu.Unlock()
	go func() {
		err := cmd.Wait() // the exit is seen through alive()
		status := "exit status 0"
		if err != nil {
			status = err.Error()
		}
		r.mu.Lock()
		delete(r.running, pid)
		r.status[pid] = status
		r.mu.Unlock()
	}()
	return pid, nil
}

// markerVar names the variable, in every cluster process's environment, that
// holds the cluster's state directory.
const markerVar = "OPLAB_CLUSTER_DIR"

// alive reports whether pid is a running process of the cluster whose state
// directory is marker. The marker, read from the process's environment,
// guards against a PID that the kernel has since given to an unrelated
// process.
func alive(pid int, marker string) bool {
	if pid <= 0 {
		return false
	}
	proc := "/proc/" + strconv.Itoa(pid)
	stat, err := os.ReadFile(proc + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses: "pid (comm) S ...".
	if i := bytes.LastIndexByte(stat, ')'); i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' || stat[i+2] == 'X' {
		return false
	}
	environ, err := os.ReadFile(proc + "/environ")
	if err != nil {
		return false
	}
	for _, kv := range bytes.Split(environ, []byte{0}) {
		if string(kv) == markerVar+"="+marker {
			return true
		}
	}
	return false
}

// stop ends the process pid (and its process group) if it is still ours:
// SIGTERM, then SIGKILL after grace. It returns once the process is gone.
func (r *reaper) stop(pid int, marker string, grace time.Duration) error {
	if !r.alive(pid, marker) {
		return nil
	}
	if err := syscall.Kill(-pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal %d: %w", pid, err)
	}
	if r.waitGone(pid, marker, grace) {
		return nil
	}
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill %d: %w", pid, err)
	}
	if r.waitGone(pid, marker, 5*time.Second) {
		return nil
	}
	return fmt.Errorf("process %d did not exit after SIGKILL", pid)
}

func (r *reaper) waitGone(pid int, marker string, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for delay := 5 * time.Millisecond; ; delay = min(delay*2, 100*time.Millisecond) {
		if !r.alive(pid, marker) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(delay)
	}
}
