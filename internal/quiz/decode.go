package quiz

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"oplab.dev/oplab/internal/yamldoc"
)

// Parse decodes and validates one quiz file. It returns the quiz only when
// there are no errors; every error is a *yamldoc.Error.
func Parse(file string, data []byte) (*Quiz, []error) {
	doc, err := yamldoc.Parse(file, data)
	if err != nil {
		return nil, []error{err}
	}
	var q Quiz
	if errs := doc.Decode(&q); len(errs) > 0 {
		return nil, errs
	}
	if errs := validate(doc, &q); len(errs) > 0 {
		return nil, errs
	}
	return &q, nil
}

// Load reads quiz id from fsys, where it is the file <id>.yaml.
func Load(fsys fs.FS, id string) (*Quiz, []error) {
	name := id + ".yaml"
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, []error{fmt.Errorf("read quiz %q: %w", id, err)}
	}
	// Errors name the file as it sits in the repository.
	file := "quizzes/" + name
	q, errs := Parse(file, data)
	if len(errs) == 0 && q.ID != id {
		return nil, []error{&yamldoc.Error{File: file, Path: "id", Msg: fmt.Sprintf("id %q does not match file name %q", q.ID, id)}}
	}
	return q, errs
}

// IDs lists the quiz ids in fsys (the *.yaml files at its top level).
func IDs(fsys fs.FS) ([]string, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("list quizzes: %w", err)
	}
	var ids []string
	for _, e := range entries {
		if !e.IsDir() && path.Ext(e.Name()) == ".yaml" {
			ids = append(ids, strings.TrimSuffix(e.Name(), ".yaml"))
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// LoadAll loads and validates every quiz in fsys.
func LoadAll(fsys fs.FS) (map[string]*Quiz, []error) {
	ids, err := IDs(fsys)
	if err != nil {
		return nil, []error{err}
	}
	out := map[string]*Quiz{}
	var errs []error
	for _, id := range ids {
		q, e := Load(fsys, id)
		errs = append(errs, e...)
		if q != nil {
			out[id] = q
		}
	}
	return out, errs
}
