package engine

import (
	"encoding/json"
	"testing"
	"time"

	"oplab.dev/oplab/internal/jsonconv"
	"oplab.dev/oplab/internal/locale"
)

// TestReportJSON: a Report is what the timeline stores and what a page
// reads (docs/api.md's Report and CheckOutcome): elapsedMs in whole
// milliseconds, no recovery (a check's answer carries it once), and a
// result an older oplab stored, its time in nanoseconds under "elapsed",
// still reads back with its time.
func TestReportJSON(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 4, 9, 30, 0, 0, time.UTC)
	rep := Report{Results: []Result{{Kind: "primaryChanged", Weight: 2, Passed: true, Reason: "prod-db-1 took over", Polls: 3,
		Elapsed: jsonconv.Duration(jsonconv.SampleDuration)}, {Kind: "clusterReady", Weight: 1, Reason: "2/3 ready",
		Explain: locale.Text{En: "Wait for the replicas."}, Polls: 5}}, Score: 2, Total: 3, At: at, Recovery: 4 * time.Second}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"results":[{"kind":"primaryChanged","weight":2,"passed":true,"reason":"prod-db-1 took over","polls":3,"elapsedMs":1235},` +
		`{"kind":"clusterReady","weight":1,"passed":false,"reason":"2/3 ready","explain":{"en":"Wait for the replicas.","ko":""},"polls":5,"elapsedMs":0}],` +
		`"score":2,"total":3,"passed":false,"at":"2026-03-04T09:30:00Z"}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	for _, err := range jsonconv.Check(rep) {
		t.Error(err)
	}

	var back Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if got := back.Results[0].Elapsed.Duration(); got != 1235*time.Millisecond {
		t.Errorf("read back: got %s, want 1.235s", got)
	}
	var old Result
	if err := json.Unmarshal([]byte(`{"kind":"primaryChanged","weight":2,"passed":true,"reason":"ok","polls":1,"elapsed":250000000}`), &old); err != nil {
		t.Fatal(err)
	}
	if old.Elapsed.Duration() != 250*time.Millisecond || old.Kind != "primaryChanged" || !old.Passed || old.Weight != 2 {
		t.Errorf("a result stored in nanoseconds: got %+v, want primaryChanged, passed, weight 2, 250ms", old)
	}
}

// TestSelfTestJSONConvention: `oplab lab selftest -o json` writes a
// self-test report with docs/api.md's convention, its times in ...Ms.
func TestSelfTestJSONConvention(t *testing.T) {
	t.Parallel()
	for _, err := range jsonconv.Check(SelfTestReport{}) {
		t.Error(err)
	}
}
