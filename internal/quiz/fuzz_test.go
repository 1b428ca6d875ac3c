package quiz

import (
	"os"
	"testing"
)

// FuzzParse feeds malformed quiz files to the decoder: errors, never panics.
func FuzzParse(f *testing.F) {
	sample, err := os.ReadFile("testdata/sample.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(sample)
	f.Add([]byte("questions: [{type: cluster, answer: {query: conditionReason}}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		q, errs := Parse("fuzz.yaml", data)
		if (q == nil) == (len(errs) == 0) {
			t.Fatalf("got quiz %v and errors %v; want exactly one of them", q != nil, errs)
		}
		if q != nil {
			_ = q.Public()
			if _, err := Grade(t.Context(), q, Answers{}, nil); err != nil {
				t.Fatalf("grade no answers: %v", err)
			}
		}
	})
}
