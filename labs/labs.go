// Package labs embeds the shipped labs, labs/<id>/lab.yaml. Decode them
// with internal/lab.
//
// A lab in which the learner writes a controller also ships Go modules
// (internal/controllab): <id>/_module is the module the learner starts
// from, <id>/_solution the files that make it the reference solution, and
// <id>/_variants/<name> the files of each broken variant its self-test
// builds. Their names begin with _ so that the go command does not build
// them as part of oplab.
//
// Such a lab may build on another's (BuiltOn): its _module then holds only
// the files it adds or replaces, laid over the base's, and its manifests
// (crd.yaml, rbac.yaml, controller.yaml) are the base's unless it ships
// its own. Its solution and variants are its own.
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
//go:embed fix-reconciler/_module fix-reconciler/_variants
var modules embed.FS

// builtOn names, for a lab that builds on another's module, that lab:
// fix-reconciler's learner repairs a controller of write-reconciler's
// WebApp, with its types, main.go and manifests.
var builtOn = map[string]string{"fix-reconciler": "write-reconciler"}

// BuiltOn returns the lab whose module and manifests lab id builds on, or
// "" when it builds on none.
func BuiltOn(id string) string { return builtOn[id] }

// Manifest returns the manifest name (crd.yaml, rbac.yaml,
// controller.yaml) of lab id whose learner writes a controller: its
// resource, its controller's rights, and where its controller runs.
func Manifest(id, name string) (string, error) {
	b, err := fs.ReadFile(modules, id+"/"+name)
	if base := builtOn[id]; errors.Is(err, fs.ErrNotExist) && base != "" {
		b, err = fs.ReadFile(modules, base+"/"+name)
	}
	if err != nil {
		return "", fmt.Errorf("lab %s: %w", id, err)
	}
	return string(b), nil
}

// Module returns the module lab id gives its learner to start from: for a
// lab built on another, only the files it adds to or replaces in the
// base's (see Scaffold).
func Module(id string) (fs.FS, error) { return tree(id, "_module") }

// Scaffold returns the layers of the module lab id gives its learner,
// bottom first: the module of the lab it builds on, if any, then its own.
func Scaffold(id string) ([]fs.FS, error) {
	var layers []fs.FS
	if base := builtOn[id]; base != "" {
		m, err := Module(base)
		if err != nil {
			return nil, err
		}
		layers = append(layers, m)
	}
	m, err := Module(id)
	if err != nil {
		return nil, err
	}
	return append(layers, m), nil
}

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
