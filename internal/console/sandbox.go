package console

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"oplab.dev/oplab/internal/cell"
)

// SandboxMode chooses whether commands run under bubblewrap.
type SandboxMode int

const (
	// SandboxAuto uses bubblewrap when it works on this machine and runs
	// unsandboxed otherwise, saying so once through the logger.
	SandboxAuto SandboxMode = iota
	// SandboxOff never uses bubblewrap.
	SandboxOff
	// SandboxRequired makes New fail when bubblewrap does not work.
	SandboxRequired
)

// probeTimeout bounds the start-up check of the sandbox.
const probeTimeout = 30 * time.Second

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
	bwrap string
	etc   string // the runner's /etc files: hosts, nsswitch.conf, passwd
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
	if r.opts.Sandbox == SandboxOff {
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
		if r.opts.Sandbox == SandboxRequired {
			return fmt.Errorf("sandbox required: %w", err)
		}
		r.log.Warn("console: kubectl runs unsandboxed: bubblewrap does not work here (scripts/ensure-bwrap.sh installs it)", "error", err)
		return nil
	}
	r.log.Info("console: kubectl runs in a bubblewrap sandbox", "bwrap", sb.bwrap)
	return nil
}

func (r *Runner) probe(ctx context.Context) error {
	dir, err := r.privateDir([]byte("apiVersion: v1\nkind: Config\n"))
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	c := r.command(ctx, procSpec{prog: r.opts.Kubectl, args: []string{"version", "--client"}, dir: dir})
	if out, err := c.CombinedOutput(); err != nil {
		return fmt.Errorf("kubectl version --client in bwrap: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// newSandbox finds bwrap and writes the sandbox's /etc files.
func newSandbox(tempDir string) (*sandbox, error) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, errors.New("bwrap not found in PATH")
	}
	etc, err := os.MkdirTemp(tempDir, "console-etc-")
	if err != nil {
		return nil, fmt.Errorf("make the sandbox's /etc: %w", err)
	}
	files := map[string]string{
		"hosts":         "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n",
		"nsswitch.conf": "hosts: files dns\n",
		"passwd":        "console:x:65534:65534:console:" + boxHome + ":/nonexistent\n",
		"group":         "console:x:65534:\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(etc, name), []byte(content), 0o644); err != nil {
			os.RemoveAll(etc)
			return nil, fmt.Errorf("write the sandbox's /etc/%s: %w", name, err)
		}
	}
	if err := os.Chmod(etc, 0o755); err != nil {
		os.RemoveAll(etc)
		return nil, err
	}
	return &sandbox{bwrap: bwrap, etc: etc}, nil
}

// command is spec run under bwrap; as User when the sandbox has a cell
// program (oplab runs as root).
func (s *sandbox) command(ctx context.Context, spec procSpec) *exec.Cmd {
	source := func(p string) string { return p }
	var st *cell.Staging
	if s.cell != "" {
		paths := []string{spec.prog, spec.dir}
		for _, name := range etcNames {
			paths = append(paths, filepath.Join(s.etc, name))
		}
		st = cell.NewStaging(User, paths...)
		source = st.Source
	}
	prog := boxBin + "/" + filepath.Base(spec.prog)
	args := []string{
		"--unshare-user", "--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try",
		"--uid", "65534", "--gid", "65534", "--cap-drop", "ALL",
		"--die-with-parent", "--hostname", "console",
		"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
		"--ro-bind", source(spec.prog), prog,
		"--bind", source(spec.dir), boxHome,
	}
	for _, name := range etcNames {
		args = append(args, "--ro-bind", source(filepath.Join(s.etc, name)), "/etc/"+name)
	}
	// Public files a client may need to reach a cluster by name or with a
	// public certificate: never the server's own files.
	for _, p := range []string{"/etc/resolv.conf", "/etc/ssl/certs"} {
		args = append(args, "--ro-bind-try", p, p)
	}
	if spec.system || cell.Dynamic(spec.prog) {
		args = append(args, cell.SystemBinds()...)
	}
	args = append(append(args, "--chdir", boxHome, "--", prog), spec.args...)
	c := exec.CommandContext(ctx, s.bwrap, args...)
	if st != nil {
		path, argv, unshare := st.Command(s.cell, s.bwrap, args)
		c = exec.CommandContext(ctx, path, argv...)
		c.SysProcAttr = &syscall.SysProcAttr{Unshareflags: unshare}
		// The command's directory is the user's to write in; nobody
		// else's.
		if err := chownTree(spec.dir, User); err != nil {
			c.Err = err
		}
	}
	c.Env = spec.env(boxHome, boxBin)
	c.Dir = spec.dir
	return c
}

// etcNames are the sandbox's /etc files.
var etcNames = []string{"hosts", "nsswitch.conf", "passwd", "group"}

// chownTree gives dir and what is in it to uid.
func chownTree(dir string, uid int) error {
	return filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, uid)
	})
}
