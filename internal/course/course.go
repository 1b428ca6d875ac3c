package course

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/internal/lesson"
	"oplab.dev/oplab/internal/locale"
	"oplab.dev/oplab/internal/quiz"
	"oplab.dev/oplab/internal/yamldoc"
)

// Sources are the three data folders of a course.
type Sources struct {
	Labs    fs.FS // <id>/lab.yaml
	Content fs.FS // <lang>/<page>.md
	Quizzes fs.FS // <id>.yaml
}

// Dir returns the sources of a repository checkout at root (its labs,
// content and quizzes folders).
func Dir(root string) (Sources, error) {
	var s Sources
	for _, d := range []struct {
		name string
		fs   *fs.FS
	}{{"labs", &s.Labs}, {"content", &s.Content}, {"quizzes", &s.Quizzes}} {
		p := filepath.Join(root, d.name)
		if st, err := os.Stat(p); err != nil || !st.IsDir() {
			return s, fmt.Errorf("course folder %s: not a directory", p)
		}
		*d.fs = os.DirFS(p)
	}
	return s, nil
}

// Validate checks every lab, page and quiz and every reference between
// them, and returns every problem found.
func Validate(src Sources) []error {
	_, _, errs := validate(src)
	return errs
}

// validate is Validate returning the labs and quizzes it parsed, which are
// the course's when there are no errors.
func validate(src Sources) ([]*lab.Lab, map[string]*quiz.Quiz, []error) {
	errs := lab.ValidateDir(src.Labs, lab.Refs{Content: src.Content, Quizzes: src.Quizzes})
	labs, _ := lab.LoadAll(src.Labs)
	// A lab that exists but does not validate is reported once, above,
	// not again by every page and quiz that names it.
	ids, _ := lab.IDs(src.Labs)
	labIDs := map[string]bool{}
	for _, id := range ids {
		labIDs[id] = true
	}
	quizzes, qerrs := quiz.LoadAll(src.Quizzes)
	errs = append(errs, dedupe(errs, qerrs)...)
	errs = append(errs, checkQuizLabs(quizzes, labIDs)...)
	errs = append(errs, checkPages(src.Content, labIDs)...)
	errs = append(errs, checkLabText(labs, src.Content)...)
	return labs, quizzes, errs
}

// dedupe drops from more the errors already in have (a quiz a lab refers
// to is loaded twice).
func dedupe(have, more []error) []error {
	seen := map[string]bool{}
	for _, e := range have {
		seen[e.Error()] = true
	}
	var out []error
	for _, e := range more {
		if !seen[e.Error()] {
			out = append(out, e)
		}
	}
	return out
}

func checkQuizLabs(quizzes map[string]*quiz.Quiz, labIDs map[string]bool) []error {
	var errs []error
	for id, q := range quizzes {
		if q.Lab != "" && !labIDs[q.Lab] {
			errs = append(errs, &yamldoc.Error{File: "quizzes/" + id + ".yaml", Path: "lab", Msg: fmt.Sprintf("lab %q does not exist", q.Lab)})
		}
	}
	return errs
}

// checkPages renders every page in every language and checks that the
// languages have the same pages with the same order and lab, that links
// resolve and that labs named in front matter exist.
func checkPages(content fs.FS, labIDs map[string]bool) []error {
	r := lesson.New()
	var errs []error
	pages := map[locale.Lang]map[string]*lesson.Page{}
	for _, lang := range locale.All() {
		ps, e := r.LoadAll(content, lang)
		errs = append(errs, e...)
		ids, err := lesson.PageIDs(content, lang)
		if err != nil {
			errs = append(errs, err)
		}
		pages[lang] = map[string]*lesson.Page{}
		for _, p := range ps {
			pages[lang][p.ID] = p
		}
		for _, id := range ids {
			for _, other := range locale.All() {
				if _, err := fs.Stat(content, fmt.Sprintf("%s/%s.md", other, id)); err != nil {
					errs = append(errs, fmt.Errorf("content/%s/%s.md: page has no %s version (want content/%s/%s.md)", lang, id, other, other, id))
				}
			}
		}
	}
	for _, lang := range locale.All() {
		for _, p := range pages[lang] {
			errs = append(errs, checkPage(p, pages, labIDs)...)
		}
	}
	return errs
}

func checkPage(p *lesson.Page, pages map[locale.Lang]map[string]*lesson.Page, labIDs map[string]bool) []error {
	file := fmt.Sprintf("content/%s/%s.md", p.Lang, p.ID)
	var errs []error
	for _, l := range p.Links {
		if _, ok := pages[p.Lang][l.Page]; !ok {
			errs = append(errs, &yamldoc.Error{File: file, Line: l.Line, Msg: fmt.Sprintf("link to page %q, which does not exist in %s", l.Page, p.Lang)})
		}
	}
	if p.Meta.Lab != "" && !labIDs[p.Meta.Lab] {
		errs = append(errs, &yamldoc.Error{File: file, Line: 2, Path: "lab", Msg: fmt.Sprintf("lab %q does not exist", p.Meta.Lab)})
	}
	if p.Lang == locale.En {
		return errs
	}
	en, ok := pages[locale.En][p.ID]
	if !ok {
		return errs
	}
	if en.Meta.Order != p.Meta.Order || en.Meta.Lab != p.Meta.Lab {
		errs = append(errs, &yamldoc.Error{File: file, Line: 2, Msg: fmt.Sprintf("front matter order/lab (%d, %q) differ from the English page's (%d, %q)", p.Meta.Order, p.Meta.Lab, en.Meta.Order, en.Meta.Lab)})
	}
	if !slices.Equal(en.Commands, p.Commands) {
		errs = append(errs, &yamldoc.Error{File: file, Msg: "console commands differ from the English page's"})
	}
	return errs
}
