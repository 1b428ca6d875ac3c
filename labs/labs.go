// Package labs embeds the shipped labs, labs/<id>/lab.yaml. Decode them
// with internal/lab.
package labs

import (
	"embed"
	"io/fs"
)

//go:embed */lab.yaml
var files embed.FS

// FS holds <id>/lab.yaml for every lab.
var FS fs.FS = files
