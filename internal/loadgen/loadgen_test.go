package loadgen

import (
	"testing"
	"time"
)

func TestQuantile(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		var ds []time.Duration
		for _, n := range ns {
			ds = append(ds, time.Duration(n)*time.Millisecond)
		}
		return ds
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	for _, tc := range []struct {
		ds   []time.Duration
		q    float64
		want time.Duration
	}{
		{nil, 0.5, 0},
		{ms(7), 0.95, 7 * time.Millisecond},
		{ms(1, 2, 3, 4), 0.5, 2 * time.Millisecond},
		{ms(hundred...), 0.95, 95 * time.Millisecond},
		{ms(hundred...), 0.5, 50 * time.Millisecond},
		{ms(hundred...), 1, 100 * time.Millisecond},
	} {
		if got := Quantile(tc.ds, tc.q); got != tc.want {
			t.Errorf("Quantile(%d values, %v): got %s, want %s", len(tc.ds), tc.q, got, tc.want)
		}
	}
}

func TestReport(t *testing.T) {
	r := Report{Outcomes: []Outcome{
		{Name: "a", Started: true, Served: true, StartToFirst: 3 * time.Second, Checks: []time.Duration{100 * time.Millisecond, 3 * time.Second}},
		{Name: "b", Started: true, StartToFirst: time.Second, Checks: []time.Duration{200 * time.Millisecond}},
		{Name: "c"}, // never started
	}}
	if got := r.Served(); got != 1 {
		t.Errorf("Served: got %d, want 1", got)
	}
	if got := r.StartTimes(); len(got) != 2 || got[0] != time.Second || got[1] != 3*time.Second {
		t.Errorf("StartTimes: got %v, want [1s 3s]", got)
	}
	if got := r.CheckTimes(); len(got) != 3 || got[0] != 100*time.Millisecond {
		t.Errorf("CheckTimes: got %v, want three, sorted", got)
	}
	// a's own p95 is its slow check; b's is 200ms: the worst is a's.
	if got := r.WorstLearnerCheckP95(); got != 3*time.Second {
		t.Errorf("WorstLearnerCheckP95: got %s, want 3s", got)
	}
}

// TestSamplerReadsThisMachine samples the real /proc while a goroutine
// keeps a core busy: the CPU share is above zero and memory is read.
func TestSamplerReadsThisMachine(t *testing.T) {
	s := StartSampler(50 * time.Millisecond)
	stop := time.Now().Add(300 * time.Millisecond)
	for time.Now().Before(stop) { // busy, so the busy share cannot be zero
	}
	st := s.Stop()
	if st.Samples < 2 {
		t.Fatalf("samples: got %d, want several in 300ms at 50ms", st.Samples)
	}
	if st.CPUPeak <= 0 || st.CPUPeak > 1 || st.CPUMean <= 0 || st.CPUMean > st.CPUPeak {
		t.Errorf("CPU: got mean %v peak %v, want 0 < mean <= peak <= 1", st.CPUMean, st.CPUPeak)
	}
	if st.MemUsedStart == 0 || st.MemUsedPeak < st.MemUsedStart {
		t.Errorf("memory: got start %d peak %d, want 0 < start <= peak", st.MemUsedStart, st.MemUsedPeak)
	}
}

func TestRunRefusesIncompleteOptions(t *testing.T) {
	if _, err := Run(t.Context(), Options{Base: "http://127.0.0.1:1", Lab: "failover", Learners: 1}); err == nil {
		t.Error("Run without a join code: got no error")
	}
}
