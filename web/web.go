// Package web holds the browser's side of oplab: page templates and static
// assets, embedded into the binary.
package web

import "embed"

// FS holds templates/*.html, static/* and i18n/<lang>.json.
//
//go:embed templates static i18n
var FS embed.FS
