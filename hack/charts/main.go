// Command charts copies the Helm charts of the course's third-party
// operators (package thirdparty) out of their Go module zips into
// <bin>/charts/<chart>-<version>/, where labs install them from: the
// charts are taken from the modules at the pinned versions, never copied
// into the repository by hand. A chart already there is left alone.
//
//	go run ./hack/charts BIN_DIR
package main

import (
	"fmt"
	"os"

	"oplab.dev/oplab/internal/operator/thirdparty"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run ./hack/charts BIN_DIR")
		os.Exit(2)
	}
	for _, o := range thirdparty.All {
		if err := o.Extract(os.Args[1]); err != nil {
			fmt.Fprintf(os.Stderr, "charts: %s: %v\n", o.Name, err)
			os.Exit(1)
		}
		fmt.Printf("chart %s %s from %s@%s\n", o.Chart, o.Version, o.Module, o.ModuleVersion)
	}
}
