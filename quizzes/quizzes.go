// Package quizzes embeds the course's quiz files, quizzes/<id>.yaml. Decode
// them with internal/quiz.
package quizzes

import (
	"embed"
	"io/fs"
)

//go:embed *.yaml
var files embed.FS

// FS holds <id>.yaml for every quiz.
var FS fs.FS = files
