package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"oplab.dev/oplab/internal/server"
	"oplab.dev/oplab/web"
)

func newServeCmd(g *globals) *cobra.Command {
	var addr string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Start the lab server",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := g.open(cmd.Context())
			if err != nil {
				return err
			}
			defer a.Close()
			// Sessions an oplab left behind when it stopped are failed and
			// their clusters deleted before anyone is served.
			rep, err := a.Recover(cmd.Context())
			if err != nil {
				g.logger().Warn("recover sessions", "err", err)
			}
			if n := len(rep.Failed) + len(rep.Deleted); n > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "recovered after an unclean stop: %d sessions failed, %d clusters deleted\n", len(rep.Failed), len(rep.Deleted))
			}
			s, err := server.New(server.Config{Clusters: a.Clusters, Web: web.FS, Logger: g.logger()})
			if err != nil {
				return err
			}
			return server.ListenAndServe(cmd.Context(), addr, s, func(url string) {
				fmt.Fprintf(cmd.OutOrStdout(), "oplab is serving on %s (press Ctrl-C to stop)\n", url)
			})
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8080", "address to listen on")
	return cmd
}
