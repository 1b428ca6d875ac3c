// Package labs embeds the shipped labs, labs/<id>/lab.yaml. Decode them
// with internal/lab.
//
// A lab in which the learner writes a controller also ships Go modules
// (internal/controllab): <id>/_module is the module the learner starts
// from, <id>/_solution the files that make it the reference solution, and
// <id>/_variants/<name> the files of each broken variant its self-test
// builds. Their names begin with _ so that the go command does not build
// them as part of oplab.
package labs

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
)

//go:embed */lab.yaml
var files embed.FS

// FS holds <id>/lab.yaml for every lab.
var FS fs.FS = files

//go:embed write-reconciler/_module write-reconciler/_solution write-reconciler/_variants
//go:embed write-reconciler/crd.yaml write-reconciler/rbac.yaml write-reconciler/controller.yaml
var modules embed.FS

// Manifest returns the manifest name (crd.yaml, rbac.yaml,
// controller.yaml) of lab id whose learner writes a controller: its
// resource, its controller's rights, and where its controller runs.
func Manifest(id, name string) (string, error) {
	b, err := fs.ReadFile(modules, id+"/"+name)
	if err != nil {
		return "", fmt.Errorf("lab %s: %w", id, err)
	}
	return string(b), nil
}

// Module returns the module lab id gives its learner to start from.
func Module(id string) (fs.FS, error) { return tree(id, "_module") }

// Solution returns the files that make lab id's module its reference
// solution, to lay over Module's.
func Solution(id string) (fs.FS, error) { return tree(id, "_solution") }

// Variant returns the files of lab id's broken variant name, to lay over
// Module's.
func Variant(id, name string) (fs.FS, error) { return tree(id, "_variants/"+name) }

// Variants names lab id's broken variants.
func Variants(id string) ([]string, error) {
	ents, err := fs.ReadDir(modules, id+"/_variants")
	if err != nil {
		return nil, fmt.Errorf("lab %s has no variants: %w", id, err)
	}
	var names []string
	for _, e := range ents {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

func tree(id, dir string) (fs.FS, error) {
	sub, err := fs.Sub(modules, id+"/"+dir)
	if err != nil {
		return nil, err
	}
	if _, err := fs.Stat(sub, "."); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("lab %s ships no %s", id, dir)
	}
	return sub, nil
}
