// Command charts copies the Helm charts of the course's third-party
// operators (package thirdparty) out of their Go module zips into
// <bin>/charts/<chart>-<version>/, where labs install them from: the
// charts are taken from the modules at the pinned versions, never copied
// into the repository by hand. A chart already there is left alone. With
// -module it prints an operator's module@version instead, so that the
// image build (hack/kind/build-images.sh) pins nothing of its own.
//
//	go run ./hack/charts BIN_DIR
//	go run ./hack/charts -module postgres-operator
package main

import (
	"flag"
	"fmt"
	"os"

	"oplab.dev/oplab/internal/operator/thirdparty"
)

func main() {
	module := flag.String("module", "", "print this operator's module@version and exit")
	flag.Parse()
	if *module != "" {
		o, err := thirdparty.Find(*module)
		if err != nil {
			fmt.Fprintln(os.Stderr, "charts:", err)
			os.Exit(1)
		}
		fmt.Println(o.Module + "@" + o.ModuleVersion)
		return
	}
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: go run ./hack/charts BIN_DIR | -module NAME")
		os.Exit(2)
	}
	for _, o := range thirdparty.All {
		if err := o.Extract(flag.Arg(0)); err != nil {
			fmt.Fprintf(os.Stderr, "charts: %s: %v\n", o.Name, err)
			os.Exit(1)
		}
		fmt.Printf("chart %s %s from %s@%s\n", o.Chart, o.Version, o.Module, o.ModuleVersion)
	}
}
