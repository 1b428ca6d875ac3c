package session

import (
	"encoding/json"
	"time"

	"oplab.dev/oplab/internal/engine"
	"oplab.dev/oplab/internal/jsonconv"
	"oplab.dev/oplab/internal/store"
)

// The types in this file are what the Manager hands out. Their JSON is a
// contract with the front ends (a browser sees it): camelCase fields,
// times in RFC 3339, durations as whole milliseconds in fields named ...Ms
// (jsonconv.Duration). They hold none of the store's types, so it can
// change without a browser noticing; a verdict of checks is the engine's
// own Report (and its Results), the one type of it, recorded in the
// timeline and handed out as it is.

// Attempt is the learner's current try at an exercise: when it began,
// when its fault took effect (T0) and when every goal first passed (T1).
type Attempt struct {
	Exercise string    `json:"exercise"`
	Started  time.Time `json:"started"`
	T0       time.Time `json:"t0,omitzero"`
	T1       time.Time `json:"t1,omitzero"`
	// T1Source says how T1 was found (T1Watched, T1Evidence, T1Check);
	// set in a Status.
	T1Source string `json:"t1Source,omitempty"`
	// Away is how long the session slept since the attempt's clock began
	// (T0, or its start without chaos) up to T1 or now: the page's clock
	// leaves it out, as the time to recovery does.
	Away jsonconv.Duration `json:"awayMs,omitempty"`
}

func attemptView(a *engine.Attempt) *Attempt {
	if a == nil {
		return nil
	}
	end := a.T1
	if end.IsZero() {
		end = time.Now()
	}
	return &Attempt{Exercise: a.Exercise, Started: a.Started, T0: a.T0, T1: a.T1, Away: jsonconv.Millis(a.AwayBetween(since(a), end))}
}

// Result kinds.
const (
	ResultExercise = store.ResultExercise
	ResultQuiz     = store.ResultQuiz
)

// Result is the outcome that counts of one graded item of a session: an
// exercise (its latest check) or a quiz (its last graded answers).
type Result struct {
	Kind   string `json:"kind"` // ResultExercise or ResultQuiz
	Item   string `json:"item"` // exercise or quiz id
	Score  int    `json:"score"`
	Total  int    `json:"total"`
	Passed bool   `json:"passed"`
	// Recovery is the time to recovery (T1 − T0) of an exercise with
	// chaos that passed; zero otherwise.
	Recovery jsonconv.Duration `json:"recoveryMs,omitempty"`
	At       time.Time         `json:"at"`
}

func resultView(r store.Result) Result {
	return Result{Kind: r.Kind, Item: r.Item, Score: r.Score, Total: r.Total, Passed: r.Passed, Recovery: jsonconv.Millis(r.Recovery), At: r.At}
}

// Step is one step of a long operation (creating the cluster, setup,
// chaos, reset), as it starts (Done false) and as it ends.
type Step struct {
	Phase   string            `json:"phase"`
	Kind    string            `json:"kind,omitempty"`
	Index   int               `json:"index"`
	Total   int               `json:"total,omitempty"`
	Message string            `json:"message"`
	Done    bool              `json:"done"`
	Error   string            `json:"error,omitempty"`
	Elapsed jsonconv.Duration `json:"elapsedMs,omitempty"`
}

// QueueData is a waiting start's place: Position of Length (1 is next),
// about Estimate to wait (0: nothing measured yet allows an estimate),
// and the limit that holds the queue (admission's reasons: max-clusters,
// memory, cpu).
type QueueData struct {
	Position int               `json:"position"`
	Length   int               `json:"length"`
	Estimate jsonconv.Duration `json:"estimateMs,omitempty"`
	Reason   string            `json:"reason,omitempty"`
}

// Extension is the detail of an extended event: the time added, and all
// the time added to the session so far.
type Extension struct {
	By     jsonconv.Duration `json:"byMs"`
	Total  jsonconv.Duration `json:"totalMs"`
	Reason string            `json:"reason,omitempty"`
}

// QuizScore is the score of an answered quiz.
type QuizScore struct {
	Quiz    string `json:"quiz"`
	Correct int    `json:"correct"`
	Total   int    `json:"total"`
}

// Event is one entry of a session's timeline, with the details of its
// kind (see the Kind constants) decoded: only the fields of its kind are
// set.
type Event struct {
	// Seq orders a session's events; it is 0 for a step that has only
	// started, which is reported but not recorded (its end is).
	Seq      int64     `json:"seq"`
	At       time.Time `json:"at"`
	Kind     string    `json:"kind"`
	Exercise string    `json:"exercise,omitempty"`
	// Message is a one-line summary a person can read.
	Message string `json:"message"`

	State    *StateData        `json:"state,omitempty"`      // state
	Step     *Step             `json:"step,omitempty"`       // step
	Attempt  *Attempt          `json:"attempt,omitempty"`    // exercise, recovered, reset
	Report   *engine.Report    `json:"report,omitempty"`     // steady, chaos (the fault), check (the goals)
	T0       time.Time         `json:"t0,omitzero"`          // chaos
	Late     bool              `json:"late,omitempty"`       // check
	Recovery jsonconv.Duration `json:"recoveryMs,omitempty"` // recovered
	T1Source string            `json:"t1Source,omitempty"`   // recovered: how T1 was found (T1Watched, ...)
	Held     time.Time         `json:"held,omitzero"`        // watch: when the goals came to hold; zero when they stopped
	Hint     *HintData         `json:"hint,omitempty"`       // hint
	Console  *ConsoleData      `json:"console,omitempty"`    // console
	Quiz     *QuizScore        `json:"quiz,omitempty"`       // quiz
	Cluster  *ClusterData      `json:"cluster,omitempty"`    // cluster
	Queue    *QueueData        `json:"queue,omitempty"`      // queue
	Extended *Extension        `json:"extended,omitempty"`   // extended
	Sleep    *SleepData        `json:"sleep,omitempty"`      // sleep, wake
	Build    *BuildData        `json:"build,omitempty"`      // build
	// Error says why a step or chaos failed.
	Error string `json:"error,omitempty"`
}

// eventView decodes a stored event's details by its kind. Details that do
// not decode (written by an older oplab) are left out; the message stays.
func eventView(ev store.Event) Event {
	v := Event{Seq: ev.Seq, At: ev.At, Kind: ev.Kind, Exercise: ev.Exercise, Message: ev.Message}
	if len(ev.Data) == 0 {
		return v
	}
	switch ev.Kind {
	case KindState:
		var d StateData
		if json.Unmarshal(ev.Data, &d) == nil {
			v.State = &d
		}
	case KindStep:
		var d StepData
		if json.Unmarshal(ev.Data, &d) == nil {
			v.Step = &Step{Phase: d.Phase, Kind: d.Kind, Index: d.Index, Total: d.Total, Message: d.Message, Done: d.Done, Error: d.Error, Elapsed: jsonconv.Millis(d.Elapsed)}
			v.Error = d.Error
		}
	case KindExercise, KindReset, KindRecovered:
		var d AttemptData
		if json.Unmarshal(ev.Data, &d) == nil {
			v.Attempt, v.Recovery, v.T1Source = attemptView(d.Attempt), jsonconv.Millis(d.Recovery), d.T1Source
		}
	case KindSteady:
		var d engine.Report
		if json.Unmarshal(ev.Data, &d) == nil {
			v.Report = &d
		}
	case KindChaos:
		var d ChaosData
		if json.Unmarshal(ev.Data, &d) == nil {
			v.Report, v.T0, v.Error = &d.Fault, d.T0, d.Error
		}
	case KindCheck:
		var d CheckData
		if json.Unmarshal(ev.Data, &d) == nil {
			v.Report, v.Late = &d.Report, d.Late
		}
	case KindHint:
		var d HintData
		if json.Unmarshal(ev.Data, &d) == nil {
			v.Hint = &d
		}
	case KindQuiz:
		var d QuizData
		if json.Unmarshal(ev.Data, &d) == nil {
			v.Quiz = &QuizScore{Quiz: d.Quiz, Correct: d.Correct, Total: d.Total}
		}
	case KindExtended:
		var d ExtendData
		if json.Unmarshal(ev.Data, &d) == nil {
			v.Extended = &Extension{By: jsonconv.Millis(d.By), Total: jsonconv.Millis(d.Total), Reason: d.Reason}
		}
	case KindBuild:
		var d BuildData
		if json.Unmarshal(ev.Data, &d) == nil {
			v.Build = &d
		}
	case KindSleep, KindWake:
		var d SleepData
		if json.Unmarshal(ev.Data, &d) == nil {
			v.Sleep = &d
		}
	case KindWatch:
		var d WatchData
		if json.Unmarshal(ev.Data, &d) == nil {
			v.Held = d.Held
		}
	case KindCluster:
		var d ClusterData
		if json.Unmarshal(ev.Data, &d) == nil {
			v.Cluster = &d
		}
	case KindConsole:
		var d ConsoleData
		if json.Unmarshal(ev.Data, &d) == nil {
			v.Console = &d
		}
	}
	return v
}

// Summary is a session in a list.
type Summary struct {
	ID       string `json:"id"`
	Learner  string `json:"learner"`
	Lab      string `json:"lab"`
	Provider string `json:"provider"`
	Lang     string `json:"lang"`
	State    State  `json:"state"`
	// Active is whether the session is live (State.Active).
	Active bool `json:"active"`
	// Exercise is the index of the current exercise (== Exercises when
	// all are done).
	Exercise  int       `json:"exercise"`
	Exercises int       `json:"exercises"`
	Created   time.Time `json:"created"`
	Updated   time.Time `json:"updated"`
}
