package server

import (
	"io/fs"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"oplab.dev/oplab/web"
)

func TestCatalogueHasEveryKeyInEveryLanguage(t *testing.T) {
	cat, err := loadCatalogue(web.FS)
	if err != nil {
		t.Fatal(err)
	}
	en := slices.Sorted(maps.Keys(cat["en"]))
	for _, l := range langs {
		got := slices.Sorted(maps.Keys(cat[l]))
		if !slices.Equal(got, en) {
			t.Errorf("%s.json keys differ from en.json: got %d keys, want %d (%v)", l, len(got), len(en), symmetricDiff(got, en))
		}
		for k, v := range cat[l] {
			if strings.TrimSpace(v) == "" {
				t.Errorf("%s.json: %s is empty", l, k)
			}
		}
	}
}

func symmetricDiff(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, "+"+x)
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			out = append(out, "-"+x)
		}
	}
	return out
}

var (
	templateKey = regexp.MustCompile(`\bt (?:\.Lang|\$l|"en"|"ko") "([^"]+)"`)
	scriptKey   = regexp.MustCompile("\\bt\\(['\"`]([a-z0-9.-]+)['\"`]")
	scriptState = regexp.MustCompile("t\\(`state\\.\\$\\{")
	action      = regexp.MustCompile(`(?s)\{\{.*?\}\}`)
	tag         = regexp.MustCompile(`(?s)<[^>]*>`)
	shownAttr   = regexp.MustCompile(`\b(?:aria-label|title|placeholder|alt)="([^"]*)"`)
	jsonBlock   = regexp.MustCompile(`(?s)<script[^>]*>.*?</script>`)
)

// TestEveryShownStringIsInTheCatalogue: templates show no text of their
// own (only {{t}} lookups and data), every key they and the scripts use is
// in the catalogue.
func TestEveryShownStringIsInTheCatalogue(t *testing.T) {
	cat, err := loadCatalogue(web.FS)
	if err != nil {
		t.Fatal(err)
	}
	tmpls, _ := fs.Glob(web.FS, "templates/*.html")
	scripts, _ := fs.Glob(web.FS, "static/*.js")
	if len(tmpls) < 5 || len(scripts) < 5 {
		t.Fatalf("found %d templates and %d scripts, want the page's", len(tmpls), len(scripts))
	}
	for _, name := range tmpls {
		b, _ := fs.ReadFile(web.FS, name)
		src := string(b)
		for _, m := range templateKey.FindAllStringSubmatch(src, -1) {
			if _, ok := cat["en"][m[1]]; !ok {
				t.Errorf("%s uses key %q, not in the catalogue", name, m[1])
			}
		}
		for _, m := range shownAttr.FindAllStringSubmatch(action.ReplaceAllString(src, ""), -1) {
			if hasLetters(m[1]) {
				t.Errorf("%s: attribute text %q is not from the catalogue", name, m[0])
			}
		}
		text := tag.ReplaceAllString(jsonBlock.ReplaceAllString(action.ReplaceAllString(src, " "), " "), " ")
		for _, line := range strings.Split(text, "\n") {
			if hasLetters(line) {
				t.Errorf("%s: visible text %q is not from the catalogue", name, strings.TrimSpace(line))
			}
		}
	}
	for _, name := range scripts {
		b, _ := fs.ReadFile(web.FS, name)
		for _, m := range scriptKey.FindAllStringSubmatch(string(b), -1) {
			if _, ok := cat["en"]["js."+m[1]]; !ok {
				t.Errorf("%s uses key %q, not in the catalogue as js.%s", name, m[1], m[1])
			}
		}
		if scriptState.Match(b) {
			for _, st := range []string{"provisioning", "ready", "in-exercise", "completed", "failed", "expired"} {
				if _, ok := cat["en"]["js.state."+st]; !ok {
					t.Errorf("%s shows state names, but js.state.%s is not in the catalogue", name, st)
				}
			}
		}
	}
}

func hasLetters(s string) bool {
	return strings.IndexFunc(s, unicode.IsLetter) >= 0
}

// TestPagesInBothLanguages renders every page in each language and looks
// for a missing key ("[key]") and for the language's own words.
func TestPagesInBothLanguages(t *testing.T) {
	ts := newTestServer(t)
	pages := []string{"/", "/labs/failover", "/sessions/alice-1/summary", "/sessions/alice-1/quiz", "/labs/nope"}
	want := map[string]string{"en": "Sign out", "ko": "로그아웃"}
	for _, l := range langs {
		for _, p := range pages {
			code, body, _ := do(t, ts.client, "GET", ts.URL+p, "", map[string]string{"Accept-Language": l + ";q=0.9"})
			if p != "/labs/nope" && code != http.StatusOK || p == "/labs/nope" && code != http.StatusNotFound {
				t.Errorf("%s GET %s: got %d", l, p, code)
			}
			if m := regexp.MustCompile(`\[[a-z]+\.[a-z.]+\]`).FindString(body); m != "" {
				t.Errorf("%s GET %s: shows missing key %s", l, p, m)
			}
			if !strings.Contains(body, want[l]) || !strings.Contains(body, `<html lang="`+l+`">`) {
				t.Errorf("%s GET %s: not in %s", l, p, l)
			}
		}
	}
}

func TestLanguageChoice(t *testing.T) {
	ts := newTestServer(t)
	for _, tc := range []struct{ accept, cookie, want string }{
		{"", "", "en"},
		{"ko-KR,ko;q=0.9,en;q=0.8", "", "ko"},
		{"fr-FR,fr;q=0.9", "", "en"},
		{"ko", "en", "en"},
		{"en", "ko", "ko"},
		{"en", "xx", "en"},
	} {
		r, _ := http.NewRequest("GET", "/", nil)
		r.Header.Set("Accept-Language", tc.accept)
		if tc.cookie != "" {
			r.AddCookie(&http.Cookie{Name: langCookie, Value: tc.cookie})
		}
		if got := pageLang(r); got != tc.want {
			t.Errorf("Accept-Language %q, cookie %q: got %s, want %s", tc.accept, tc.cookie, got, tc.want)
		}
	}
	// Switching is remembered, and goes back to the page, never off-site.
	noFollow := *ts.client
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	for _, tc := range []struct{ next, want string }{
		{"/labs/failover", "/labs/failover"},
		{"//evil.example/x", "/"},
		{"https://evil.example/", "/"},
		{`/\evil.example`, "/"},
	} {
		form := "lang=ko&_csrf=" + ts.csrf + "&next=" + tc.next
		code, _, h := do(t, &noFollow, "POST", ts.URL+"/lang", form, map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
		if code != http.StatusSeeOther || h.Get("Location") != tc.want {
			t.Errorf("next=%q: got %d to %q, want 303 to %q", tc.next, code, h.Get("Location"), tc.want)
		}
	}
	_, body, _ := do(t, ts.client, "GET", ts.URL+"/", "", map[string]string{"Accept-Language": "en"})
	if !strings.Contains(body, "로그아웃") {
		t.Error("after switching to Korean the catalogue is not in Korean")
	}
}
