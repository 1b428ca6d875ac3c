package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"oplab.dev/oplab/internal/session"
)

// TestLabList lists the labs for a learner who has started none, in both
// output formats and both languages.
func TestLabList(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	out, err := runLab(t, "lab", "list", "-o", "json", "--lang", "ko", "--data-dir", data)
	if err != nil {
		t.Fatal(err)
	}
	var labs []session.LabEntry
	if err := json.Unmarshal([]byte(out), &labs); err != nil {
		t.Fatalf("lab list -o json: %v\n%s", err, out)
	}
	byID := map[string]session.LabEntry{}
	for _, l := range labs {
		byID[l.ID] = l
	}
	fo, ok := byID["failover"]
	if !ok || fo.Lang != "ko" || fo.Title == "" || fo.Exercises != 2 || fo.TimeLimit <= 0 || fo.Progress.State != session.ProgressNotStarted {
		t.Errorf("failover: got %+v, want it in Korean, 2 exercises, a time, not started", fo)
	}
	if !strings.Contains(out, `"timeLimitMs"`) || !strings.Contains(out, `"progress"`) {
		t.Errorf("JSON lacks timeLimitMs or progress:\n%s", out)
	}
	out, err = runLab(t, "lab", "list", "--data-dir", data)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "UP TO") || !strings.Contains(out, "failover") || !strings.Contains(out, "oplab lab start ID") {
		t.Errorf("lab list:\n%s", out)
	}
	if _, err := runLab(t, "lab", "list", "--lang", "fr", "--data-dir", data); err == nil || !strings.Contains(err.Error(), `unknown language "fr"`) {
		t.Errorf("lab list --lang fr: got %v", err)
	}
}
