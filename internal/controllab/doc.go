// Package controllab builds and runs a learner's own controller: the
// labs in which the learner writes or repairs a reconciler (docs/lab-format.md).
//
// A learner's module is untrusted code, and so is its build: both run in
// the learner's cluster's cell, as the cluster's own processes do, with no
// network but the cell's, their files only, and their budget. The build
// uses the build kit that `make kit` prepares (hack/build-kit.sh): the Go
// toolchain that builds oplab, a module cache holding every module the
// lab's module needs at oplab's own versions, and a build cache warmed by
// building the reference solution. The kit is read-only in every cell; a
// learner's build cache starts as hard links to the warm one (the
// provider's Share), so a build compiles only the learner's packages.
//
// A reading order: kit.go (the kit, and a new module for the learner),
// source.go (a module as files, bounded), build.go (the build in the
// cell, and the compiler's messages on their lines).
package controllab
