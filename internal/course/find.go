package course

import (
	"fmt"
	"os"
	"path/filepath"

	"oplab.dev/oplab/content"
	"oplab.dev/oplab/labs"
	"oplab.dev/oplab/quizzes"
)

// Embedded returns the course built into the binary.
func Embedded() Sources {
	return Sources{Labs: labs.FS, Content: content.FS, Quizzes: quizzes.FS}
}

// Find returns the course that path belongs to: a course folder holding
// labs/, content/ and quizzes/; its labs/ folder; or one lab's folder
// (labs/<id>). The whole course is returned, since a lab is only valid
// together with the pages and quiz it names.
func Find(path string) (Sources, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Sources{}, fmt.Errorf("find course at %s: %w", path, err)
	}
	candidates := []string{abs, filepath.Dir(abs), filepath.Dir(filepath.Dir(abs))}
	for _, root := range candidates {
		if isDir(filepath.Join(root, "labs")) && isDir(filepath.Join(root, "content")) && isDir(filepath.Join(root, "quizzes")) {
			return Dir(root)
		}
	}
	return Sources{}, fmt.Errorf("find course at %s: no folder with labs/, content/ and quizzes/ there or above", path)
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
