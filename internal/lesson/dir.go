package lesson

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"oplab.dev/oplab/internal/locale"
)

// PageIDs lists the page ids of one language in fsys (<lang>/<id>.md).
func PageIDs(fsys fs.FS, lang locale.Lang) ([]string, error) {
	entries, err := fs.ReadDir(fsys, string(lang))
	if err != nil {
		return nil, fmt.Errorf("list %s pages: %w", lang, err)
	}
	var ids []string
	for _, e := range entries {
		if !e.IsDir() && path.Ext(e.Name()) == ".md" {
			ids = append(ids, strings.TrimSuffix(e.Name(), ".md"))
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// Load reads and renders page id in language lang from fsys.
func (r *Renderer) Load(fsys fs.FS, lang locale.Lang, id string) (*Page, []error) {
	name := path.Join(string(lang), id+".md")
	src, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, []error{fmt.Errorf("read page %s: %w", name, err)}
	}
	return r.Render("content/"+name, id, lang, src)
}

// LoadAll renders every page of lang, sorted by front matter order.
func (r *Renderer) LoadAll(fsys fs.FS, lang locale.Lang) ([]*Page, []error) {
	ids, err := PageIDs(fsys, lang)
	if err != nil {
		return nil, []error{err}
	}
	var pages []*Page
	var errs []error
	for _, id := range ids {
		p, e := r.Load(fsys, lang, id)
		errs = append(errs, e...)
		if p != nil {
			pages = append(pages, p)
		}
	}
	sort.SliceStable(pages, func(i, j int) bool { return pages[i].Meta.Order < pages[j].Meta.Order })
	return pages, errs
}
