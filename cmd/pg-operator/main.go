// Command pg-operator is the reference PostgreSQL operator: it reconciles
// PostgresCluster resources (databases.example.com/v1). See package app.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"oplab.dev/oplab/cmd/pg-operator/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := app.Run(ctx, os.Args[1:], os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "pg-operator:", err)
		os.Exit(1)
	}
}
