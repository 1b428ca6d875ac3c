package room

import (
	"testing"

	"oplab.dev/oplab/internal/budget"
)

func TestPolicyDecide(t *testing.T) {
	t.Parallel()
	cost := Cost{Memory: 300 * MiB, CPU: 0.05, Clusters: 3}
	roomy := Headroom{MemAvailable: 8 << 30, IdleCores: 1.5, Cores: 2}
	p := Policy{MaxClusters: 10, MemoryMargin: 512 * MiB, CPUShare: 0.9}
	busy := Headroom{MemAvailable: 8 << 30, IdleCores: 0, Cores: 2}
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
		{"memory exactly fits with margin", p, Inputs{Headroom: Headroom{MemAvailable: 812 * MiB, Cores: 2}, Cost: cost}, Decision{Admit: true}},
		{"memory one byte short of the margin", p, Inputs{Headroom: Headroom{MemAvailable: 812*MiB - 1, Cores: 2}, Cost: cost}, Decision{Reason: ReasonMemory}},
		{"starting clusters reserve their memory", p, Inputs{Starting: 2, Headroom: Headroom{MemAvailable: 1400 * MiB, Cores: 2}, Cost: cost}, Decision{Reason: ReasonMemory}},
		{"starting clusters fit", p, Inputs{Starting: 2, Headroom: Headroom{MemAvailable: 1412 * MiB, Cores: 2}, Cost: cost}, Decision{Admit: true}},
		{"no idle cpu now is no reason to queue", p, Inputs{Live: 3, Headroom: busy, Cost: cost}, Decision{Admit: true}},
		{"running clusters' cpu fills the share", Policy{CPUShare: 0.9}, Inputs{Live: 31, Starting: 5, Headroom: busy, Cost: cost}, Decision{Reason: ReasonCPU}},
		{"running clusters' cpu exactly fills the share", Policy{CPUShare: 0.9}, Inputs{Live: 30, Starting: 5, Headroom: busy, Cost: Cost{CPU: 0.05}}, Decision{Admit: true}},
		{"no cpu rule", Policy{}, Inputs{Live: 1000, Headroom: busy, Cost: cost}, Decision{Admit: true}},
		{"idle cpu asked for and missing", Policy{MinIdleCores: 0.5}, Inputs{Headroom: Headroom{MemAvailable: 8 << 30, IdleCores: 0.4, Cores: 2}, Cost: cost}, Decision{Reason: ReasonCPU}},
		{"idle cpu asked for and there", Policy{MinIdleCores: 0.5}, Inputs{Headroom: Headroom{MemAvailable: 8 << 30, IdleCores: 0.5, Cores: 2}, Cost: cost}, Decision{Admit: true}},
		{"a second start fits two cores", Policy{StartCores: 1}, Inputs{Starting: 1, Headroom: roomy, Cost: cost}, Decision{Admit: true}},
		{"a third start waits on two cores", Policy{StartCores: 1}, Inputs{Starting: 2, Headroom: roomy, Cost: cost}, Decision{Reason: ReasonStarts}},
		{"one start is always allowed", Policy{StartCores: 4}, Inputs{Headroom: roomy, Cost: cost}, Decision{Admit: true}},
		{"no start rule", Policy{}, Inputs{Starting: 20, Headroom: roomy, Cost: cost}, Decision{Admit: true}},
		{"cap is checked before memory", p, Inputs{Live: 10, Headroom: Headroom{}, Cost: cost}, Decision{Reason: ReasonCap}},
		// 24 GiB, a 1 GiB budget and the 512 MiB margin: 23 clusters at
		// their ceilings, even while the measured cost would fit more.
		{"budgets fit the machine", Policy{Budget: 1 << 30, MemoryMargin: 512 * MiB}, Inputs{Live: 20, Starting: 2, Headroom: Headroom{MemTotal: 24 << 30, MemAvailable: 20 << 30, Cores: 2}, Cost: cost}, Decision{Admit: true}},
		{"no budget rule without the machine's total", Policy{Budget: 1 << 30}, Inputs{Live: 100, Headroom: roomy, Cost: cost}, Decision{Admit: true}},
		{"budgets would overcommit the machine", Policy{Budget: 1 << 30, MemoryMargin: 512 * MiB}, Inputs{Live: 21, Starting: 2, Headroom: Headroom{MemTotal: 24 << 30, MemAvailable: 20 << 30, Cores: 2}, Cost: cost}, Decision{Reason: ReasonBudget}},
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

// TestDefaultBudgetHoldsAClassOf30: on the 2-core, 24 GiB machine the
// project is measured on (its MemTotal, from /proc/meminfo), the default
// budget and margin admit a class of 30 learners' clusters and refuse the
// 31st, while the clusters' measured cost leaves memory for all of them.
// With the former default of 1 GiB the machine held 23, and a warm class
// of 30 never got its clusters (BenchmarkClassOf30).
func TestDefaultBudgetHoldsAClassOf30(t *testing.T) {
	t.Parallel()
	const memTotal = 24683748 << 10
	p := Policy{Budget: budget.DefaultMemory, MemoryMargin: DefaultMemoryMargin, CPUShare: DefaultCPUShare, StartCores: DefaultStartCores}
	cost := Cost{Memory: 460 * MiB, CPU: 0.03, Clusters: 1}
	admitted := 0
	for live := 0; live < 100; live++ {
		in := Inputs{Live: live, Headroom: Headroom{MemTotal: memTotal, MemAvailable: memTotal - uint64(live)*cost.Memory, Cores: 2}, Cost: cost}
		d := p.Decide(in)
		if !d.Admit {
			if d.Reason != ReasonBudget {
				t.Errorf("cluster %d refused for %q, want the budget rule", live+1, d.Reason)
			}
			break
		}
		admitted++
	}
	if admitted != 30 {
		t.Errorf("the default budget of %d MiB admits %d clusters on 24 GiB, want 30", budget.DefaultMemory/MiB, admitted)
	}
}
