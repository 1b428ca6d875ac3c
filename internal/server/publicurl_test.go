package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"oplab.dev/oplab/internal/metrics"
	"oplab.dev/oplab/web"
)

func TestParsePublicURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://lab.school.example":       "https://lab.school.example",
		"https://lab.school.example/":      "https://lab.school.example",
		"http://10.0.0.5:8080":             "http://10.0.0.5:8080",
		"https://lab.school.example:8443/": "https://lab.school.example:8443",
	} {
		u, err := ParsePublicURL(in)
		if err != nil || u.String() != want {
			t.Errorf("ParsePublicURL(%q): got %v, %v; want %s", in, u, err, want)
		}
	}
	for _, bad := range []string{"lab.school.example", "ftp://lab", "https://", "https://lab/oplab", "https://lab/?x=1", "https://u:p@lab", "https://lab/#x", "::"} {
		if u, err := ParsePublicURL(bad); err == nil {
			t.Errorf("ParsePublicURL(%q): got %v, want an error", bad, u)
		}
	}
}

// Behind an https proxy the server is reached in plain HTTP: its cookies
// are Secure because its public URL says https, and its public host is
// answered; without one, a plain HTTP answer's cookies are not Secure.
func TestPublicURLMakesCookiesSecure(t *testing.T) {
	for _, tt := range []struct {
		public string
		host   string
		secure bool
	}{
		{"", "", false},
		{"https://lab.school.example", "lab.school.example", true},
		{"http://lab.school.example:8080", "lab.school.example:8080", false},
	} {
		t.Run(tt.public, func(t *testing.T) {
			ts := httptest.NewUnstartedServer(nil)
			cfg := newFakeApp().config(Config{Console: fakeConsole{}, Web: web.FS, DataDir: t.TempDir(),
				Hosts: Hosts(ts.Listener.Addr().String()), Learner: "local", Metrics: metrics.New(metrics.Options{})})
			if tt.public != "" {
				u, err := ParsePublicURL(tt.public)
				if err != nil {
					t.Fatal(err)
				}
				cfg.PublicURL = u
			}
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			ts.Config.Handler = s
			ts.Start()
			t.Cleanup(func() { ts.Close(); s.Close() })
			if got := s.PublicURL(); got != strings.TrimSuffix(tt.public, "/") {
				t.Errorf("PublicURL: got %q, want %q", got, tt.public)
			}
			req, _ := http.NewRequest("GET", s.SignInURL(ts.URL), nil)
			if tt.host != "" {
				req.Host = tt.host // as the proxy passes it on
			}
			resp, err := (&http.Transport{}).RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusSeeOther && resp.StatusCode != http.StatusFound {
				t.Fatalf("sign-in through host %q: got %d, want a redirect with the cookie", req.Host, resp.StatusCode)
			}
			cookies := resp.Cookies()
			if len(cookies) == 0 {
				t.Fatal("the sign-in set no cookie")
			}
			for _, c := range cookies {
				if c.Secure != tt.secure {
					t.Errorf("cookie %s: Secure %v, want %v", c.Name, c.Secure, tt.secure)
				}
			}
		})
	}
}
