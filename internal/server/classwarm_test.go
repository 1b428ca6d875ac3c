package server

import (
	"html/template"
	"strings"
	"testing"

	"oplab.dev/oplab/web"
)

// TestClassWarmFields renders the class form's warm-sessions block in
// both languages: an input per lab, named for class.ParseWarm, holding the
// class's number.
func TestClassWarmFields(t *testing.T) {
	cat, err := loadCatalogue(web.FS)
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := template.New("").Funcs(funcs(cat)).ParseFS(web.FS, "templates/*.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range langs {
		var b strings.Builder
		if err := tmpl.ExecuteTemplate(&b, "class-warm-fields", warmFields("edit-morning", l, []string{"failover", "rbac"}, map[string]int{"failover": 3})); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, want := range []string{
			`<input id="edit-morning-warm-failover" name="warm.failover" value="3"`,
			`<input id="edit-morning-warm-rbac" name="warm.rbac" value="0"`,
			cat.text(l, "classform.warm"),
		} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: the block lacks %q:\n%s", l, want, out)
			}
		}
		if strings.Contains(out, "[classform.") {
			t.Errorf("%s: a missing text:\n%s", l, out)
		}
	}
}
