package admission

import "testing"

func TestPolicyDecide(t *testing.T) {
	t.Parallel()
	cost := Cost{Memory: 300 * MiB, CPU: 0.05, Clusters: 3}
	roomy := Headroom{MemAvailable: 8 << 30, IdleCores: 1.5, Cores: 2}
	p := Policy{MaxClusters: 10, MemoryMargin: 512 * MiB, CPUMargin: 0.1}
	tests := []struct {
		name string
		p    Policy
		in   Inputs
		want Decision
	}{
		{"room for one more", p, Inputs{Live: 3, Headroom: roomy, Cost: cost}, Decision{Admit: true}},
		{"cap reached by live clusters", p, Inputs{Live: 10, Headroom: roomy, Cost: cost}, Decision{Reason: ReasonCap}},
		{"cap reached counting starts", p, Inputs{Live: 8, Starting: 2, Headroom: roomy, Cost: cost}, Decision{Reason: ReasonCap}},
		{"no cap", Policy{MemoryMargin: p.MemoryMargin}, Inputs{Live: 500, Headroom: roomy, Cost: cost}, Decision{Admit: true}},
		{"memory exactly fits with margin", p, Inputs{Headroom: Headroom{MemAvailable: 812 * MiB, IdleCores: 1}, Cost: cost}, Decision{Admit: true}},
		{"memory one byte short of the margin", p, Inputs{Headroom: Headroom{MemAvailable: 812*MiB - 1, IdleCores: 1}, Cost: cost}, Decision{Reason: ReasonMemory}},
		{"starting clusters reserve their memory", p, Inputs{Starting: 2, Headroom: Headroom{MemAvailable: 1400 * MiB, IdleCores: 1}, Cost: cost}, Decision{Reason: ReasonMemory}},
		{"starting clusters fit", p, Inputs{Starting: 2, Headroom: Headroom{MemAvailable: 1412 * MiB, IdleCores: 1}, Cost: cost}, Decision{Admit: true}},
		{"cpu busy", p, Inputs{Headroom: Headroom{MemAvailable: 8 << 30, IdleCores: 0.14}, Cost: cost}, Decision{Reason: ReasonCPU}},
		{"cpu just enough", p, Inputs{Headroom: Headroom{MemAvailable: 8 << 30, IdleCores: 0.15}, Cost: cost}, Decision{Admit: true}},
		{"cap is checked before memory", p, Inputs{Live: 10, Headroom: Headroom{}, Cost: cost}, Decision{Reason: ReasonCap}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.p.Decide(tt.in); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
