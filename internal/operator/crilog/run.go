package crilog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// Run runs argv with its stdout and stderr written as CRI log lines to the
// file logPath (appended to), and returns the program's exit code. It is the
// body of the crilog wrapper that oplab starts host processes through.
//
// SIGTERM and SIGINT are expected to reach the whole process group, as the
// embedded provider sends them; Run then waits for the program to exit. A
// signal that reaches Run alone is passed on after a second, so the program is
// never told twice (controller-runtime exits at once on a second signal).
func Run(ctx context.Context, logPath string, argv []string) (int, error) {
	if len(argv) == 0 {
		return 2, errors.New("no program to run")
	}
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 2, fmt.Errorf("open log: %w", err)
	}
	defer f.Close()
	stdout, stderr := NewWriter(f, "stdout"), NewWriter(f, "stderr")

	cmd := exec.Command(argv[0], argv[1:]...)
	outR, err := cmd.StdoutPipe()
	if err != nil {
		return 2, err
	}
	errR, err := cmd.StderrPipe()
	if err != nil {
		return 2, err
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "crilog: start %s: %v\n", argv[0], err)
		return 127, fmt.Errorf("start %s: %w", argv[0], err)
	}

	var copies sync.WaitGroup
	for _, c := range []struct {
		w *Writer
		r io.Reader
	}{{stdout, outR}, {stderr, errR}} {
		copies.Go(func() {
			_, _ = io.Copy(c.w, c.r)
			_ = c.w.Flush()
		})
	}
	exited := make(chan struct{})
	go func() {
		copies.Wait() // the pipes must be drained before Wait closes them
		_ = cmd.Wait()
		close(exited)
	}()

	for {
		select {
		case <-exited:
			code := cmd.ProcessState.ExitCode()
			if code != 0 {
				fmt.Fprintf(stderr, "crilog: %s exited: %v\n", argv[0], cmd.ProcessState)
			}
			return code, nil
		case s := <-sigs:
			go func() {
				select {
				case <-exited:
				case <-time.After(time.Second):
					_ = cmd.Process.Signal(s)
				}
			}()
		case <-ctx.Done():
			_ = cmd.Process.Signal(syscall.SIGTERM)
			<-exited
			return cmd.ProcessState.ExitCode(), ctx.Err()
		}
	}
}
