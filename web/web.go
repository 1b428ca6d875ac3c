// Package web holds the browser's side of oplab: page templates and static
// assets, embedded into the binary.
package web

import "embed"

// FS holds templates/*.html and static/*.
//
//go:embed templates static
var FS embed.FS
