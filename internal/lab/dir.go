package lab

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"

	"oplab.dev/oplab/internal/locale"
	"oplab.dev/oplab/internal/quiz"
	"oplab.dev/oplab/internal/yamldoc"
)

// FileName is the name of a lab's file inside its folder.
const FileName = "lab.yaml"

// Refs are the data folders that labs refer to.
type Refs struct {
	Content fs.FS // <lang>/<page>.md
	Quizzes fs.FS // <id>.yaml
}

// IDs lists the labs in fsys: the folders holding a lab.yaml.
func IDs(fsys fs.FS) ([]string, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("list labs: %w", err)
	}
	var ids []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if _, err := fs.Stat(fsys, path.Join(e.Name(), FileName)); err == nil {
			ids = append(ids, e.Name())
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// Load reads and validates lab id (<id>/lab.yaml in fsys) on its own.
func Load(fsys fs.FS, id string) (*Lab, []error) {
	l, _, errs := load(fsys, id)
	return l, errs
}

func load(fsys fs.FS, id string) (*Lab, *yamldoc.Doc, []error) {
	data, err := fs.ReadFile(fsys, path.Join(id, FileName))
	if err != nil {
		return nil, nil, []error{fmt.Errorf("read lab %q: %w", id, err)}
	}
	l, doc, errs := parse(labFile(id), data)
	if len(errs) == 0 && l.ID != id {
		return nil, doc, []error{doc.Errorf("id", "id %q does not match its folder %q", l.ID, id)}
	}
	return l, doc, errs
}

// LoadAll loads every lab in fsys, checking each on its own.
func LoadAll(fsys fs.FS) ([]*Lab, []error) {
	ids, err := IDs(fsys)
	if err != nil {
		return nil, []error{err}
	}
	var labs []*Lab
	var errs []error
	for _, id := range ids {
		l, e := Load(fsys, id)
		errs = append(errs, e...)
		if l != nil {
			labs = append(labs, l)
		}
	}
	return labs, errs
}

// ValidateDir validates every lab in labs and every reference it makes:
// each lesson page exists in every language in refs.Content, and the quiz
// exists in refs.Quizzes, validates, and (when it names a lab) names this
// one. It returns every problem found; none means the folder is good.
func ValidateDir(labs fs.FS, refs Refs) []error {
	ids, err := IDs(labs)
	if err != nil {
		return []error{err}
	}
	if len(ids) == 0 {
		return []error{errors.New("no labs found (want <id>/lab.yaml)")}
	}
	var errs []error
	for _, id := range ids {
		l, doc, e := load(labs, id)
		errs = append(errs, e...)
		if l != nil {
			errs = append(errs, checkRefs(doc, l, refs)...)
		}
	}
	return errs
}

func checkRefs(doc *yamldoc.Doc, l *Lab, refs Refs) []error {
	var errs []error
	for i, page := range l.Lesson {
		for _, lang := range locale.All() {
			name := path.Join(string(lang), page+".md")
			if _, err := fs.Stat(refs.Content, name); err != nil {
				errs = append(errs, doc.Errorf(fmt.Sprintf("lesson[%d]", i), "lesson page content/%s not found", name))
			}
		}
	}
	q, qerrs := quiz.Load(refs.Quizzes, l.Quiz)
	if len(qerrs) > 0 {
		errs = append(errs, doc.Errorf("quiz", "quiz %q does not load", l.Quiz))
		return append(errs, qerrs...)
	}
	if q.Lab != "" && q.Lab != l.ID {
		errs = append(errs, doc.Errorf("quiz", "quiz %q belongs to lab %q", l.Quiz, q.Lab))
	}
	return errs
}
