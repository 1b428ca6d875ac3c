package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
)

// page is what every template gets.
type page struct {
	Lang string
	// CSRF is the token scripts and forms repeat; empty before sign-in.
	CSRF string
	Path string
	// Strings are the scripts' strings in Lang, as JSON.
	Strings template.JS
	// Instructor is set for a signed-in instructor: the navigation leads
	// to their classes.
	Instructor bool
	Data       any
}

func funcs(cat catalogue) template.FuncMap {
	return template.FuncMap{
		"t":        cat.text,
		"duration": duration,
		// The fields of the class forms (see classFieldsView).
		"newClassFields":  newClassFields,
		"editClassFields": editClassFields,
		"json": func(v any) (template.JS, error) {
			b, err := json.Marshal(v)
			return template.JS(b), err
		},
		"warmFields": warmFields,
	}
}

// warmFieldsView is what the class form's "class-warm-fields" block shows:
// a number of warm sessions per lab (inputs named warm.LAB, read with
// class.ParseWarm), ids prefixed with ID.
type warmFieldsView struct {
	ID, Lang string
	Labs     []warmField
}

type warmField struct {
	Lab  string
	Warm int
}

// warmFields builds the view of a form's warm sessions of labs, now warm.
func warmFields(id, lang string, labs []string, warm map[string]int) warmFieldsView {
	v := warmFieldsView{ID: id, Lang: lang}
	for _, l := range labs {
		v.Labs = append(v.Labs, warmField{Lab: l, Warm: warm[l]})
	}
	return v
}

// duration shows d as a learner reads it: 1m05s, 2.4s.
func duration(d time.Duration) string {
	switch {
	case d <= 0:
		return "–"
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

func (s *Server) render(c *gin.Context, code int, name string, data any) {
	lang := pageLang(c.Request)
	strs, _ := json.Marshal(s.cat.forScripts(lang))
	p := page{Lang: lang, Path: c.Request.URL.Path, Strings: template.JS(strs), Data: data}
	if id, ok := c.Get(ctxIdentity); ok {
		p.CSRF = id.(identity).CSRF
		p.Instructor = id.(identity).Role == roleInstructor
	}
	c.Header("Content-Type", "text/html; charset=utf-8")
	c.Header("Cache-Control", "no-store")
	c.Status(code)
	if err := s.tmpl.ExecuteTemplate(c.Writer, name, p); err != nil {
		s.log.Error("render page", "page", name, "err", err)
	}
}

// refusalStatus is the HTTP status of each reason of a Refusal.
var refusalStatus = map[string]int{
	RefusalBadCode:    http.StatusBadRequest,
	RefusalBadName:    http.StatusBadRequest,
	RefusalTooMany:    http.StatusTooManyRequests,
	RefusalNameTaken:  http.StatusConflict,
	RefusalFull:       http.StatusConflict,
	RefusalClosed:     http.StatusForbidden,
	RefusalNotOpen:    http.StatusForbidden,
	RefusalEnded:      http.StatusForbidden,
	RefusalNotInClass: http.StatusForbidden,
}

// status maps an application layer's error to an HTTP status.
func status(err error) int {
	var r *Refusal
	if errors.As(err, &r) {
		if code, ok := refusalStatus[r.Reason]; ok {
			return code
		}
		return http.StatusForbidden
	}
	switch {
	case errors.Is(err, ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, ErrConflict):
		return http.StatusConflict
	case errors.Is(err, ErrInvalid):
		return http.StatusBadRequest
	case errors.Is(err, ErrForbidden):
		return http.StatusForbidden
	case errors.Is(err, ErrBadCredentials):
		return http.StatusUnauthorized
	}
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusInternalServerError
}

// message is err as the learner reads it: a refusal in lang, from the
// catalogue; any other error as it is.
func (s *Server) message(lang string, err error) string {
	var r *Refusal
	if errors.As(err, &r) {
		if _, ok := refusalStatus[r.Reason]; ok {
			return strings.ReplaceAll(s.cat.text(lang, "refusal."+r.Reason), "{wait}", duration(r.Retry))
		}
	}
	return err.Error()
}

// retryAfter tells the client when a refusal for too many attempts ends.
func retryAfter(c *gin.Context, err error) {
	var r *Refusal
	if errors.As(err, &r) && r.Retry > 0 {
		c.Header("Retry-After", strconv.Itoa(int(math.Ceil(r.Retry.Seconds()))))
	}
}

// fail renders err as a page; an unexpected error is logged and shown
// without its detail.
func (s *Server) fail(c *gin.Context, err error) {
	code := status(err)
	msg := s.message(pageLang(c.Request), err)
	if code == http.StatusInternalServerError {
		s.log.Error("request failed", "path", c.Request.URL.Path, "err", err)
		msg = ""
	}
	s.render(c, code, "error.html", map[string]any{"Code": code, "Message": msg})
}

// failJSON is fail for the API.
func (s *Server) failJSON(c *gin.Context, err error) {
	code := status(err)
	msg := s.message(pageLang(c.Request), err)
	if code == http.StatusInternalServerError {
		s.log.Error("request failed", "path", c.Request.URL.Path, "err", err)
	}
	retryAfter(c, err)
	var r *Refusal
	if errors.As(err, &r) {
		c.AbortWithStatusJSON(code, gin.H{"error": msg, "reason": r.Reason})
		return
	}
	c.AbortWithStatusJSON(code, gin.H{"error": msg})
}
