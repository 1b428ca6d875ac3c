package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"oplab.dev/oplab/internal/app"
	"oplab.dev/oplab/internal/session"
)

func newLabSelftestCmd(g *globals) *cobra.Command {
	var (
		all    bool
		keep   bool
		path   string
		output string
	)
	cmd := &cobra.Command{
		Use:   "selftest ID... | --all",
		Short: "Check that a lab's grader works: goals fail after the chaos and pass after the reference solution",
		Long: `Selftest runs a lab against a fresh embedded cluster: it installs the operator,
runs the lab's setup and then, for every exercise in order, checks that the
steady state passes before the chaos, that the chaos's fault is confirmed,
that the goal checks fail right after it, and that they pass after the
exercise's reference solution.

The labs run one after another on one cluster, each torn down before the
next; the cluster is deleted afterwards unless --keep is given.`,
		Example: `  oplab lab selftest failover
  oplab lab selftest --all -o json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if all == (len(args) > 0) {
				return fmt.Errorf("give lab ids or --all, not both and not neither")
			}
			if output != "" && output != "json" {
				return fmt.Errorf("unknown output format %q: use json, or leave it out for text", output)
			}
			var src app.CourseSource
			if path != "" {
				var err error
				if src, err = app.FindCourse(path); err != nil {
					return err
				}
			}
			a, err := g.openCourse(cmd.Context(), src)
			if err != nil {
				return err
			}
			defer a.Close()
			out := cmd.OutOrStdout()
			o := session.SelfTestOptions{Labs: args, Keep: keep}
			if output == "" {
				steps := progressPrinter(out)
				var once sync.Once
				o.ClusterProgress = func(st app.ClusterStep) {
					once.Do(func() { fmt.Fprintln(out, "Creating a cluster for the self-test") })
					steps(st)
				}
				o.Progress = selftestPrinter(out)
				o.LabStarted = func(id string) { fmt.Fprintf(out, "Self-testing lab %s\n", id) }
				o.LabDone = func(rep *app.SelfTestReport) { printSelftest(out, rep) }
			}
			run, err := a.SelfTest(cmd.Context(), o)
			if run != nil && run.Kept && output == "" {
				if kc, kerr := a.ClusterKubeconfig(run.Cluster); kerr == nil {
					fmt.Fprintf(out, "Cluster %s kept: kubectl --kubeconfig %s get pgc\n", run.Cluster, shellQuote(kc))
				}
			}
			if err != nil {
				return err
			}
			reports := run.Reports
			if output == "" {
				for _, sk := range run.Skipped {
					fmt.Fprintf(out, "SKIP %s (needs %s, which the %s provider lacks: try --provider kind)\n", sk.Lab, strings.Join(sk.Missing, ", "), g.providerName)
				}
			}
			if output == "json" {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(reports); err != nil {
					return err
				}
			}
			if run.Failed > 0 {
				return fmt.Errorf("selftest: %d of %d labs failed", run.Failed, len(reports))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "self-test every lab")
	cmd.Flags().BoolVar(&keep, "keep", false, "keep the cluster after the test")
	cmd.Flags().StringVar(&path, "course", "", "a course folder to take the labs from (default: the course built into oplab)")
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json")
	return cmd
}

// selftestPrinter prints each finished step of a self-test.
func selftestPrinter(w io.Writer) app.SelfTestProgress {
	return func(s app.SelfTestStep) {
		if !s.Done {
			return
		}
		mark := "✓"
		if s.Err != nil {
			mark = "✗"
		}
		where := s.Phase
		if s.Exercise != "" {
			where = s.Exercise + "/" + s.Phase
		}
		fmt.Fprintf(w, "   %s %-32s %-26s %s (%.1fs)\n", mark, where, s.Kind, s.Message, s.Elapsed.Seconds())
	}
}

func printSelftest(w io.Writer, rep *app.SelfTestReport) {
	verdict := "PASS"
	if !rep.Passed {
		verdict = "FAIL"
	}
	fmt.Fprintf(w, "%s %s (setup %.1fs, total %.1fs)\n", verdict, rep.Lab, rep.Setup.Duration().Seconds(), rep.Elapsed.Duration().Seconds())
	for _, ex := range rep.Exercises {
		if ex.Passed {
			fmt.Fprintf(w, "  ✓ %s (%.1fs, %d shortcuts refused)\n", ex.ID, ex.Elapsed.Duration().Seconds(), len(ex.Shortcuts))
		} else {
			fmt.Fprintf(w, "  ✗ %s: %s\n", ex.ID, ex.Problem)
		}
	}
}
