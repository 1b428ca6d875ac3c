package lab

import (
	"os"
	"testing"

	"oplab.dev/oplab/internal/yamldoc"
)

// FuzzParse feeds malformed lab files to the decoder: it must return errors,
// never panic, and every error must name the file.
func FuzzParse(f *testing.F) {
	demo, err := os.ReadFile("testdata/labs/demo/lab.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(demo)
	f.Add([]byte(""))
	f.Add([]byte("kind: Lab\nexercises: [{chaos: [{kind: applyManifest, params: {manifest: \"a: [\"}}]}]"))
	f.Add([]byte("a: &x [*x]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, errs := Parse("fuzz.yaml", data)
		if l == nil && len(errs) == 0 {
			t.Fatal("got neither a lab nor an error")
		}
		if l != nil && len(errs) > 0 {
			t.Fatalf("got a lab and errors %v", errs)
		}
		for _, e := range errs {
			if ye := yamldoc.AsErrors([]error{e}); len(ye) != 1 || ye[0].File != "fuzz.yaml" {
				t.Errorf("error %q does not name the file", e)
			}
		}
	})
}
