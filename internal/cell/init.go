package cell

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Main is the cell program: "cell init" is a cell's first process, "cell
// exec" starts every other one. It runs inside the cell.
func Main(ctx context.Context, args []string, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: cell init|exec|version ...")
	}
	switch args[0] {
	case "init":
		return runInit(ctx, args[1:], stderr)
	case "exec":
		return runExec(args[1:])
	case "join":
		return runJoin(args[1:])
	case "enter":
		return runEnter(args[1:])
	case "hold":
		return runHold(args[1:])
	case "version":
		fmt.Fprintln(stderr, "cell: oplab's cluster cell")
		return nil
	default:
		return fmt.Errorf("unknown command %q: want init, exec or version", args[0])
	}
}

// runJoin executes "cell join [--cgroup FILE...] -- PROGRAM ARGS..." in
// the control groups of the procs files given, with SIGTERM ignored; an
// ignored signal stays ignored across exec, so PROGRAM (nsenter) outlives
// a SIGTERM to its process group and waits for the program it runs.
func runJoin(args []string) error {
	args, err := enterGroups("join", args)
	if err != nil {
		return err
	}
	signal.Ignore(syscall.SIGTERM)
	return syscall.Exec(args[0], args, os.Environ())
}

// runEnter executes "cell enter [--cgroup FILE...] -- PROGRAM ARGS..." in
// the control groups of the procs files given: how a cell's first process
// starts in the cell's group.
func runEnter(args []string) error {
	args, err := enterGroups("enter", args)
	if err != nil {
		return err
	}
	return syscall.Exec(args[0], args, os.Environ())
}

// enterGroups parses "[--cgroup FILE...] -- PROGRAM ARGS...", writes this
// process into each group and returns PROGRAM ARGS.
func enterGroups(cmd string, args []string) ([]string, error) {
	fs := flag.NewFlagSet("cell "+cmd, flag.ContinueOnError)
	var groups []string
	fs.Func("cgroup", "a control group's cgroup.procs file to join first", func(v string) error {
		groups = append(groups, v)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() == 0 {
		return nil, fmt.Errorf("usage: cell %s [--cgroup FILE...] -- PROGRAM [ARGS...]", cmd)
	}
	// Writing 0 to a group's cgroup.procs moves the writer (cgroup v1 and
	// v2 alike); what it executes and starts stays there.
	for _, f := range groups {
		if err := os.WriteFile(f, []byte("0"), 0); err != nil {
			return nil, fmt.Errorf("join control group %s: %w", filepath.Dir(f), err)
		}
	}
	return fs.Args(), nil
}

// runExec sets the process's limits and no_new_privs, then executes the
// program: "cell exec --files N --memory BYTES -- PROGRAM ARGS...".
func runExec(args []string) error {
	fs := flag.NewFlagSet("cell exec", flag.ContinueOnError)
	files := fs.Uint64("files", 0, "most open files (0: unchanged)")
	memory := fs.Uint64("memory", 0, "most private writable memory in bytes (0: unchanged)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("usage: cell exec [--files N] [--memory BYTES] -- PROGRAM [ARGS...]")
	}
	if err := lower(unix.RLIMIT_NOFILE, *files); err != nil {
		return fmt.Errorf("limit open files: %w", err)
	}
	if err := lower(unix.RLIMIT_DATA, *memory); err != nil {
		return fmt.Errorf("limit memory: %w", err)
	}
	// Nothing the program runs can gain privileges: no setuid file, no
	// file capability.
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	prog, err := exec.LookPath(fs.Arg(0))
	if err != nil {
		return err
	}
	return syscall.Exec(prog, fs.Args(), os.Environ())
}

// lower sets the limit resource to n, or keeps it where it is lower: an
// unprivileged process may lower a limit, not raise it.
func lower(resource int, n uint64) error {
	if n == 0 {
		return nil
	}
	var cur unix.Rlimit
	if err := unix.Getrlimit(resource, &cur); err != nil {
		return err
	}
	return unix.Setrlimit(resource, &unix.Rlimit{Cur: min(n, cur.Max), Max: min(n, cur.Max)})
}

// runInit is a cell's first process: it forwards the listeners it was
// given and serves the control socket until it is told to stop.
func runInit(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("cell init", flag.ContinueOnError)
	control := fs.String("control", "", "path of the control socket")
	var forwards []string
	fs.Func("forward", "FD=PORT: forward the listener FD to PORT on the cell's loopback", func(v string) error {
		forwards = append(forwards, v)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *control == "" {
		return errors.New("cell init needs --control")
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	c := &controller{log: log, forwards: map[string][]net.Listener{}}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for _, f := range forwards {
		fdText, portText, ok := strings.Cut(f, "=")
		fd, err1 := strconv.Atoi(fdText)
		port, err2 := strconv.Atoi(portText)
		if !ok || err1 != nil || err2 != nil || fd < 3 || port <= 0 {
			return fmt.Errorf("--forward %q: want FD=PORT", f)
		}
		if err := c.forward(ctx, "", os.NewFile(uintptr(fd), "forward-"+portText), port); err != nil {
			return err
		}
	}
	// Bound by a relative name from its directory: the whole path may be
	// longer than a socket's name can be.
	if err := os.Chdir(filepath.Dir(*control)); err != nil {
		return fmt.Errorf("control socket: %w", err)
	}
	name := filepath.Base(*control)
	os.Remove(name)
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: name, Net: "unix"})
	if err != nil {
		return fmt.Errorf("control socket: %w", err)
	}
	go func() {
		<-ctx.Done()
		l.Close()
	}()
	for {
		conn, err := l.AcceptUnix()
		if err != nil {
			if ctx.Err() != nil {
				c.closeAll()
				return nil
			}
			return fmt.Errorf("control socket: %w", err)
		}
		go c.serve(ctx, conn)
	}
}

// controller holds the forwards of a cell, by name.
type controller struct {
	log      *slog.Logger
	mu       sync.Mutex
	forwards map[string][]net.Listener
}

func (c *controller) serve(ctx context.Context, conn *net.UnixConn) {
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	req, file, err := readRequest(conn)
	rep := controlReply{}
	switch {
	case err != nil:
		rep.Error = err.Error()
	case req.Op == opPing:
	case req.Op == opForward:
		if file == nil || req.Port <= 0 || req.Port > 65535 {
			rep.Error = "a forward needs a listener and a port"
		} else if err := c.forward(ctx, req.Name, file, req.Port); err != nil {
			rep.Error = err.Error()
		}
		file = nil
	case req.Op == opClose:
		c.close(req.Name)
	default:
		rep.Error = fmt.Sprintf("unknown operation %q", req.Op)
	}
	if file != nil {
		file.Close()
	}
	json.NewEncoder(conn).Encode(rep)
}

// forward accepts on the host listener in f and joins each connection to
// port on the cell's loopback.
func (c *controller) forward(ctx context.Context, name string, f *os.File, port int) error {
	l, err := net.FileListener(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("forward %d: %w", port, err)
	}
	c.mu.Lock()
	c.forwards[name] = append(c.forwards[name], l)
	c.mu.Unlock()
	target := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return // closed
			}
			go pipe(ctx, conn, target)
		}
	}()
	return nil
}

func (c *controller) close(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, l := range c.forwards[name] {
		l.Close()
	}
	delete(c.forwards, name)
}

func (c *controller) closeAll() {
	c.mu.Lock()
	names := make([]string, 0, len(c.forwards))
	for n := range c.forwards {
		names = append(names, n)
	}
	c.mu.Unlock()
	for _, n := range names {
		c.close(n)
	}
}

// pipe joins a host connection to target in the cell, until either side
// closes.
func pipe(ctx context.Context, host net.Conn, target string) {
	defer host.Close()
	d := net.Dialer{Timeout: 5 * time.Second}
	inner, err := d.DialContext(ctx, "tcp", target)
	if err != nil {
		return // the host sees the connection closed, as with nothing listening
	}
	defer inner.Close()
	done := make(chan struct{}, 2)
	copyHalf := func(dst, src net.Conn) {
		io.Copy(dst, src)
		if tc, ok := dst.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go copyHalf(inner, host)
	go copyHalf(host, inner)
	<-done
	<-done
}
