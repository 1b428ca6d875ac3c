package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"oplab.dev/oplab/internal/operator/install"
	"oplab.dev/oplab/internal/oplog"
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
			loc, err := oplog.ForCluster(p, st.Cluster)
			if errors.Is(err, oplog.ErrNoHostLog) {
				cfg, err := p.RESTConfig(st.Cluster)
				if err != nil {
					return err
				}
				return install.Logs(cmd.Context(), cfg, out, follow)
			}
			if err != nil {
				return err
			}
			return tailLog(cmd.Context(), loc.Log(), out, newStyle(out), follow)
		},
	}
	f.add(cmd)
	cmd.Flags().Lookup("output").Hidden = true
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "follow the log live until interrupted")
	return cmd
}

// pollInterval is how often a followed log file is checked when no file
// notification came (see oplog.Follower).
const pollInterval = 100 * time.Millisecond

// tailLog prints the operator's log file (CRI format) and, with follow,
// goes on printing what is appended, across restarts of the operator
// (which start a new file), until ctx ends.
func tailLog(ctx context.Context, path string, w io.Writer, s style, follow bool) error {
	printLine := func(l oplog.Line) error {
		_, err := fmt.Fprintln(w, paint(s, l))
		return err
	}
	if !follow {
		if err := oplog.ReadFile(path, printLine); err != nil {
			return fmt.Errorf("%w (is the operator installed?)", err)
		}
		return nil
	}
	f := &oplog.Follower{Path: path, Poll: pollInterval}
	return f.Run(ctx, printLine)
}

// paint colours errors and warnings, by the line's level or its words.
func paint(s style, l oplog.Line) string {
	level := oplog.ParseEntry(l).Level
	text := strings.ToLower(l.Text)
	switch {
	case level == oplog.LevelError || strings.Contains(text, "error") || strings.Contains(text, "forbidden"):
		return s.bad(l.Text)
	case level == oplog.LevelWarn || strings.Contains(text, "warn"):
		return s.warn(l.Text)
	}
	return l.Text
}
