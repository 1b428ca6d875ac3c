package quiz

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestParseAnswer(t *testing.T) {
	t.Parallel()
	choices := []PublicChoice{{ID: "a"}, {ID: "b"}, {ID: "c"}}
	single := PublicQuestion{Type: Single, Choices: choices}
	multi := PublicQuestion{Type: Multiple, Choices: choices}
	cluster := PublicQuestion{Type: Cluster}
	tests := []struct {
		name string
		q    PublicQuestion
		text string
		want string
		err  string
	}{
		{"single", single, "b\n", "b", ""},
		{"single, upper case and spaces", single, "  B \n", "b", ""},
		{"single, two", single, "a,b", "", "choose exactly one"},
		{"single, not a choice", single, "d", "", `"d" is not a choice (choose from a, b, c)`},
		{"empty", single, "\n", "", "give an answer"},
		{"multiple, commas", multi, "a,c", "a c", ""},
		{"multiple, spaces and repeats", multi, "c a  c", "c a", ""},
		{"multiple, one bad", multi, "a, x", "", `"x" is not a choice (choose from a, b, c)`},
		{"cluster", cluster, " pod/prod-db-1 \n", "pod/prod-db-1", ""},
		{"cluster, empty", cluster, "  ", "", "give an answer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseAnswer(tt.q, tt.text)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
				if !errors.Is(err, ErrBadAnswer) {
					t.Errorf("error %v does not wrap ErrBadAnswer", err)
				}
			}
			if strings.Join(got, " ") != tt.want || !strings.HasSuffix(gotErr, tt.err) || (tt.err == "") != (err == nil) {
				t.Errorf("got %q, %q; want %q, an error ending %q", got, gotErr, tt.want, tt.err)
			}
		})
	}
}

// TestGradeRefusesBadAnswers: answers that are not answers to the quiz's
// questions are an error naming the problem, and nothing is graded.
func TestGradeRefusesBadAnswers(t *testing.T) {
	t.Parallel()
	q := loadSample(t)
	cluster := fakeCluster{"currentPrimary": "prod-db-1", "readyReplicas": "2"}
	tests := []struct {
		name    string
		answers Answers
		want    string
	}{
		{"unknown question", Answers{"pick-one": {"a"}, "nope": {"a"}}, `no question "nope"`},
		{"unknown choice", Answers{"pick-one": {"z"}}, `question pick-one: "z" is not a choice`},
		{"single with two picks", Answers{"pick-one": {"a", "b"}}, "question pick-one: got 2 choices, want exactly one"},
		{"repeated choice", Answers{"pick-many": {"a", "a"}}, `choice "a" given twice`},
		{"empty list", Answers{"pick-many": {}}, "question pick-many: no answer given"},
		{"empty value", Answers{"who-is-primary": {" "}}, "question who-is-primary: an empty answer"},
		{"two values", Answers{"how-many": {"1", "2"}}, "question how-many: got 2 values, want one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := Grade(context.Background(), q, tt.answers, cluster)
			if !errors.Is(err, ErrBadAnswer) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an ErrBadAnswer containing %q", err, tt.want)
			}
			if r.Total != 0 || len(r.Questions) != 0 {
				t.Errorf("got a graded result %+v along with the error", r)
			}
		})
	}
}
