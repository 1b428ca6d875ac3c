package server

import (
	"time"

	"github.com/gin-gonic/gin"
)

// Debrief is a session replayed on one time axis: its timeline and the
// operator's log, between Start and End.
type Debrief struct {
	Session string    `json:"session"`
	Lab     string    `json:"lab"`
	State   string    `json:"state"`
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
	// Events are the timeline's newest events, oldest first;
	// EventsDropped counts the older ones left out.
	Events        []Update  `json:"events"`
	EventsDropped int       `json:"eventsDropped"`
	Log           []LogLine `json:"log"`
	// LogSource is "live" (from the running cluster), "recorded" (kept
	// when the cluster was deleted) or "" (no log known).
	LogSource string `json:"logSource"`
	// LogDropped counts the oldest log lines left out.
	LogDropped int `json:"logDropped"`
}

// LogLine is one line of the operator's log in a Debrief.
type LogLine struct {
	Time    time.Time `json:"time"`
	Level   string    `json:"level,omitempty"`
	Object  string    `json:"object,omitempty"`
	Message string    `json:"message"`
	Error   string    `json:"error,omitempty"`
}

// apiDebrief is the learner's own session's debrief.
func (s *Server) apiDebrief(c *gin.Context) {
	v, err := s.cfg.Learning.Debrief(c.Request.Context(), session(c).ID)
	s.reply(c, v, err)
}

// apiClassDebrief is a class member's session's debrief, for its
// instructor.
func (s *Server) apiClassDebrief(c *gin.Context) {
	ref, err := s.cfg.Classroom.ClassSession(c.Request.Context(), instructor(c), c.Param("name"), c.Param("id"))
	if err != nil {
		s.failJSON(c, err)
		return
	}
	v, err := s.cfg.Learning.Debrief(c.Request.Context(), ref.ID)
	s.reply(c, v, err)
}
