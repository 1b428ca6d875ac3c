package console

import (
	"context"
	"errors"
	goflag "flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"oplab.dev/oplab/internal/bwrap"
)

// Remote runs a console command's kubectl away from this machine: in the
// learner's own cell, whose only network is its own API server (the pods
// provider runs it by exec in the cell pod's console container). The far
// end is Serve, given argv: a Call's Argv.
//
// Run returns nil when the command exited 0, an error with an
// ExitStatus() int method for another status (client-go's exec error has
// one), or why it could not run. It stops when ctx ends; stdin then ends
// too, which is how the far end learns that the caller went away.
type Remote interface {
	Run(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer) error
}

// Call is one command for a Remote: kubectl's arguments, already through
// the allow-list; how many bytes of stdin are the learner's kubeconfig,
// then how many the YAML editor's text (credentials go on stdin, never in
// arguments, which an exec's URL carries); the time limit of the caller,
// which the far end keeps too; and how often the caller sends a byte on
// stdin after those while it is there.
//
// The far end learns that its caller went away when stdin ends: an exec
// stream that closes ends its command's stdin. A stream left half-open —
// a server gone without its connection being closed, a partition — ends
// nothing, so the far end also stops the command after three silent
// beats.
type Call struct {
	Args       []string
	Kubeconfig int
	Stdin      int
	Limit      time.Duration
	Beat       time.Duration
}

// Argv is the call as the far end's arguments:
// -limit D -beat D -kubeconfig N -stdin N -- kubectl's arguments.
func (c Call) Argv() []string {
	return append([]string{"-limit", c.Limit.String(), "-beat", c.Beat.String(),
		"-kubeconfig", strconv.Itoa(c.Kubeconfig), "-stdin", strconv.Itoa(c.Stdin), "--"}, c.Args...)
}

// DefaultBeat is how often a caller says it is there (Options.RemoteBeat).
const DefaultBeat = 5 * time.Second

// ParseCall reads Argv's form back.
func ParseCall(argv []string) (Call, error) {
	fs := goflag.NewFlagSet("console", goflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var c Call
	fs.DurationVar(&c.Limit, "limit", DefaultTimeout, "the command's time limit")
	fs.DurationVar(&c.Beat, "beat", DefaultBeat, "how often the caller sends a byte on stdin")
	fs.IntVar(&c.Kubeconfig, "kubeconfig", 0, "bytes of stdin that are the learner's kubeconfig")
	fs.IntVar(&c.Stdin, "stdin", 0, "bytes of stdin after it that are the command's input")
	if err := fs.Parse(argv); err != nil {
		return Call{}, fmt.Errorf("console call: %w", err)
	}
	if c.Limit <= 0 || c.Beat <= 0 || c.Stdin < 0 || c.Stdin > DefaultMaxStdin || c.Kubeconfig <= 0 || c.Kubeconfig > maxKubeconfig {
		return Call{}, fmt.Errorf("console call: -limit %s, -beat %s, -kubeconfig %d or -stdin %d out of range", c.Limit, c.Beat, c.Kubeconfig, c.Stdin)
	}
	c.Args = fs.Args()
	return c, nil
}

// maxKubeconfig bounds the kubeconfig a far end reads.
const maxKubeconfig = 1 << 20

// remoteGrace is how much longer than the caller's limit the far end lets
// a command run, so that the caller's limit, and its notice, come first.
const remoteGrace = 5 * time.Second

// ServeOptions are the far end's.
type ServeOptions struct {
	// Kubectl is the cell's kubectl.
	Kubectl string
	// Local points the learner's kubeconfig (as the server reaches their
	// API server) at the API server as the far end reaches it; nil keeps
	// it as it is.
	Local func(kubeconfig []byte) ([]byte, error)
	// TempDir holds the commands' private directories.
	TempDir string
}

// Serve is a Remote's far end: it runs the call's kubectl under the same
// allow-list, as the learner — with the kubeconfig the first c.Kubeconfig
// bytes of stdin hold, never one of the cell's own — with the next c.Stdin
// bytes as its input, streams
// what it writes to stdout and stderr (the console's notices to stderr)
// and returns kubectl's exit status (125 when it could not run it). The
// command is stopped when the rest of stdin ends or its beat stops — the
// caller went away or gave up — or past the call's limit.
func Serve(ctx context.Context, o ServeOptions, c Call, stdin io.Reader, stdout, stderr io.Writer) int {
	fail := func(err error) int {
		fmt.Fprintln(stderr, "console:", err)
		return 125
	}
	kc := make([]byte, c.Kubeconfig)
	if _, err := io.ReadFull(stdin, kc); err != nil {
		return fail(fmt.Errorf("read the learner's kubeconfig: %w", err))
	}
	if o.Local != nil {
		var err error
		if kc, err = o.Local(kc); err != nil {
			return fail(fmt.Errorf("the learner's kubeconfig: %w", err))
		}
	}
	input := make([]byte, c.Stdin)
	if _, err := io.ReadFull(stdin, input); err != nil {
		return fail(fmt.Errorf("read the command's input: %w", err))
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		// What more comes on stdin is the caller's beat.
		defer cancel()
		beats := make(chan struct{})
		go func() {
			defer close(beats)
			buf := make([]byte, 64)
			for {
				if _, err := stdin.Read(buf); err != nil {
					return
				}
				select {
				case beats <- struct{}{}:
				case <-ctx.Done():
					return
				}
			}
		}()
		silence := time.NewTimer(3 * c.Beat)
		defer silence.Stop()
		for {
			select {
			case _, ok := <-beats:
				if !ok {
					return
				}
				silence.Reset(3 * c.Beat)
			case <-silence.C:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	limit := c.Limit + remoteGrace
	r, err := New(ctx, Options{Kubectl: o.Kubectl, Sandbox: bwrap.Off, TempDir: o.TempDir, Timeout: limit, FollowTimeout: limit})
	if err != nil {
		return fail(err)
	}
	defer r.Close()
	cmd, err := r.opts.Policy.check(c.Args)
	if err != nil {
		return fail(err)
	}
	if cmd.Stdin && c.Stdin == 0 {
		return fail(errors.New("the command reads input and none was given"))
	}
	req := Request{Target: Target{Owner: "cell", Kubeconfig: kc}, Stdin: input, Output: func(ch Chunk) {
		w := stdout
		if ch.Stream != Stdout {
			w = stderr
		}
		_, _ = w.Write(ch.Data)
	}}
	res, err := r.exec(ctx, cmd, req, limit)
	var exit *ExitError
	switch {
	case errors.As(err, &exit):
		return exit.Code
	case err != nil && res != nil && res.ExitCode > 0:
		return res.ExitCode
	case err != nil:
		return fail(err)
	}
	return 0
}

// runRemote is run for a request with a Remote: the same limit, output cap
// and outcome as a local command, the process away.
func (r *Runner) runRemote(ctx context.Context, cmd *Command, req Request, limit time.Duration) (*Result, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, limit, errLimit)
	defer cancel()
	out := &output{emit: req.Output, left: r.opts.MaxOutput, stop: cancel}
	var input []byte
	if cmd.Stdin {
		input = req.Stdin
	}
	call := Call{Args: cmd.Args, Kubeconfig: len(req.Kubeconfig), Stdin: len(input), Limit: limit, Beat: r.opts.RemoteBeat}
	data := append(slices.Clip(req.Kubeconfig), input...)
	start := time.Now()
	stdin := &beating{data: data, beat: time.NewTicker(call.Beat), done: ctx.Done()}
	defer stdin.beat.Stop()
	err := req.Remote.Run(ctx, call.Argv(), stdin, out.writer(Stdout), out.writer(Stderr))
	res := &Result{Command: cmd, PID: -1, Duration: time.Since(start)}
	var status interface{ ExitStatus() int }
	switch {
	case err == nil:
	case errors.As(err, &status):
		res.ExitCode = status.ExitStatus()
		err = remoteExit(res.ExitCode)
	case ctx.Err() != nil:
		res.ExitCode = -1
	default:
		return res, fmt.Errorf("run %s in the learner's cell: %w", cmd, err)
	}
	res.Truncated = out.truncated()
	err = r.outcome(ctx, out, res, limit, err)
	r.log.Debug("console command", "command", cmd.String(), "exit", res.ExitCode,
		"duration", res.Duration, "remote", true, "error", err)
	return res, err
}

// remoteExit is a remote command's exit status, as outcome reads one.
type remoteExit int

func (e remoteExit) Error() string { return fmt.Sprintf("exit status %d", int(e)) }
func (e remoteExit) ExitCode() int { return int(e) }

// beating gives data, then a byte each beat until done: the far end's
// sign that its caller is there.
type beating struct {
	data []byte
	beat *time.Ticker
	done <-chan struct{}
}

func (b *beating) Read(p []byte) (int, error) {
	if len(b.data) > 0 {
		n := copy(p, b.data)
		b.data = b.data[n:]
		return n, nil
	}
	select {
	case <-b.beat.C:
		if len(p) == 0 {
			return 0, nil
		}
		p[0] = '\n'
		return 1, nil
	case <-b.done:
		return 0, io.EOF
	}
}
