package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"oplab.dev/oplab/internal/app"
)

func newOperatorCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "operator",
		Short: "Install, upgrade, uninstall the reference PostgreSQL operator and read its log",
		Long: `Install, upgrade and uninstall the reference PostgreSQL operator (pg-operator)
in a cluster, from the Helm chart built into oplab, and read its log.

On the embedded provider the operator's pod is simulated, so oplab runs the
operator beside the cluster as a process authenticated with the token of its
ServiceAccount: RBAC applies to it as in a real cluster, and its log is the
pod's log (kubectl logs -n oplab-system deploy/pg-operator).`,
	}
	cmd.AddCommand(newOperatorInstallCmd(g), newOperatorUninstallCmd(g), newOperatorLogsCmd(g))
	return cmd
}

// clustersFor returns the cluster commands' layer for the --cluster flag's
// cluster.
func (g *globals) clustersFor(clusterName string) (*app.Clusters, error) {
	if clusterName == "" {
		return nil, fmt.Errorf("give the cluster with --cluster NAME")
	}
	return g.provider()
}

func newOperatorInstallCmd(g *globals) *cobra.Command {
	var (
		clusterName string
		operator    string
		timeout     time.Duration
	)
	cmd := &cobra.Command{
		Use:     "install --cluster NAME",
		Short:   "Install the operator, or upgrade it, and wait until it is ready",
		Example: `  oplab operator install --cluster alice`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.clustersFor(clusterName)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "Installing %s into cluster %q\n", opName(operator), clusterName)
			start := time.Now()
			res, err := c.InstallOperator(cmd.Context(), clusterName, operator, timeout)
			if err != nil {
				return fmt.Errorf("install operator into cluster %q: %w", clusterName, err)
			}
			verb := "installed"
			if res.Upgraded {
				verb = "upgraded"
			}
			fmt.Fprintf(out, "%s %s (revision %d) and ready in %.1fs.\n", opName(operator), verb, res.Revision, time.Since(start).Seconds())
			if res.Host != nil {
				fmt.Fprintf(out, "It runs beside the cluster as a host process; its token expires at %s.\n", res.Host.TokenExpires.Format(time.RFC3339))
			}
			fmt.Fprintf(out, "\nRead its log with:\n  oplab operator logs --cluster %s -f\n", clusterName)
			return nil
		},
	}
	cmd.Flags().StringVar(&clusterName, "cluster", "", "the cluster to install into")
	cmd.Flags().StringVar(&operator, "operator", app.ReferenceOperator, operatorFlagHelp)
	cmd.Flags().DurationVar(&timeout, "timeout", app.DefaultOperatorTimeout, "how long to wait for the operator to be ready")
	return cmd
}

func newOperatorUninstallCmd(g *globals) *cobra.Command {
	var (
		clusterName string
		operator    string
		timeout     time.Duration
	)
	cmd := &cobra.Command{
		Use:   "uninstall --cluster NAME",
		Short: "Stop the operator and remove it (the CRD and PostgresClusters stay)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.clustersFor(clusterName)
			if err != nil {
				return err
			}
			if err := c.UninstallOperator(cmd.Context(), clusterName, operator, timeout); err != nil {
				return fmt.Errorf("uninstall operator from cluster %q: %w", clusterName, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s uninstalled from cluster %q.\n", opName(operator), clusterName)
			return nil
		},
	}
	cmd.Flags().StringVar(&clusterName, "cluster", "", "the cluster to uninstall from")
	cmd.Flags().StringVar(&operator, "operator", app.ReferenceOperator, operatorFlagHelp)
	cmd.Flags().DurationVar(&timeout, "timeout", app.DefaultOperatorTimeout, "how long to wait for the removal")
	return cmd
}

func newOperatorLogsCmd(g *globals) *cobra.Command {
	var (
		clusterName string
		operator    string
		follow      bool
	)
	cmd := &cobra.Command{
		Use:     "logs --cluster NAME [-f]",
		Short:   "Print the operator's log (its pod's log)",
		Example: `  oplab operator logs --cluster alice -f`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.clustersFor(clusterName)
			if err != nil {
				return err
			}
			return c.OperatorLog(cmd.Context(), clusterName, operator, cmd.OutOrStdout(), follow)
		},
	}
	cmd.Flags().StringVar(&clusterName, "cluster", "", "the cluster whose operator to read")
	cmd.Flags().StringVar(&operator, "operator", app.ReferenceOperator, operatorFlagHelp)
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "stream the log until interrupted")
	return cmd
}

// operatorFlagHelp says which operators --operator names.
var operatorFlagHelp = "the operator: " + strings.Join(app.OperatorNames(), ", ") +
	" (the first is the reference operator; the others, the course's third-party ones, run on kind from their own charts, built by make images-operators)"

// opName is how the commands name operator.
func opName(operator string) string {
	if operator == "" {
		return app.ReferenceOperator
	}
	return operator
}
