package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"oplab.dev/oplab/internal/operator/install"
	"oplab.dev/oplab/internal/session"
)

func newLogsCmd(g *globals) *cobra.Command {
	var (
		f      sessionFlags
		follow bool
	)
	cmd := &cobra.Command{
		Use:   "logs [-f]",
		Short: "Print the operator's reconcile log in your lab's cluster; -f follows it live",
		Example: `  oplab logs -f
  oplab logs --session failover-1a2b3c`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.output != "" {
				return errors.New("logs are text: --output is not supported")
			}
			m, closeStore, err := g.sessions(cmd.Context())
			if err != nil {
				return err
			}
			id, err := resolve(cmd.Context(), m, f.id)
			if err != nil {
				closeStore()
				return err
			}
			st, err := m.Status(cmd.Context(), id)
			if follow && err == nil {
				// While the learner follows the log and repairs, the goals
				// are watched: the time to recovery is when the cluster
				// recovered, not when the check ran.
				w := m.Sessions.Watcher(session.WatchOptions{Learner: offlineLearner})
				w.Start(cmd.Context())
				defer closeStore()
				defer w.Stop()
			} else {
				closeStore() // the store is not needed any more
			}
			if err != nil {
				return err
			}
			if st.Kubeconfig == "" {
				return fmt.Errorf("session %s has no cluster (it is %s)", id, st.State)
			}
			out := cmd.OutOrStdout()
			p, err := g.provider()
			if err != nil {
				return err
			}
			if !p.Info().Capabilities.HostProcesses {
				cfg, err := p.RESTConfig(st.Cluster)
				if err != nil {
					return err
				}
				return install.Logs(cmd.Context(), cfg, out, follow)
			}
			// The embedded provider runs the operator beside the cluster;
			// its log is a file in the cluster's directory.
			path := filepath.Join(filepath.Dir(st.Kubeconfig), "pg-operator", "pg-operator.log")
			return tailLog(cmd.Context(), path, out, newStyle(out), follow)
		},
	}
	f.add(cmd)
	cmd.Flags().Lookup("output").Hidden = true
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "follow the log live until interrupted")
	return cmd
}

// pollInterval is how often a followed log file is checked for more.
const pollInterval = 100 * time.Millisecond

// tailLog prints the operator's log file (CRI format) and, with follow,
// goes on printing what is appended, across restarts of the operator
// (which start a new file), until ctx ends.
func tailLog(ctx context.Context, path string, w io.Writer, s style, follow bool) error {
	t := &tailer{path: path, w: w, s: s}
	defer t.close()
	for {
		if err := t.open(); err != nil {
			if !follow || !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("operator log: %w (is the operator installed?)", err)
			}
		} else if err := t.drain(); err != nil {
			return err
		}
		if !follow {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(pollInterval):
		}
		if t.replaced() {
			// Print what the old file got before it was replaced.
			if err := t.drain(); err != nil {
				return err
			}
			t.close()
		}
	}
}

type tailer struct {
	path    string
	w       io.Writer
	s       style
	f       *os.File
	r       *bufio.Reader
	partial strings.Builder // text of CRI partial lines ("P") not yet ended
	pending string          // bytes of a line not yet ended by a newline
}

func (t *tailer) open() error {
	if t.f != nil {
		return nil
	}
	f, err := os.Open(t.path)
	if err != nil {
		return err
	}
	t.f, t.r = f, bufio.NewReader(f)
	return nil
}

func (t *tailer) close() {
	if t.f != nil {
		t.f.Close()
		t.f, t.r, t.pending = nil, nil, ""
	}
}

// replaced reports whether the file at path is no longer the open one or
// was truncated.
func (t *tailer) replaced() bool {
	if t.f == nil {
		return false
	}
	now, err := os.Stat(t.path)
	if err != nil {
		return false
	}
	open, err := t.f.Stat()
	if err != nil {
		return true
	}
	pos, _ := t.f.Seek(0, io.SeekCurrent)
	return !os.SameFile(now, open) || now.Size() < pos-int64(t.r.Buffered())
}

// drain prints every whole line available.
func (t *tailer) drain() error {
	for {
		chunk, err := t.r.ReadString('\n')
		t.pending += chunk
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read operator log: %w", err)
		}
		line := strings.TrimRight(t.pending, "\n")
		t.pending = ""
		if text, ok := t.cri(line); ok {
			fmt.Fprintln(t.w, t.paint(text))
		}
	}
}

// cri returns the text of a CRI log line ("<time> <stream> <P|F> <text>"),
// joining partial lines; ok is false while a line is still partial. A line
// not in the format is returned as it is.
func (t *tailer) cri(line string) (string, bool) {
	fields := strings.SplitN(line, " ", 4)
	if len(fields) < 3 {
		return line, true
	}
	if _, err := time.Parse(time.RFC3339Nano, fields[0]); err != nil {
		return line, true
	}
	if len(fields) == 4 {
		t.partial.WriteString(fields[3])
	}
	if fields[2] == "P" {
		return "", false
	}
	text := t.partial.String()
	t.partial.Reset()
	return text, true
}

func (t *tailer) paint(line string) string {
	l := strings.ToLower(line)
	switch {
	case strings.Contains(l, "error") || strings.Contains(l, "forbidden"):
		return t.s.bad(line)
	case strings.Contains(l, "warn"):
		return t.s.warn(line)
	}
	return line
}
