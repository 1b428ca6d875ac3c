package admission

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
type Headroom struct {
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
// its margins after giving it (and every cluster still starting) its
// measured cost, and the hard cap is not reached.
type Policy struct {
	// MaxClusters caps live plus starting clusters; no cap when zero.
	MaxClusters int
	// MemoryMargin is memory kept free for everything else (the server,
	// the page cache, a burst of a cluster's start).
	MemoryMargin uint64
	// CPUMargin is idle CPU (cores) kept free.
	CPUMargin float64
}

// Default margins: about what one more cluster's start takes, so a start
// admitted at the edge does not push the machine into swap or starve the
// sessions already running.
const (
	DefaultMemoryMargin = 512 * MiB
	DefaultCPUMargin    = 0.05
)

// Decision is the rule's answer: Admit, or why not.
type Decision struct {
	Admit bool
	// Reason names the limit that queued the start: ReasonCap,
	// ReasonMemory or ReasonCPU; "" when admitted.
	Reason string
}

// Reasons a start is queued.
const (
	ReasonCap    = "max-clusters"
	ReasonMemory = "memory"
	ReasonCPU    = "cpu"
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
	// Within a thousandth of a core is enough: the figures are sampled,
	// and sums of them carry rounding.
	if in.Headroom.IdleCores+1e-3 < float64(n)*in.Cost.CPU+p.CPUMargin {
		return Decision{Reason: ReasonCPU}
	}
	return Decision{Admit: true}
}

func (d Decision) String() string {
	if d.Admit {
		return "admit"
	}
	return fmt.Sprintf("queue (%s)", d.Reason)
}
