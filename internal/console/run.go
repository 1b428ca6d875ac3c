package console

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"oplab.dev/oplab/internal/bwrap"
)

// Defaults of Options.
const (
	DefaultTimeout       = 30 * time.Second
	DefaultFollowTimeout = 30 * time.Minute
	DefaultMaxOutput     = 1 << 20
	DefaultMaxStdin      = 1 << 20
)

var (
	// ErrTimeout is returned when a command ran past its time limit and was
	// stopped.
	ErrTimeout = errors.New("time limit reached")
	// ErrOutputLimit is returned when a command wrote more than the output
	// cap and was stopped.
	ErrOutputLimit = errors.New("output limit reached")
)

// errLimit is the cause of a command's context when its own limit ends it.
var errLimit = errors.New("the console's time limit")

// ExitError is kubectl's non-zero exit status; what went wrong is in the
// stderr kubectl wrote.
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return fmt.Sprintf("kubectl exited with status %d", e.Code) }

// Options configure a Runner.
type Options struct {
	// Kubectl is the path of the cluster line's kubectl (bin/kubectl).
	Kubectl string
	// Logger receives start-up notes (sandbox or not) and one debug line
	// per command (its name, never its arguments). Discarded when nil.
	Logger *slog.Logger
	// Policy widens the allow-list (exec and debug with containers).
	Policy Policy
	// Timeout limits a command; Follow commands (get -w, logs -f, …) run
	// until the caller's context ends or FollowTimeout.
	Timeout, FollowTimeout time.Duration
	// MaxOutput caps the bytes of stdout and stderr together; MaxStdin the
	// YAML given as input.
	MaxOutput, MaxStdin int
	// Sandbox chooses whether commands run under bubblewrap.
	Sandbox bwrap.Mode
	// TempDir holds the per-command private directories (os.TempDir() when
	// empty).
	TempDir string
	// Limits caps the commands each owner runs at once.
	Limits Limits
	// RemoteOnly: every command runs through its request's Remote, in the
	// learner's cell, never on this machine; a request without one is
	// refused. Kubectl and Sandbox are then not used.
	RemoteOnly bool
	// RemoteBeat is how often a remote command's caller tells the far end
	// it is there (DefaultBeat when zero; see Call).
	RemoteBeat time.Duration
	// Cell is the cell program (bin/cell), whose "enter" puts a command in
	// its request's Cgroup before kubectl starts. A request with a Cgroup
	// is refused without it.
	Cell string
}

// Runner runs console commands as child processes of kubectl. It is safe
// for concurrent use; each command has its own process and directory.
type Runner struct {
	opts    Options
	log     *slog.Logger
	sandbox *sandbox // nil when commands run unsandboxed
	diff    string   // host path of diff(1) for kubectl diff, or ""
	limits  *limiter
}

// New checks opts, finds out whether bubblewrap works on this machine
// (running kubectl version --client through it once) and returns a Runner.
// Close it to remove its files.
func New(ctx context.Context, opts Options) (*Runner, error) {
	if opts.RemoteOnly {
		setDefaults(&opts)
		return &Runner{opts: opts, log: opts.Logger, limits: newLimiter(opts.Limits)}, nil
	}
	if opts.Kubectl == "" {
		return nil, errors.New("new console runner: no kubectl path given")
	}
	kubectl, err := filepath.Abs(opts.Kubectl)
	if err != nil {
		return nil, fmt.Errorf("new console runner: %w", err)
	}
	if st, err := os.Stat(kubectl); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return nil, fmt.Errorf("new console runner: kubectl %s is not an executable file", kubectl)
	}
	opts.Kubectl = kubectl
	setDefaults(&opts)
	r := &Runner{opts: opts, log: opts.Logger, limits: newLimiter(opts.Limits)}
	if d, err := exec.LookPath("diff"); err == nil {
		r.diff = d
	}
	if err := r.setupSandbox(ctx); err != nil {
		return nil, fmt.Errorf("new console runner: %w", err)
	}
	return r, nil
}

func setDefaults(o *Options) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.FollowTimeout <= 0 {
		o.FollowTimeout = DefaultFollowTimeout
	}
	if o.MaxOutput <= 0 {
		o.MaxOutput = DefaultMaxOutput
	}
	if o.MaxStdin <= 0 {
		o.MaxStdin = DefaultMaxStdin
	}
	if o.TempDir == "" {
		o.TempDir = os.TempDir()
	}
	if o.RemoteBeat <= 0 {
		o.RemoteBeat = DefaultBeat
	}
}

// Close removes the runner's own files. Commands still running are not
// affected; their callers' contexts stop them.
func (r *Runner) Close() error {
	if r.sandbox != nil {
		return os.RemoveAll(r.sandbox.etc)
	}
	return nil
}

// Sandboxed reports whether commands run under bubblewrap.
func (r *Runner) Sandboxed() bool { return r.sandbox != nil }

// Parse checks a command line against the runner's allow-list.
func (r *Runner) Parse(line string) (*Command, error) { return r.opts.Policy.Parse(line) }

// Stream says where a chunk of output came from.
type Stream int

const (
	Stdout Stream = iota
	Stderr
	// Notice is the console's own note: output truncated, time limit.
	Notice
)

func (s Stream) String() string {
	return [...]string{"stdout", "stderr", "notice"}[s]
}

// MarshalText makes a stream "stdout", "stderr" or "notice" in JSON.
func (s Stream) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Chunk is output as it came from the command.
type Chunk struct {
	Stream Stream `json:"stream"`
	Data   []byte `json:"data"`
}

// Target is whose commands run and against what: a session's learner and
// their cluster.
type Target struct {
	// Owner is whose command it is (the session's learner): the commands
	// of one owner share the caps of Options.Limits.
	Owner string
	// Kubeconfig is the content of the learner's kubeconfig: the only
	// credentials the command sees.
	Kubeconfig []byte
	// Remote, when set, runs the command in the learner's cell instead of
	// on this machine, with Kubeconfig all the same.
	Remote Remote
	// Cgroup are the cgroup.procs files of the learner's console group
	// (package budget: the console's leaf of their cell's group), which a
	// command here joins before kubectl starts, so that it counts against
	// the learner's budget under a ceiling of its own. Empty: the
	// server's group.
	Cgroup []string
}

// Request is one command to run.
type Request struct {
	Target
	// Line is the command line as the learner typed it.
	Line string
	// Stdin is the YAML editor's text, given to commands with -f -.
	Stdin []byte
	// Output receives stdout, stderr and notices as they come, one call at
	// a time, in order. Nil discards them.
	Output func(Chunk)
}

// Result is what happened to a command that was started.
type Result struct {
	Command *Command
	// ExitCode is kubectl's exit status, -1 when it was stopped.
	ExitCode int
	// PID is the child's process id, which is also its process group.
	PID int
	// Truncated says the output cap was reached.
	Truncated bool
	Duration  time.Duration
	// memoryKilled: the command, in a console group, was killed by a
	// signal nobody here sent (see outcome).
	memoryKilled bool
}

// Run parses req.Line, and when the allow-list accepts it runs kubectl
// with the request's kubeconfig in a private directory, streaming its
// output to req.Output. A refused line returns a *RefusedError and starts
// nothing; so does a line sent faster than its owner's rate (ErrTooFast),
// checked first, and one its owner's caps leave no room for (ErrTooMany),
// checked once the line itself is accepted. Once started, the Result is
// always returned; the error is nil
// when kubectl exited 0, an *ExitError for another status, ErrTimeout or
// ErrOutputLimit when the console stopped it, or the context's error when
// the caller did (the way to stop get -w).
func (r *Runner) Run(ctx context.Context, req Request) (*Result, error) {
	if err := r.limits.allow(req.Owner); err != nil {
		return nil, err
	}
	cmd, err := r.Parse(req.Line)
	if err != nil {
		return nil, err
	}
	if err := r.checkInput(cmd, req); err != nil {
		return nil, err
	}
	release, err := r.limits.acquire(req.Owner, cmd.Follow)
	if err != nil {
		return nil, err
	}
	defer release()
	limit := r.opts.Timeout
	if cmd.Follow {
		limit = r.opts.FollowTimeout
	}
	return r.exec(ctx, cmd, req, limit)
}

// exec runs an accepted command within limit: in the learner's cell
// through req.Remote, or here in a private directory of its own.
func (r *Runner) exec(ctx context.Context, cmd *Command, req Request, limit time.Duration) (*Result, error) {
	if req.Remote != nil {
		return r.runRemote(ctx, cmd, req, limit)
	}
	dir, err := r.privateDir(req.Kubeconfig)
	if err != nil {
		return nil, err
	}
	defer r.removeDir(dir)
	spec := r.spec(cmd, dir)
	spec.cgroup = req.Cgroup
	return r.run(ctx, cmd, spec, req, limit)
}

func (r *Runner) checkInput(cmd *Command, req Request) error {
	switch {
	case r.opts.RemoteOnly && req.Remote == nil:
		return errors.New("run console command: this console runs commands only in a learner's cell, and the session's cluster has none")
	case len(req.Kubeconfig) == 0:
		return errors.New("run console command: no kubeconfig given")
	case req.Owner == "":
		return errors.New("run console command: no owner given")
	case len(req.Cgroup) > 0 && req.Remote == nil && r.opts.Cell == "":
		return errors.New("run console command: the learner's console has a control group, and this console no cell program to join it with")
	case cmd.Stdin && len(req.Stdin) == 0:
		return refuse(fmt.Sprintf("%s -f - reads the YAML editor, which is empty: write or paste a manifest there first", cmd))
	case len(req.Stdin) > r.opts.MaxStdin:
		return refuse(fmt.Sprintf("the YAML is %d bytes, more than the console's %d", len(req.Stdin), r.opts.MaxStdin))
	}
	return nil
}

// privateDir makes the command's own directory (its HOME and working
// directory) holding the kubeconfig, readable by its owner only.
func (r *Runner) privateDir(kubeconfig []byte) (string, error) {
	dir, err := os.MkdirTemp(r.opts.TempDir, "console-")
	if err != nil {
		return "", fmt.Errorf("make the command's directory: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kubeconfig"), kubeconfig, 0o600); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("write the command's kubeconfig: %w", err)
	}
	return dir, nil
}

// removeDir removes a command's private directory; a failure is logged, as
// the command's result matters more to the caller.
func (r *Runner) removeDir(dir string) {
	if err := os.RemoveAll(dir); err != nil {
		r.log.Warn("console: remove a command's directory", "dir", dir, "error", err)
	}
}

// run starts spec and waits for it, within limit, killing its whole
// process group when ctx ends, the limit passes or the output cap is hit.
func (r *Runner) run(ctx context.Context, cmd *Command, spec procSpec, req Request, limit time.Duration) (*Result, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, limit, errLimit)
	defer cancel()
	out := &output{emit: req.Output, left: r.opts.MaxOutput, stop: cancel}
	c := r.command(ctx, spec)
	c.Stdout, c.Stderr = out.writer(Stdout), out.writer(Stderr)
	if cmd.Stdin {
		c.Stdin = bytes.NewReader(req.Stdin)
	}
	start := time.Now()
	if err := c.Start(); err != nil {
		return nil, fmt.Errorf("start kubectl: %w", err)
	}
	res := &Result{Command: cmd, PID: c.Process.Pid}
	err := c.Wait()
	if ws, ok := c.ProcessState.Sys().(syscall.WaitStatus); ok && len(spec.cgroup) > 0 {
		// kubectl itself, or under bubblewrap, which exits 128 plus the
		// signal that killed its child.
		res.memoryKilled = ws.Signaled() && ws.Signal() == syscall.SIGKILL || ws.Exited() && ws.ExitStatus() == 128+int(syscall.SIGKILL)
	}
	r.endGroup(res.PID)
	res.Duration = time.Since(start)
	res.ExitCode = c.ProcessState.ExitCode()
	res.Truncated = out.truncated()
	err = r.outcome(ctx, out, res, limit, err)
	r.log.Debug("console command", "command", cmd.String(), "exit", res.ExitCode,
		"duration", res.Duration, "sandboxed", r.Sandboxed(), "error", err)
	return res, err
}

// outcome names why the command ended.
func (r *Runner) outcome(ctx context.Context, out *output, res *Result, limit time.Duration, waitErr error) error {
	var exit interface{ ExitCode() int } // *exec.ExitError, remoteExit
	switch {
	case res.memoryKilled && ctx.Err() == nil:
		// Killed, and not by the console: the kernel, at the ceiling of
		// the learner's console group.
		out.note(fmt.Sprintf("\n[stopped: %s used all the memory your console's commands may use together; ask for less — a label selector (-l), -o name, or --chunk-size — or wait for your other commands to end]\n", res.Command))
		return fmt.Errorf("%s was stopped at the console's memory ceiling: %w", res.Command, ErrOutOfMemory)
	case res.Truncated:
		return fmt.Errorf("%s stopped after %d bytes of output: %w", res.Command, r.opts.MaxOutput, ErrOutputLimit)
	case context.Cause(ctx) == errLimit && res.ExitCode < 0:
		out.note(fmt.Sprintf("\n[stopped: %s ran longer than the console's limit of %s]\n", res.Command, limit))
		return fmt.Errorf("%s stopped after %s: %w", res.Command, limit, ErrTimeout)
	case ctx.Err() != nil && res.ExitCode < 0:
		return fmt.Errorf("%s stopped: %w", res.Command, context.Cause(ctx))
	case errors.As(waitErr, &exit):
		return &ExitError{Code: exit.ExitCode()}
	case waitErr != nil:
		return fmt.Errorf("wait for kubectl: %w", waitErr)
	}
	return nil
}

// endGroup makes sure nothing of the command's process group runs on:
// under bubblewrap the sandbox's init can outlive bwrap for a moment. An
// exited process whose parent has not reaped it yet (a zombie, reparented
// to the machine's init) runs nothing and is not waited for.
func (r *Runner) endGroup(pgid int) {
	if err := syscall.Kill(-pgid, syscall.SIGKILL); errors.Is(err, syscall.ESRCH) {
		return
	}
	for range 200 {
		if len(liveInGroup(pgid)) == 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	r.log.Warn("console: a command's process group outlived it", "pgid", pgid)
}

// liveInGroup lists the processes of group pgid that have not exited.
func liveInGroup(pgid int) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// Fields after the command's closing parenthesis: state ppid pgrp.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) > 2 && f[0] != "Z" && f[0] != "X" && f[2] == strconv.Itoa(pgid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// command builds the child process: its own process group, killed as a
// whole on cancel.
func (r *Runner) command(ctx context.Context, spec procSpec) *exec.Cmd {
	var c *exec.Cmd
	if r.sandbox != nil {
		c = r.sandbox.command(ctx, spec)
	} else {
		c = exec.CommandContext(ctx, spec.prog, spec.args...)
		c.Env = spec.env(spec.dir, filepath.Dir(spec.prog))
		c.Dir = spec.dir
	}
	if len(spec.cgroup) > 0 {
		// "cell enter" joins the learner's console group, then executes
		// the command: nothing of it runs outside the group.
		args := []string{r.opts.Cell, "enter"}
		for _, f := range spec.cgroup {
			args = append(args, "--cgroup", f)
		}
		c.Args = append(append(args, "--", c.Path), c.Args[1:]...)
		c.Path = r.opts.Cell
	}
	if c.SysProcAttr == nil {
		c.SysProcAttr = &syscall.SysProcAttr{}
	}
	c.SysProcAttr.Setpgid = true
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	// A grandchild holding the pipes open must not hold Wait forever.
	c.WaitDelay = 2 * time.Second
	return c
}

// output forwards the child's streams to the caller, one chunk at a time,
// and stops the command once the cap is reached.
type output struct {
	mu   sync.Mutex
	emit func(Chunk)
	left int
	cut  bool
	stop func()
}

func (o *output) writer(s Stream) io.Writer {
	return writerFunc(func(p []byte) (int, error) { return o.write(s, p) })
}

func (o *output) write(s Stream, p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.cut {
		return len(p), nil
	}
	data := p
	if len(data) > o.left {
		data = data[:o.left]
		o.cut = true
	}
	o.left -= len(data)
	if len(data) > 0 && o.emit != nil {
		o.emit(Chunk{Stream: s, Data: append([]byte(nil), data...)})
	}
	if o.cut {
		if o.emit != nil {
			o.emit(Chunk{Stream: Notice, Data: []byte("\n[output truncated: the console shows at most this much; the command was stopped]\n")})
		}
		o.stop()
	}
	return len(p), nil
}

func (o *output) note(msg string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.emit != nil {
		o.emit(Chunk{Stream: Notice, Data: []byte(msg)})
	}
}

func (o *output) truncated() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.cut
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
