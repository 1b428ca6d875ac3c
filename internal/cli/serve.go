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
			p, err := g.provider()
			if err != nil {
				return err
			}
			s, err := server.New(server.Config{Clusters: p, Web: web.FS, Logger: g.logger()})
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
