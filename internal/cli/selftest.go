package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/course"
	"oplab.dev/oplab/internal/engine"
	"oplab.dev/oplab/internal/lab"
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
			src := course.Embedded()
			if path != "" {
				var err error
				if src, err = course.Find(path); err != nil {
					return err
				}
			}
			labs, err := selectLabs(src, args)
			if err != nil {
				return err
			}
			p, err := g.provider()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			var progress engine.Progress
			if output == "" {
				progress = selftestPrinter(out)
			}
			e, done, err := selftestCluster(cmd.Context(), g, p, keep, out, progress)
			if err != nil {
				return err
			}
			defer done()
			var reports []*engine.SelfTestReport
			failed := 0
			for _, l := range labs {
				if progress != nil {
					fmt.Fprintf(out, "Self-testing lab %s\n", l.ID)
				}
				rep, err := e.SelfTest(cmd.Context(), l, progress)
				if err != nil {
					return err
				}
				// The next lab starts from a clean cluster.
				if err := e.Teardown(cmd.Context(), l, nil); err != nil {
					return err
				}
				reports = append(reports, rep)
				if !rep.Passed {
					failed++
				}
				if output == "" {
					printSelftest(out, rep)
				}
			}
			if output == "json" {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(reports); err != nil {
					return err
				}
			}
			if failed > 0 {
				return fmt.Errorf("selftest: %d of %d labs failed", failed, len(labs))
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

// selectLabs loads the labs named by ids, or every lab when ids is empty.
func selectLabs(src course.Sources, ids []string) ([]*lab.Lab, error) {
	if len(ids) == 0 {
		labs, errs := lab.LoadAll(src.Labs)
		if len(errs) > 0 {
			return nil, fmt.Errorf("load labs: %v", errs[0])
		}
		return labs, nil
	}
	var out []*lab.Lab
	for _, id := range ids {
		l, errs := lab.Load(src.Labs, id)
		if len(errs) > 0 {
			return nil, fmt.Errorf("load lab %s: %v", id, errs[0])
		}
		out = append(out, l)
	}
	return out, nil
}

// selftestCluster creates the cluster the labs are self-tested on, one
// after another, and returns an Engine on it and the function that deletes
// it (unless keep).
func selftestCluster(ctx context.Context, g *globals, p *cluster.Provider, keep bool, out io.Writer, progress engine.Progress) (*engine.Engine, func(), error) {
	name := fmt.Sprintf("selftest-%d", time.Now().Unix()%100000)
	var createProgress func(cluster.Step)
	if progress != nil {
		fmt.Fprintf(out, "Creating cluster %s\n", name)
		createProgress = progressPrinter(out)
	}
	remove := func() {
		// The command's context may be cancelled; the cluster must go anyway.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		_ = p.Delete(dctx, name)
	}
	if err := p.Create(ctx, name, cluster.CreateWithProgress(createProgress)); err != nil {
		remove()
		return nil, nil, fmt.Errorf("create cluster %s: %w", name, err)
	}
	done := remove
	if keep {
		done = func() {
			if kc, err := p.KubeconfigPath(name); err == nil && progress != nil {
				fmt.Fprintf(out, "Cluster %s kept: kubectl --kubeconfig %s get pgc\n", name, kc)
			}
		}
	}
	cfg, err := p.RESTConfig(name)
	if err != nil {
		done()
		return nil, nil, err
	}
	e, err := engine.New(engine.Target{Config: cfg, Provider: p, Cluster: name, BinDir: g.binDir, Logger: g.logger()})
	if err != nil {
		done()
		return nil, nil, err
	}
	return e, done, nil
}

// selftestPrinter prints each finished step of a self-test.
func selftestPrinter(w io.Writer) engine.Progress {
	return func(s engine.Step) {
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

func printSelftest(w io.Writer, rep *engine.SelfTestReport) {
	verdict := "PASS"
	if !rep.Passed {
		verdict = "FAIL"
	}
	fmt.Fprintf(w, "%s %s (setup %.1fs, total %.1fs)\n", verdict, rep.Lab, rep.Setup.Seconds(), rep.Elapsed.Seconds())
	for _, ex := range rep.Exercises {
		if ex.Passed {
			fmt.Fprintf(w, "  ✓ %s (%.1fs, %d shortcuts refused)\n", ex.ID, ex.Elapsed.Seconds(), len(ex.Shortcuts))
		} else {
			fmt.Fprintf(w, "  ✗ %s: %s\n", ex.ID, ex.Problem)
		}
	}
}
