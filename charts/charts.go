// Package charts embeds oplab's Helm charts so the oplab binary can install
// them without a helm binary or a chart repository.
package charts

import (
	"embed"
	"io/fs"
)

// The chart's crds/ and files/role.yaml (the operator's RBAC rules) are
// controller-gen's output, copied in by `make generate`.
//
// The all: prefix keeps files whose names start with _ or ., such as
// templates/_helpers.tpl, which go:embed drops otherwise.
//
//go:embed all:pg-operator all:oplab
var files embed.FS

// PGOperator is the pg-operator chart: Chart.yaml at its root.
func PGOperator() fs.FS {
	sub, err := fs.Sub(files, "pg-operator")
	if err != nil {
		panic(err) // the directory is embedded above; this cannot fail
	}
	return sub
}

// Oplab is oplab's own chart: the lab server on Kubernetes with the pods
// provider (docs/kubernetes.md).
func Oplab() fs.FS {
	sub, err := fs.Sub(files, "oplab")
	if err != nil {
		panic(err) // the directory is embedded above; this cannot fail
	}
	return sub
}
