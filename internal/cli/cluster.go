package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"oplab.dev/oplab/internal/app"
)

func newClusterCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Create, list and delete Kubernetes clusters",
		Long: `Create, list and delete Kubernetes clusters.

The embedded provider runs a real control plane (etcd, kube-apiserver,
kube-controller-manager, kube-scheduler) on 127.0.0.1, with KWOK playing a
node so pods are scheduled and become Running: two processes per cluster,
etcd and kube-controlplane, which runs the other components. Containers do
not run.`,
	}
	cmd.AddCommand(newClusterCreateCmd(g), newClusterListCmd(g), newClusterKubeconfigCmd(g), newClusterDeleteCmd(g))
	return cmd
}

func newClusterCreateCmd(g *globals) *cobra.Command {
	var apiPort int
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a cluster and wait until it is usable",
		Example: `  oplab cluster create alice
  kubectl --kubeconfig "$(oplab cluster kubeconfig alice)" get nodes`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := g.provider()
			if err != nil {
				return err
			}
			name := args[0]
			out := cmd.OutOrStdout()
			warnUncontained(cmd.ErrOrStderr(), p)
			fmt.Fprintf(out, "Creating cluster %q (%s provider)\n", name, p.Provider())
			start := time.Now()
			if err := p.Create(cmd.Context(), name, apiPort, progressPrinter(out)); err != nil {
				return fmt.Errorf("create cluster %q: %w", name, err)
			}
			kc, err := p.KubeconfigPath(name)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "Cluster %q is ready (%.1fs).\n\nUse it with:\n  kubectl --kubeconfig %s get nodes\n", name, time.Since(start).Seconds(), kc)
			return nil
		},
	}
	cmd.Flags().IntVar(&apiPort, "api-port", 0, "port for the API server on 127.0.0.1 (default: a free port)")
	return cmd
}

// progressPrinter prints a line as each step starts and ends.
func progressPrinter(w io.Writer) func(app.ClusterStep) {
	return func(s app.ClusterStep) {
		switch {
		case !s.Done:
			fmt.Fprintf(w, " • %s ...\n", s.Name)
		case s.Err != nil:
			fmt.Fprintf(w, " ✗ %s (%.1fs)\n", s.Name, s.Duration.Seconds())
		default:
			fmt.Fprintf(w, " ✓ %s (%.1fs)\n", s.Name, s.Duration.Seconds())
		}
	}
}

func newClusterListCmd(g *globals) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List clusters with their state (running, degraded, stopped)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := g.provider()
			if err != nil {
				return err
			}
			g.repair(cmd.Context())
			list, err := p.List(cmd.Context())
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			switch output {
			case "json":
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if list == nil {
					list = []app.ClusterStatus{}
				}
				return enc.Encode(list)
			case "":
			default:
				return fmt.Errorf("unknown output format %q: use json, or leave it out for a table", output)
			}
			if len(list) == 0 {
				fmt.Fprintln(out, "No clusters. Create one with: oplab cluster create NAME")
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSTATE\tSERVER\tAGE\tPROBLEMS")
			for _, s := range list {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Name, s.State, s.Server, age(s.Created), problems(s))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json")
	return cmd
}

func age(t time.Time) string {
	d := time.Since(t).Round(time.Second)
	switch {
	case d < time.Minute:
		return d.String()
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	default:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	}
}

// problems names the components that are not healthy.
func problems(s app.ClusterStatus) string {
	var out string
	for _, c := range s.Components {
		if c.Healthy {
			continue
		}
		if out != "" {
			out += ", "
		}
		if c.Alive {
			out += c.Name + " unhealthy"
		} else {
			out += c.Name + " dead"
		}
	}
	if out == "" {
		return "-"
	}
	return out
}

func newClusterKubeconfigCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:     "kubeconfig NAME",
		Short:   "Print the path of a cluster's admin kubeconfig",
		Example: `  export KUBECONFIG="$(oplab cluster kubeconfig alice)"`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := g.provider()
			if err != nil {
				return err
			}
			path, err := p.KubeconfigPath(args[0])
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), path)
			return nil
		},
	}
}

func newClusterDeleteCmd(g *globals) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "delete NAME... | --all",
		Short: "Stop a cluster's processes and remove its state",
		RunE: func(cmd *cobra.Command, args []string) error {
			if all == (len(args) > 0) {
				return errors.New("name the clusters to delete, or give --all (not both)")
			}
			p, err := g.provider()
			if err != nil {
				return err
			}
			if all {
				list, err := p.List(cmd.Context())
				if err != nil {
					return err
				}
				for _, s := range list {
					args = append(args, s.Name)
				}
			}
			var errs []error
			for _, name := range args {
				if err := p.Delete(cmd.Context(), name); err != nil {
					errs = append(errs, fmt.Errorf("delete cluster %q: %w", name, err))
					continue
				}
				fmt.Fprintf(cmd.OutOrStdout(), "Deleted cluster %q\n", name)
			}
			return errors.Join(errs...)
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "delete every cluster")
	return cmd
}

// warnUncontained says, in one line, when new clusters of p are not
// contained: on a machine of one's own the CLI goes on, but the cluster
// can then reach this machine's files and network.
func warnUncontained(w io.Writer, a interface{ Contained() (bool, error) }) {
	if ok, why := a.Contained(); !ok {
		fmt.Fprintf(w, "warning: this cluster runs unconfined (%v): anything it is made to do can reach this machine's files and network\n", why)
	}
}
