package course

import (
	"fmt"
	"io/fs"

	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/internal/lesson"
	"oplab.dev/oplab/internal/locale"
	"oplab.dev/oplab/internal/yamldoc"
)

// checkLabText renders each exercise's instructions and hints as markdown
// in every language, so a broken console block or a link to a page that
// does not exist is caught as in a lesson page.
func checkLabText(labs []*lab.Lab, content fs.FS) []error {
	r := lesson.New()
	var errs []error
	for _, l := range labs {
		file := fmt.Sprintf("labs/%s/lab.yaml", l.ID)
		for i, ex := range l.Exercises {
			p := fmt.Sprintf("exercises[%d]", i)
			errs = append(errs, checkText(r, content, file, p+".instructions", ex.Instructions)...)
			for j, h := range ex.Hints {
				errs = append(errs, checkText(r, content, file, fmt.Sprintf("%s.hints[%d].text", p, j), h.Text)...)
			}
		}
	}
	return errs
}

func checkText(r *lesson.Renderer, content fs.FS, file, path string, t locale.Text) []error {
	var errs []error
	for _, lang := range locale.All() {
		lp := path + "." + string(lang)
		f, e := r.RenderFragment(file, lang, []byte(t.In(lang)))
		for _, err := range yamldoc.AsErrors(e) {
			err.Path, err.Line = lp, 0
			errs = append(errs, err)
		}
		if f == nil {
			continue
		}
		for _, link := range f.Links {
			if _, err := fs.Stat(content, fmt.Sprintf("%s/%s.md", lang, link.Page)); err != nil {
				errs = append(errs, &yamldoc.Error{File: file, Path: lp, Msg: fmt.Sprintf("link to page %q, which does not exist in %s", link.Page, lang)})
			}
		}
	}
	return errs
}
