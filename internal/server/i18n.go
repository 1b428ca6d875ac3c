package server

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"slices"
	"strings"

	"golang.org/x/text/language"
)

// langs are the page languages, the first the default.
var langs = []string{"en", "ko"}

var langMatcher = language.NewMatcher([]language.Tag{language.English, language.Korean})

// catalogue holds every string a page shows, per language: web/i18n/<lang>.json.
type catalogue map[string]map[string]string

func loadCatalogue(web fs.FS) (catalogue, error) {
	cat := catalogue{}
	for _, l := range langs {
		b, err := fs.ReadFile(web, "i18n/"+l+".json")
		if err != nil {
			return nil, fmt.Errorf("load strings: %w", err)
		}
		m := map[string]string{}
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("load strings i18n/%s.json: %w", l, err)
		}
		cat[l] = m
	}
	return cat, nil
}

// text returns key's string in lang; a key missing from the catalogue shows
// as itself, bracketed, so the tests and a reader notice.
func (c catalogue) text(lang, key string) string {
	if s, ok := c[lang][key]; ok {
		return s
	}
	if s, ok := c[langs[0]][key]; ok {
		return s
	}
	return "[" + key + "]"
}

// forScripts returns the strings the page's scripts use (keys "js.*").
func (c catalogue) forScripts(lang string) map[string]string {
	out := map[string]string{}
	for k, v := range c[lang] {
		if strings.HasPrefix(k, "js.") {
			out[strings.TrimPrefix(k, "js.")] = v
		}
	}
	return out
}

// pageLang is the language of the page: the learner's choice (a cookie),
// else the browser's Accept-Language, else English.
func pageLang(r *http.Request) string {
	if ck, err := r.Cookie(langCookie); err == nil && slices.Contains(langs, ck.Value) {
		return ck.Value
	}
	tags, _, _ := language.ParseAcceptLanguage(r.Header.Get("Accept-Language"))
	_, i, conf := langMatcher.Match(tags...)
	if conf == language.No {
		return langs[0]
	}
	return langs[i]
}
