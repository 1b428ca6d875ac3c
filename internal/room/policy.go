package room

import "fmt"

// MiB is a mebibyte, in bytes.
const MiB = 1 << 20

// Cost is what one live cluster takes of the machine: its processes'
// memory (proportional set size, so binaries shared between clusters are
// counted once across them) and CPU (cores, averaged over the sampling
// window).
type Cost struct {
	Memory uint64  `json:"memoryBytes"`
	CPU    float64 `json:"cpuCores"`
	// Clusters is how many live clusters the figures are the mean of;
	// zero when nothing was live and the figures are the assumed ones.
	Clusters int `json:"clusters"`
}

// Headroom is what the machine has free: MemAvailable from
// /proc/meminfo, and the idle share of its cores from /proc/stat.
// MemTotal is all of its memory, what budgets are promised from.
type Headroom struct {
	MemTotal     uint64  `json:"memTotalBytes,omitempty"`
	MemAvailable uint64  `json:"memAvailableBytes"`
	IdleCores    float64 `json:"idleCores"`
	Cores        int     `json:"cores"`
}

// Inputs are the measured numbers one decision is made on.
type Inputs struct {
	// Live is the number of settled live clusters; Starting, those
	// admitted and still being made, whose cost the headroom does not
	// show yet.
	Live, Starting int
	Headroom       Headroom
	Cost           Cost
}

// Policy is the rule: one more cluster is admitted when the machine keeps
// its memory margin after giving it (and every cluster still starting)
// its measured cost, when the measured CPU of every live cluster and this
// one fits in the share of the cores clusters may have, and when the hard
// cap is not reached.
//
// CPU is judged by what clusters cost once running, not by the idle CPU
// of the moment: a machine busy with starts (or anything else) shows no
// idle CPU for minutes — measured here: 0 idle over 5 s at a load of 10
// on 2 cores — while starts still complete, only slower. MinIdleCores
// adds the momentary rule for a machine that must keep CPU for other work.
type Policy struct {
	// MaxClusters caps live plus starting clusters; no cap when zero.
	MaxClusters int
	// MemoryMargin is memory kept free for everything else (the server,
	// the page cache, a burst of a cluster's start).
	MemoryMargin uint64
	// CPUShare is the share of the machine's cores the clusters' running
	// cost may take in all; no CPU rule when zero.
	CPUShare float64
	// MinIdleCores, when set, queues a start while fewer cores than this
	// are idle.
	MinIdleCores float64
	// StartCores is the CPU one start takes while it runs; starts beyond
	// the cores it allows wait (one start is always allowed). No rule
	// when zero.
	StartCores float64
	// Budget is the memory every cluster may grow to (its cell's
	// ceiling, package budget): live and starting clusters are counted at
	// it, and one more is admitted only while the machine's memory, less
	// MemoryMargin, holds all of them at their ceilings, so no memory is
	// promised twice. No rule when zero, or when the source does not
	// know the machine's total (a host cluster's room, counted by
	// requests).
	Budget uint64
}

// Defaults: a memory margin of about what a cluster's start takes on top
// of its running cost, so a start admitted at the edge does not push the
// machine into swap; and a tenth of the cores left for the server and
// the learners' work.
//
// A start is CPU-bound from the cluster's first process to the lab's first
// exercise, near one core on this 2-core machine; its running cost comes
// after. Without a rule for it, a class of 30 starting within 10 s was
// admitted whole (30 running clusters fit the CPU share) and 27 of the API
// servers were not healthy after 90 s (BenchmarkClassOf30, cold).
const (
	DefaultMemoryMargin = 512 * MiB
	DefaultCPUShare     = 0.9
	DefaultStartCores   = 1.0
)

// Decision is the rule's answer: Admit, or why not.
type Decision struct {
	Admit bool
	// Reason names the limit that queued the start: ReasonCap,
	// ReasonMemory, ReasonCPU, ReasonStarts or ReasonBudget; "" when
	// admitted.
	Reason string
}

// Reasons a start is queued.
const (
	ReasonCap    = "max-clusters"
	ReasonMemory = "memory"
	ReasonCPU    = "cpu"
	ReasonStarts = "starts"
	ReasonBudget = "budget"
)

// Decide applies p to in.
func (p Policy) Decide(in Inputs) Decision {
	if p.MaxClusters > 0 && in.Live+in.Starting >= p.MaxClusters {
		return Decision{Reason: ReasonCap}
	}
	n := uint64(in.Starting + 1)
	if in.Headroom.MemAvailable < n*in.Cost.Memory+p.MemoryMargin {
		return Decision{Reason: ReasonMemory}
	}
	if p.Budget > 0 && in.Headroom.MemTotal > 0 && uint64(in.Live+in.Starting+1)*p.Budget+p.MemoryMargin > in.Headroom.MemTotal {
		return Decision{Reason: ReasonBudget}
	}
	// Within a thousandth of a core is enough: the figures are sampled,
	// and sums of them carry rounding.
	committed := float64(in.Live+in.Starting+1) * in.Cost.CPU
	if p.CPUShare > 0 && committed > float64(in.Headroom.Cores)*p.CPUShare+1e-3 {
		return Decision{Reason: ReasonCPU}
	}
	if p.MinIdleCores > 0 && in.Headroom.IdleCores+1e-3 < p.MinIdleCores {
		return Decision{Reason: ReasonCPU}
	}
	if p.StartCores > 0 && in.Starting > 0 && float64(in.Starting+1)*p.StartCores > float64(in.Headroom.Cores)+1e-3 {
		return Decision{Reason: ReasonStarts}
	}
	return Decision{Admit: true}
}

func (d Decision) String() string {
	if d.Admit {
		return "admit"
	}
	return fmt.Sprintf("queue (%s)", d.Reason)
}
