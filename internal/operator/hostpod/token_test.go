package hostpod

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// jwt makes an unsigned token with the given claims.
func jwt(t *testing.T, iat, exp time.Time, id int64) string {
	t.Helper()
	b, err := json.Marshal(map[string]int64{"iat": iat.Unix(), "exp": exp.Unix(), "n": id})
	if err != nil {
		t.Fatal(err)
	}
	return "e30." + base64.RawURLEncoding.EncodeToString(b) + ".sig"
}

func TestTokenTimes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	iat := time.Unix(1_800_000_000, 0)
	tests := []struct {
		name    string
		content string
		wantErr bool
	}{
		{"valid", jwt(t, iat, iat.Add(time.Hour), 1), false},
		{"not a jwt", "abc", true},
		{"bad payload", "a.!!!.c", true},
		{"no claims", "e30.e30.sig", true},
	}
	for _, tt := range tests {
		f := filepath.Join(dir, tt.name)
		if err := os.WriteFile(f, []byte(tt.content), 0o600); err != nil {
			t.Fatal(err)
		}
		exp, got, err := tokenTimes(f)
		if (err != nil) != tt.wantErr {
			t.Errorf("%s: error %v, want error %v", tt.name, err, tt.wantErr)
			continue
		}
		if err == nil && (!got.Equal(iat) || !exp.Equal(iat.Add(time.Hour))) {
			t.Errorf("%s: iat %s exp %s, want %s and an hour later", tt.name, got, exp, iat)
		}
	}
}

// TestRefreshTokens checks that a token is replaced once four fifths of its
// life have passed, and that failures are reported and retried.
func TestRefreshTokens(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "token")
	// The current token was issued 79 s into a 100 s life: it is due in 1 s.
	now := time.Now()
	if err := os.WriteFile(file, []byte(jwt(t, now.Add(-79*time.Second), now.Add(21*time.Second), 0)), 0o600); err != nil {
		t.Fatal(err)
	}
	var minted atomic.Int64
	cs := fake.NewClientset()
	cs.PrependReactor("create", "serviceaccounts", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "token" {
			return false, nil, nil
		}
		if a.GetNamespace() != "oplab-system" {
			return true, nil, errors.New("wrong namespace")
		}
		n := minted.Add(1)
		req := a.(k8stesting.CreateAction).GetObject().(*authenticationv1.TokenRequest)
		ttl := time.Duration(*req.Spec.ExpirationSeconds) * time.Second
		req.Status.Token = jwt(t, time.Now(), time.Now().Add(ttl), n)
		return true, req, nil
	})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		RefreshTokens(ctx, TokenOptions{Client: cs, Namespace: "oplab-system", ServiceAccount: "pg-operator", File: file, TTL: time.Hour},
			func(err error) { t.Errorf("refresh: %v", err) })
	}()
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return minted.Load() >= 1, nil
	})
	if err != nil {
		t.Fatal("the due token was never replaced")
	}
	exp, iat, err := tokenTimes(file)
	if err != nil || exp.Sub(iat) != time.Hour {
		t.Errorf("new token: exp-iat = %s (%v), want the hour asked", exp.Sub(iat), err)
	}
	// The fresh token is not due for 48 minutes: no more minting.
	time.Sleep(500 * time.Millisecond)
	if n := minted.Load(); n != 1 {
		t.Errorf("minted %d tokens, want 1", n)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode: %v %v, want 0600", fi.Mode(), err)
	}
	cancel()
	<-done
}
