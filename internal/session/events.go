package session

import (
	"encoding/json"
	"time"

	"oplab.dev/oplab/internal/engine"
	"oplab.dev/oplab/internal/store"
)

// Kinds of timeline events.
const (
	KindState     = "state"     // StateData: the session moved
	KindStep      = "step"      // StepData: one step of a long operation ended (or, unpersisted, started)
	KindExercise  = "exercise"  // AttemptData: an attempt at an exercise began
	KindSteady    = "steady"    // engine.Report: the steady-state gate
	KindChaos     = "chaos"     // ChaosData: chaos ran and its fault was confirmed (T0), or not
	KindCheck     = "check"     // CheckData: the goals were checked
	KindRecovered = "recovered" // AttemptData: every goal passed (T1, time to recovery)
	KindHint      = "hint"      // HintData: a hint was shown
	KindReset     = "reset"     // AttemptData: the exercise was reset
	KindQuiz      = "quiz"      // QuizData: a quiz was answered (graded, or kept after its grade was final)
	KindCluster   = "cluster"   // ClusterData: the cluster was created or deleted
	KindWatch     = "watch"     // WatchData: a Watcher saw the goals come to hold, or stop holding
	// KindQueue is never recorded: a start waiting for room on the
	// machine hears its place in the queue (Event.Queue) before its
	// session exists.
	KindQueue = "queue"
	// KindExtended: an instructor gave the session more time (ExtendData).
	KindExtended = "extended"
	// KindSleep: nobody looked at the session for a while and its cluster
	// was frozen or stopped (SleepData); KindWake: it woke (SleepData).
	KindSleep = "sleep"
	KindWake  = "wake"
	// KindBuild: the learner's module was built, and run or not
	// (BuildData), in a lab whose learner writes the controller.
	KindBuild = "build"
)

// ExtendData is the detail of an extended event: the time added, and
// all the time added to the session so far.
type ExtendData struct {
	By     time.Duration `json:"byNs"`
	Total  time.Duration `json:"totalNs"`
	Reason string        `json:"reason,omitempty"`
}

// The types below are the details of timeline events as the store keeps
// them (JSON in store.Event.Data); Timeline and Progress hand them out
// decoded into Event.

// WatchData is the detail of a watch event.
type WatchData struct {
	// Held is when the goals came to hold; zero when they stopped holding.
	Held time.Time `json:"held,omitzero"`
}

// StateData is the detail of a state event.
type StateData struct {
	From   State  `json:"from,omitempty"`
	To     State  `json:"to"`
	Reason string `json:"reason,omitempty"`
}

// StepData is one step of a long operation (creating the cluster, setup,
// chaos, reset).
type StepData struct {
	Phase   string        `json:"phase"`
	Kind    string        `json:"kind,omitempty"`
	Index   int           `json:"index"`
	Total   int           `json:"total,omitempty"`
	Message string        `json:"message"`
	Done    bool          `json:"done"`
	Error   string        `json:"error,omitempty"`
	Elapsed time.Duration `json:"elapsedNs,omitempty"`
}

// AttemptData carries the attempt at the time of the event.
type AttemptData struct {
	Attempt  *engine.Attempt `json:"attempt"`
	Recovery time.Duration   `json:"recoveryNs,omitempty"`
	// T1Source says how the attempt's T1 was found (see CheckResult).
	T1Source string `json:"t1Source,omitempty"`
}

// ChaosData is the detail of a chaos event.
type ChaosData struct {
	T0    time.Time     `json:"t0,omitzero"`
	Fault engine.Report `json:"fault"`
	Error string        `json:"error,omitempty"`
}

// CheckData is the detail of a check event.
type CheckData struct {
	Report engine.Report `json:"report"`
	// Late is true when the goals were checked after the exercise's time
	// limit had run out (counted from T0, or from the start without chaos).
	Late bool `json:"late,omitempty"`
}

// HintData is the detail of a hint event.
type HintData struct {
	Index int    `json:"index"`
	Tier  string `json:"tier"`
	// Unlock is what made it due; nil in events an older oplab recorded.
	Unlock *HintUnlock `json:"unlock,omitempty"`
}

// QuizData is the detail of a quiz event: what was answered and how it was
// graded.
type QuizData struct {
	Quiz    string              `json:"quiz"`
	Answers map[string][]string `json:"answers"`
	Correct int                 `json:"correct"`
	Total   int                 `json:"total"`
}

// ClusterData is the detail of a cluster event.
type ClusterData struct {
	Name    string `json:"name"`
	Deleted bool   `json:"deleted,omitempty"`
}

// Update is what a Progress function hears: a timeline event, recorded
// before it is reported (Seq > 0), or, for a step that has only started, a
// notice (Seq 0) whose end will be recorded. Updates are JSON-encodable and
// go to a browser as they come.
type Update = Event

// Progress receives Updates as a long operation goes; nil discards them.
// It is called on the goroutine of the Manager call it was given to.
type Progress func(Update)

// report reports ev; step, when set, is its step (which ev's data holds
// too, so only ev is read).
func (p Progress) report(ev *store.Event, _ *StepData) {
	if p != nil {
		p(eventView(*ev))
	}
}

// newEvent builds a timeline event with data encoded as JSON. The store
// cuts its texts and data to what an event keeps (store.MaxEventText,
// store.MaxEventData), whatever a learner put in them.
func newEvent(kind, exercise, msg string, data any) *store.Event {
	ev := &store.Event{Kind: kind, Exercise: exercise, Message: msg, At: time.Now().UTC()}
	if data != nil {
		// The data types above always encode.
		ev.Data, _ = json.Marshal(data)
	}
	return ev
}
