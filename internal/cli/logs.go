package cli

import (
	"context"
	"encoding/json"
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
			asJSON, err := f.json()
			if err != nil {
				return err
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
				w := m.WatchGoals(session.WatchOptions{Learner: offlineLearner})
				w.Start(cmd.Context())
				defer w.Stop()
			}
			out := cmd.OutOrStdout()
			return printLog(cmd.Context(), src, logPrinter{w: out, s: g.style(out), json: asJSON}, follow)
		},
	}
	f.add(cmd)
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "follow the log live until interrupted")
	return cmd
}

// printLog prints the operator's log and, with follow, goes on printing
// what is written next, across restarts of the operator, until ctx ends.
func printLog(ctx context.Context, src oplog.Source, p logPrinter, follow bool) error {
	return src.Lines(ctx, follow, p.line)
}

// logPrinter prints the operator's log lines: a reconcile pass as its
// watch, diff, act and status (oplog.Entry.Text), any other line as the
// operator wrote it; with json, each line's oplog.Entry (its pass
// included) as one JSON object a line.
type logPrinter struct {
	w    io.Writer
	s    style
	json bool
}

func (p logPrinter) line(l oplog.Line) error {
	e := oplog.ParseEntry(l)
	if p.json {
		b, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("encode operator log line: %w", err)
		}
		_, err = fmt.Fprintf(p.w, "%s\n", b)
		return err
	}
	e.Time = e.Time.Local()
	_, err := fmt.Fprintln(p.w, paint(p.s, e))
	return err
}

// paint colours errors and warnings, by the line's level or its words.
func paint(s style, e oplog.Entry) string {
	text := e.Text()
	low := strings.ToLower(e.Raw)
	switch {
	case e.Level == oplog.LevelError || strings.Contains(low, "error") || strings.Contains(low, "forbidden"):
		return s.bad(text)
	case e.Level == oplog.LevelWarn || strings.Contains(low, "warn"):
		return s.warn(text)
	}
	return text
}
