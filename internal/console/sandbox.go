package console

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"oplab.dev/oplab/internal/bwrap"
	"oplab.dev/oplab/internal/cell"
)

// Paths inside the sandbox.
const (
	boxBin  = "/opt/kubectl"
	boxHome = "/console"
)

// sandbox runs a program under bubblewrap (bwrap) with a root of its own:
// the program's file, the command's private directory, a few files of /etc
// written by the runner, /proc and /dev. Nothing of the server's file
// system is there, so even an allowed command cannot read the server's
// files. The network namespace is shared: the API server listens on the
// host's loopback. The program runs as an unprivileged user in new user,
// pid, ipc, uts and cgroup namespaces and dies with the runner.
type sandbox struct {
	bwrapPath string
	etc       string // the directory of the sandbox's /etc files (bwrap.WriteEtc)
	// cell, when set, is the cell program, through whose "cell hold" a
	// root oplab runs bwrap as User instead of as root (package cell's
	// Staging).
	cell string
}

// User is the host user the console's commands run as when oplab runs as
// root: an unprivileged id of the console's own, below the range the
// cells' users take (200000 and up), so that a command is never root on
// the host, not even inside its user namespace. Commands of several
// learners share it: each runs in namespaces of its own, sees only its
// own directory, and cannot signal or trace another's.
const User = 199999

// procSpec is one program to run: kubectl with its arguments, or, in
// tests, a probe.
type procSpec struct {
	prog string   // host path of the program
	args []string // its arguments
	dir  string   // the command's private directory (host path)
	// system binds the host's /usr (and /lib, /bin …) read-only: for a
	// dynamically linked program, or kubectl diff, which runs diff(1).
	system bool
	extra  []string // more environment entries, NAME=value
	diff   string   // KUBECTL_EXTERNAL_DIFF, when diff is available
	// cgroup are the cgroup.procs files of the group the command joins
	// (Target.Cgroup).
	cgroup []string
}

// env is the child's whole environment, with home and bin as the child
// sees them.
func (p procSpec) env(home, bin string) []string {
	env := []string{
		"PATH=" + bin,
		"HOME=" + home,
		"TMPDIR=" + home,
		"KUBECONFIG=" + filepath.Join(home, "kubeconfig"),
		// No kuberc: no aliases or defaults from a file.
		"KUBECTL_KUBERC=false",
		"KUBERC=off",
	}
	if p.diff != "" {
		env = append(env, "KUBECTL_EXTERNAL_DIFF="+p.diff+" -u -N")
	}
	return append(env, p.extra...)
}

// spec is the kubectl process for cmd in dir.
func (r *Runner) spec(cmd *Command, dir string) procSpec {
	s := procSpec{prog: r.opts.Kubectl, args: cmd.Args, dir: dir}
	if len(cmd.Path) > 0 && cmd.Path[0] == "diff" && r.diff != "" {
		s.system, s.diff = true, r.diff
	}
	return s
}

// setupSandbox decides whether commands run under bubblewrap, by running
// kubectl version --client through it.
func (r *Runner) setupSandbox(ctx context.Context) error {
	if r.opts.Sandbox == bwrap.Off {
		r.log.Info("console: sandbox turned off; kubectl runs unsandboxed")
		return nil
	}
	sb, err := newSandbox(r.opts.TempDir)
	if err == nil && os.Geteuid() == 0 {
		if r.opts.Cell == "" {
			err = errors.New("oplab runs as root, and the console has no cell program to run kubectl as a user of its own")
		}
		sb.cell = r.opts.Cell
	}
	if err == nil {
		r.sandbox = sb
		err = r.probe(ctx)
		if err != nil {
			r.sandbox = nil
			os.RemoveAll(sb.etc)
		}
	}
	if err != nil {
		if r.opts.Sandbox == bwrap.Required {
			return fmt.Errorf("sandbox required: %w", err)
		}
		r.log.Warn("console: kubectl runs unsandboxed: bubblewrap does not work here (scripts/ensure-bwrap.sh installs it)", "error", err)
		return nil
	}
	r.log.Info("console: kubectl runs in a bubblewrap sandbox", "bwrap", sb.bwrapPath)
	return nil
}

// probe runs kubectl version --client as the runner runs every command.
func (r *Runner) probe(ctx context.Context) error {
	dir, err := r.privateDir([]byte("apiVersion: v1\nkind: Config\n"))
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	return bwrap.Probe(ctx, "kubectl version --client", func(ctx context.Context) *exec.Cmd {
		return r.command(ctx, procSpec{prog: r.opts.Kubectl, args: []string{"version", "--client"}, dir: dir})
	})
}

// newSandbox finds bwrap and writes the sandbox's /etc files.
func newSandbox(tempDir string) (*sandbox, error) {
	path, err := bwrap.Path()
	if err != nil {
		return nil, err
	}
	etc, err := os.MkdirTemp(tempDir, "console-etc-")
	if err != nil {
		return nil, fmt.Errorf("make the sandbox's /etc: %w", err)
	}
	// kubectl may reach a cluster by name: names resolve through the DNS.
	if err := bwrap.WriteEtc(etc, bwrap.Etc{User: "console", Home: boxHome, DNS: true}); err != nil {
		os.RemoveAll(etc)
		return nil, err
	}
	if err := os.Chmod(etc, 0o755); err != nil {
		os.RemoveAll(etc)
		return nil, fmt.Errorf("make the sandbox's /etc: %w", err)
	}
	return &sandbox{bwrapPath: path, etc: etc}, nil
}

// command is spec run under bwrap; as User when the sandbox has a cell
// program (oplab runs as root).
func (s *sandbox) command(ctx context.Context, spec procSpec) *exec.Cmd {
	prog := boxBin + "/" + filepath.Base(spec.prog)
	sb := bwrap.Sandbox{
		Hostname:      "console",
		DieWithParent: true,
		Binds: []bwrap.Bind{
			{Src: spec.prog, Dst: prog},
			{Src: spec.dir, Dst: boxHome, Writable: true},
			// Public files a client may need to reach a cluster by name
			// or with a public certificate: never the server's own files.
			{Src: "/etc/resolv.conf", Try: true},
			{Src: "/etc/ssl/certs", Try: true},
		},
		Etc:    s.etc,
		System: spec.system || bwrap.Dynamic(spec.prog),
		Chdir:  boxHome,
	}
	path, argv, unshare := s.bwrapPath, sb.Args(prog, spec.args...), uintptr(0)
	if s.cell != "" {
		st := cell.NewStaging(User, sb.Paths()...)
		sb.Source = st.Source
		path, argv, unshare = st.Command(s.cell, s.bwrapPath, sb.Args(prog, spec.args...))
	}
	c := exec.CommandContext(ctx, path, argv...)
	c.SysProcAttr = &syscall.SysProcAttr{Unshareflags: unshare}
	c.Env = spec.env(boxHome, boxBin)
	c.Dir = spec.dir
	if s.cell != "" {
		// The command's directory is the user's to write in; nobody
		// else's.
		if err := chownTree(spec.dir, User); err != nil {
			c.Err = err
		}
	}
	return c
}

// chownTree gives dir and what is in it to uid.
func chownTree(dir string, uid int) error {
	return filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, uid)
	})
}
