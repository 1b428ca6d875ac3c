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
	T1Source string `json:"t1Source"`
}

// Start starts lab; it returns when the server has set it up (or failed).
func (l *Learner) Start(ctx context.Context, lab string) (*Session, error) {
	var s Session
	return &s, l.call(ctx, "/api/labs/"+url.PathEscape(lab)+"/start", nil, &s)
}

// Chaos injects the chaos of the session's exercise.
func (l *Learner) Chaos(ctx context.Context, id, exercise string) (*Session, error) {
	var s Session
	return &s, l.call(ctx, sessionPath(id, "chaos"), map[string]string{"exercise": exercise}, &s)
}

// Check checks the goals of the session's exercise.
func (l *Learner) Check(ctx context.Context, id string) (*Check, error) {
	var c Check
	return &c, l.call(ctx, sessionPath(id, "check"), nil, &c)
}

// Stop stops the session (and so deletes its cluster).
func (l *Learner) Stop(ctx context.Context, id string) error {
	return l.call(ctx, sessionPath(id, "stop"), nil, nil)
}

// Applied is what the YAML editor's apply says (server.ApplyResult).
type Applied struct {
	OK     bool   `json:"ok"`
	Output string `json:"output"`
	Error  string `json:"error"`
}

// Refused says the apply started nothing: the console refused its line
// (too fast, too many at once, too large), so kubectl wrote nothing.
func (a *Applied) Refused() bool { return !a.OK && a.Output == "" }

// Apply applies yaml to the session's cluster as the YAML editor's Apply
// button does (kubectl apply -f - through the console, no dry run).
func (l *Learner) Apply(ctx context.Context, id, yaml string) (*Applied, error) {
	var a Applied
	return &a, l.call(ctx, sessionPath(id, "apply"), map[string]any{"yaml": yaml, "dryRun": false}, &a)
}

// Console runs one line in the session's web console, as the console
// panel does, and reads its streamed answer to the end.
func (l *Learner) Console(ctx context.Context, id, line string) (Answer, error) {
	b, err := json.Marshal(map[string]string{"line": line})
	if err != nil {
		return Answer{}, err
	}
	return l.console(ctx, id, b)
}

// console posts a console request already encoded as JSON: a flood sends
// one body again and again without making it anew.
func (l *Learner) console(ctx context.Context, id string, body []byte) (Answer, error) {
	path := sessionPath(id, "console")
	resp, err := l.post(ctx, path, bytes.NewReader(body))
	if err != nil {
		return Answer{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Answer{}, replyError(path, resp)
	}
	return readAnswer(resp.Body)
}

func sessionPath(id, action string) string {
	return "/api/sessions/" + url.PathEscape(id) + "/" + action
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
	resp, err := l.post(ctx, path, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return replyError(path, resp)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("POST %s: %w", path, err)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("POST %s: reply: %w", path, err)
	}
	return nil
}

// post POSTs a JSON body to an API path with the learner's CSRF token;
// the caller reads and closes the reply.
func (l *Learner) post(ctx context.Context, path string, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.base+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-CSRF-Token", l.csrf)
	resp, err := l.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("POST %s: %w", path, err)
	}
	return resp, nil
}

// replyError is the error of a reply that is not 200 OK: the API's
// {"error": ...}, or the reply's text.
func replyError(path string, resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(b, &e) != nil || e.Error == "" {
		e.Error = strings.TrimSpace(string(b))
	}
	return fmt.Errorf("POST %s: %s: %s", path, resp.Status, e.Error)
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
