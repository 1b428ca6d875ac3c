// Package content embeds the course's lesson pages: content/<lang>/<id>.md,
// the same page ids in every language. Render them with internal/lesson.
package content

import (
	"embed"
	"io/fs"
)

//go:embed en/*.md ko/*.md
var files embed.FS

// FS holds en/<id>.md and ko/<id>.md.
var FS fs.FS = files
