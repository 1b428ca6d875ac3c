package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
)

// Learner is one browser's worth of a learner: its own cookies and CSRF
// token, speaking the same HTTP API the lab page's scripts do.
type Learner struct {
	base string
	http *http.Client
	csrf string
}

// NewLearner returns a learner of the server at base with no cookies yet.
func NewLearner(base string) *Learner {
	jar, _ := cookiejar.New(nil) // never fails without options
	return &Learner{base: strings.TrimSuffix(base, "/"), http: &http.Client{Jar: jar}}
}

var (
	formToken = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)
	metaToken = regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)">`)
)

// Join joins the class with its join code under a display name, as the
// join form does, and reads the signed-in page's CSRF token.
func (l *Learner) Join(ctx context.Context, code, name string) error {
	page, err := l.page(ctx, http.MethodGet, "/join", nil)
	if err != nil {
		return err
	}
	m := formToken.FindStringSubmatch(page)
	if m == nil {
		return errors.New("join page: no form token")
	}
	form := url.Values{"_csrf": {m[1]}, "code": {code}, "name": {name}}
	if _, err := l.page(ctx, http.MethodPost, "/join", form); err != nil {
		return fmt.Errorf("join: %w", err)
	}
	home, err := l.page(ctx, http.MethodGet, "/", nil)
	if err != nil {
		return err
	}
	if m = metaToken.FindStringSubmatch(home); m == nil {
		return errors.New("after joining: the page has no CSRF token (not signed in?)")
	}
	l.csrf = m[1]
	return nil
}

// Session is what the API says of a session (a subset of session.Status).
type Session struct {
	ID         string `json:"id"`
	State      string `json:"state"`
	Exercise   int    `json:"exercise"`
	ExerciseID string `json:"exerciseId"`
	Error      string `json:"error"`
}

// Check is what the API says of a Check (a subset of session.CheckResult).
type Check struct {
	Exercise string `json:"exercise"`
	Passed   bool   `json:"passed"`
	Recovery int64  `json:"recoveryMs"`
}

// Start starts lab; it returns when the server has set it up (or failed).
func (l *Learner) Start(ctx context.Context, lab string) (*Session, error) {
	var s Session
	return &s, l.call(ctx, "/api/labs/"+url.PathEscape(lab)+"/start", nil, &s)
}

// Chaos injects the chaos of the session's exercise.
func (l *Learner) Chaos(ctx context.Context, id, exercise string) (*Session, error) {
	var s Session
	return &s, l.call(ctx, "/api/sessions/"+url.PathEscape(id)+"/chaos", map[string]string{"exercise": exercise}, &s)
}

// Check checks the goals of the session's exercise.
func (l *Learner) Check(ctx context.Context, id string) (*Check, error) {
	var c Check
	return &c, l.call(ctx, "/api/sessions/"+url.PathEscape(id)+"/check", nil, &c)
}

// Stop stops the session (and so deletes its cluster).
func (l *Learner) Stop(ctx context.Context, id string) error {
	return l.call(ctx, "/api/sessions/"+url.PathEscape(id)+"/stop", nil, nil)
}

// call POSTs in as JSON to an API path and decodes the reply into out.
func (l *Learner) call(ctx context.Context, path string, in, out any) error {
	var body io.Reader = http.NoBody
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-CSRF-Token", l.csrf)
	resp, err := l.http.Do(req)
	if err != nil {
		return fmt.Errorf("POST %s: %w", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("POST %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(b, &e) != nil || e.Error == "" {
			e.Error = strings.TrimSpace(string(b))
		}
		return fmt.Errorf("POST %s: %s: %s", path, resp.Status, e.Error)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("POST %s: reply: %w", path, err)
	}
	return nil
}

// page fetches an HTML page (form posts included) and returns its text.
func (l *Learner) page(ctx context.Context, method, path string, form url.Values) (string, error) {
	var body io.Reader = http.NoBody
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, l.base+path, body)
	if err != nil {
		return "", err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := l.http.Do(req)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s %s: %s", method, path, resp.Status)
	}
	return string(b), nil
}
