package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

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
			defer closeStore()
			id, err := resolve(cmd.Context(), m, f.id)
			if err != nil {
				return err
			}
			src, err := m.OperatorLog(cmd.Context(), id)
			if err != nil {
				return err
			}
			if follow {
				// While the learner follows the log and repairs, the goals
				// are watched: the time to recovery is when the cluster
				// recovered, not when the check ran.
				w := m.Sessions.Watcher(session.WatchOptions{Learner: offlineLearner})
				w.Start(cmd.Context())
				defer w.Stop()
			}
			out := cmd.OutOrStdout()
			return printLog(cmd.Context(), src, out, newStyle(out), follow)
		},
	}
	f.add(cmd)
	cmd.Flags().Lookup("output").Hidden = true
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "follow the log live until interrupted")
	return cmd
}

// printLog prints the operator's log and, with follow, goes on printing
// what is written next, across restarts of the operator, until ctx ends.
func printLog(ctx context.Context, src oplog.Source, w io.Writer, s style, follow bool) error {
	return src.Lines(ctx, follow, func(l oplog.Line) error {
		_, err := fmt.Fprintln(w, paint(s, l))
		return err
	})
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
