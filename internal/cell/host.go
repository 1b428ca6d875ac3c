package cell

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"oplab.dev/oplab/internal/bwrap"
)

// Inside a cell every process runs as this user and group: an unprivileged
// id of the cell's own user namespace, mapped to the user that made the cell.
const (
	UID = bwrap.UID
	GID = bwrap.GID
)

// Spec describes a cell.
type Spec struct {
	// Dir is the cell's own directory, bound writable at the same path.
	Dir string
	// Init is the cell program (cmd/cell); it runs as the cell's first
	// process and starts every other one.
	Init string
	// Programs are the files the cell may run, bound read-only at the same
	// paths. Init is bound whether listed or not.
	Programs []string
	// Forwards are the ports on 127.0.0.1 that the host reaches in the cell
	// from the start; each is listened on on the host's loopback.
	Forwards []int
	// User, when not zero, is the host user the cell runs as when oplab
	// runs as root: an unprivileged user of the cell's own, to whom Own
	// gives the cell's files. Zero runs the cell as the caller, mapped to
	// an unprivileged user inside its user namespace.
	User int
	// Keep names the files in Dir (relative) that the host keeps for
	// itself: Own does not give them to User.
	Keep []string
	// Cgroup are the cgroup.procs files of the control group the cell's
	// processes run in (package budget): each process writes itself there
	// on the host, before anything of it runs in the cell. None leaves
	// the cell in the caller's group.
	Cgroup []string
}

// The cell's files inside Dir.
func controlPath(dir string) string { return filepath.Join(dir, "run", "cell.sock") }
func tmpDir(dir string) string      { return filepath.Join(dir, "tmp") }
func etcDir(dir string) string      { return filepath.Join(dir, "run", "etc") }

// TmpDir is the cell's /tmp, as the host sees it: the cell's volumes (the
// host-path provisioner's directories) are made there.
func TmpDir(dir string) string { return tmpDir(dir) }

// Holder is the command that makes a cell and runs its first process, and
// what the caller hands to it. Run Path with Args and ExtraFiles as a child
// (in a session of its own, so a Ctrl-C in oplab's terminal does not reach
// the cell), then call Started; on a failed start, Close.
type Holder struct {
	Path       string
	Args       []string
	ExtraFiles []*os.File
	// Unshareflags are namespaces the command must start in (see
	// syscall.SysProcAttr): a mount namespace of its own for "cell hold".
	Unshareflags uintptr

	info      *os.File // read end of bwrap's --info-fd
	listeners []net.Listener
}

// Holder prepares the cell's directory and the command that makes it. The
// host listeners of s.Forwards are open once it returns: a port taken by
// another process fails here, before anything runs.
func (s Spec) Holder() (h *Holder, err error) {
	bwrapPath, err := bwrap.Path()
	if err != nil {
		return nil, err
	}
	if err := s.prepareDir(); err != nil {
		return nil, err
	}
	if err := s.Own(); err != nil {
		return nil, err
	}
	// held, not h: a failing return sets h to nil before this runs.
	held := &Holder{}
	h = held
	defer func() {
		if err != nil {
			held.Close()
		}
	}()
	infoR, infoW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	h.info = infoR
	h.ExtraFiles = append(h.ExtraFiles, infoW) // fd 3
	var forwards []string
	for _, port := range s.Forwards {
		f, err := h.listen(port)
		if err != nil {
			return nil, err
		}
		h.ExtraFiles = append(h.ExtraFiles, f)
		fd := 2 + len(h.ExtraFiles) // ExtraFiles[i] is fd 3+i in the child
		forwards = append(forwards, "--forward", fmt.Sprintf("%d=%d", fd, port))
	}
	h.Path, h.Args, h.Unshareflags = s.command(bwrapPath, 3, s.Init, append([]string{"init", "--control", controlPath(s.Dir)}, forwards...)...)
	if len(s.Cgroup) > 0 {
		h.Path, h.Args = s.Init, append(append(enterArgs(s.Cgroup), "--", h.Path), h.Args...)
	}
	return h, nil
}

// enterArgs are the arguments of "cell enter" that join the groups of
// procs files.
func enterArgs(procs []string) []string {
	args := []string{"enter"}
	for _, f := range procs {
		args = append(args, "--cgroup", f)
	}
	return args
}

// listen opens the host side of a forward.
func (h *Holder) listen(port int) (*os.File, error) {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, err
	}
	h.listeners = append(h.listeners, l)
	return l.(*net.TCPListener).File()
}

// Started is called once the holder runs: it closes the parent's copies of
// what the cell now holds and returns the host PID of the cell's PID 1 —
// the process whose namespaces Join enters.
func (h *Holder) Started(timeout time.Duration) (int, error) {
	for _, f := range h.ExtraFiles {
		f.Close()
	}
	h.ExtraFiles = nil
	for _, l := range h.listeners {
		l.Close()
	}
	h.listeners = nil
	defer h.info.Close()
	h.info.SetReadDeadline(time.Now().Add(timeout))
	var info struct {
		ChildPID int `json:"child-pid"`
	}
	if err := json.NewDecoder(h.info).Decode(&info); err != nil {
		return 0, fmt.Errorf("read the cell's process id from bwrap: %w", err)
	}
	if info.ChildPID <= 0 {
		return 0, errors.New("bwrap reported no process id for the cell")
	}
	return info.ChildPID, nil
}

// Close releases what Holder opened, when the holder did not start.
func (h *Holder) Close() {
	for _, f := range h.ExtraFiles {
		f.Close()
	}
	for _, l := range h.listeners {
		l.Close()
	}
	if h.info != nil {
		h.info.Close()
	}
}

// prepareDir makes the cell's directories and /etc files.
func (s Spec) prepareDir() error {
	for _, d := range []string{filepath.Dir(controlPath(s.Dir)), tmpDir(s.Dir), etcDir(s.Dir)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("prepare cell: %w", err)
		}
	}
	if err := bwrap.WriteEtc(etcDir(s.Dir), bwrap.Etc{User: "cell"}); err != nil {
		return fmt.Errorf("prepare cell: %w", err)
	}
	return nil
}

// sandbox is the cell as bwrap makes it: its own directory writable at the
// same path (so every path in the cluster's configuration means the same
// inside and out), a directory of its own as /tmp, its /etc, its programs
// read-only (and the system's libraries where one of them needs them), a
// network of its own with only a loopback; bwrap writes what it made to
// infoFD (none when zero).
func (s Spec) sandbox(infoFD int) bwrap.Sandbox {
	sb := bwrap.Sandbox{
		Hostname: "cell",
		Net:      true,
		Tmp:      tmpDir(s.Dir), // Dir may itself be under /tmp
		Binds:    []bwrap.Bind{{Src: s.Dir, Writable: true}},
		Etc:      etcDir(s.Dir),
		InfoFD:   infoFD,
		Chdir:    s.Dir,
	}
	for _, p := range s.programs() {
		sb.Binds = append(sb.Binds, bwrap.Bind{Src: p})
		sb.System = sb.System || bwrap.Dynamic(p)
	}
	return sb
}

// command returns how to run prog with args as the first process of the
// cell, with bwrap at bwrapPath: bwrap itself, or for a cell of its own
// user "cell hold", which stages the paths bwrap binds and runs it as
// that user, in a mount namespace of its own (unshare).
func (s Spec) command(bwrapPath string, infoFD int, prog string, args ...string) (path string, argv []string, unshare uintptr) {
	sb := s.sandbox(infoFD)
	if s.User == 0 {
		return bwrapPath, sb.Args(prog, args...), 0
	}
	st := NewStaging(s.User, sb.Paths()...)
	sb.Source = st.Source
	return st.Command(s.Init, bwrapPath, sb.Args(prog, args...))
}

// programs are the paths of programs the cell binds read-only: Init and
// s.Programs, and the files that links in a directory of s.Programs point
// to, which a link in the cell could not reach otherwise (a bin directory
// of links to the real programs).
func (s Spec) programs() []string {
	var out []string
	if !covers(s.Programs, s.Init) {
		out = append(out, s.Init)
	}
	out = append(out, s.Programs...)
	for _, p := range s.Programs {
		entries, err := os.ReadDir(p)
		if err != nil {
			continue // a file, not a directory
		}
		for _, e := range entries {
			if e.Type()&os.ModeSymlink == 0 {
				continue
			}
			target, err := filepath.EvalSymlinks(filepath.Join(p, e.Name()))
			if err == nil && !covers(out, target) {
				out = append(out, target)
			}
		}
	}
	return out
}

// covers reports whether path is one of paths or inside one of them.
func covers(paths []string, path string) bool {
	for _, p := range paths {
		if rel, err := filepath.Rel(p, path); err == nil && !strings.HasPrefix(rel, "..") {
			return true
		}
	}
	return false
}

// Limits bound one process of a cell.
type Limits struct {
	// Files is the most file descriptors the process may hold.
	Files uint64
	// Memory is the most private writable memory (RLIMIT_DATA) the
	// process may map: a Go program's heap. Zero leaves it unbounded.
	Memory uint64
}

// Join returns the command line that runs prog with args inside the cell of
// spec, whose PID 1 has the host PID init, as the cell's user, with lim.
//
// The line is "cell join -- nsenter ... -- cell exec ... -- prog args":
// "cell join" first joins the cell's control group (spec.Cgroup); nsenter
// enters the namespaces and waits for prog, which it must, to
// enter the PID namespace; "cell join" starts it with SIGTERM ignored, so
// that a SIGTERM to the process group stops prog gracefully while nsenter
// stays until prog has exited. "cell exec" sets the limits inside.
func Join(spec Spec, init int, lim Limits, prog string, args ...string) (path string, argv []string, err error) {
	nsenter, err := exec.LookPath("nsenter")
	if err != nil {
		return "", nil, errors.New("nsenter not found in PATH (install util-linux)")
	}
	argv = []string{"join"}
	for _, f := range spec.Cgroup {
		argv = append(argv, "--cgroup", f)
	}
	argv = append(argv,
		"--", nsenter,
		"--target", strconv.Itoa(init),
		"--user", "--mount", "--net", "--pid", "--ipc", "--uts",
		"--setuid", strconv.Itoa(UID), "--setgid", strconv.Itoa(GID),
		"--wd="+spec.Dir,
		"--", spec.Init, "exec",
		"--files", strconv.FormatUint(lim.Files, 10),
		"--memory", strconv.FormatUint(lim.Memory, 10),
		"--", prog,
	)
	return spec.Init, append(argv, args...), nil
}

// Probe checks that cells of user (see Spec.User) can be made here with
// the cell program init: it makes one and runs "cell version" in it.
func Probe(ctx context.Context, init string, user int) error {
	if fi, err := os.Stat(init); err != nil || fi.IsDir() {
		return fmt.Errorf("the cell program %s is missing: run `make build`", init)
	}
	bwrapPath, err := bwrap.Path()
	if err != nil {
		return err
	}
	if _, err := exec.LookPath("nsenter"); err != nil {
		return errors.New("nsenter not found: install util-linux")
	}
	dir, err := os.MkdirTemp("", "oplab-cell-probe-")
	if err != nil {
		return fmt.Errorf("probe cells: %w", err)
	}
	defer os.RemoveAll(dir)
	s := Spec{Dir: dir, Init: init, User: user}
	if err := s.prepareDir(); err != nil {
		return err
	}
	if err := s.Own(); err != nil {
		return err
	}
	return bwrap.Probe(ctx, "a cell", func(ctx context.Context) *exec.Cmd {
		path, argv, unshare := s.command(bwrapPath, 0, init, "version")
		cmd := exec.CommandContext(ctx, path, argv...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: unshare}
		cmd.Env = []string{"PATH=/usr/bin:/bin"}
		return cmd
	})
}

// InitAlive reports whether init, a cell's PID 1 according to a record, is
// still that process: a child of holder, the bwrap that made the cell.
// PIDs are reused; a stale record must not make Join enter another
// process's namespaces.
func InitAlive(holder, init int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(init) + "/status")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "PPid:"); ok {
			return strings.TrimSpace(v) == strconv.Itoa(holder)
		}
	}
	return false
}

// WaitReady waits until the cell of dir answers on its control socket.
func WaitReady(ctx context.Context, dir string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		err := request(ctx, dir, controlRequest{Op: opPing}, nil)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the cell did not start: %w", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
