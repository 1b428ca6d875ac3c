package store

import "testing"

func TestRebind(t *testing.T) {
	t.Parallel()
	tests := []struct{ q, sqlite, postgres string }{
		{"SELECT 1", "SELECT 1", "SELECT 1"},
		{"a = ? AND b IN (?, ?)", "a = ? AND b IN (?, ?)", "a = $1 AND b IN ($2, $3)"},
		{"a = '?' AND b = ?", "a = '?' AND b = ?", "a = '?' AND b = $1"},
		{"a = 'it''s?' AND b = ?", "a = 'it''s?' AND b = ?", "a = 'it''s?' AND b = $1"},
	}
	for _, tt := range tests {
		if got := sqliteDialect.rebind(tt.q); got != tt.sqlite {
			t.Errorf("SQLite: rebind(%q): got %q, want %q", tt.q, got, tt.sqlite)
		}
		if got := postgresDialect.rebind(tt.q); got != tt.postgres {
			t.Errorf("PostgreSQL: rebind(%q): got %q, want %q", tt.q, got, tt.postgres)
		}
	}
}

// TestArgsKeepCallersSlice: booleans become 0 and 1 in a copy, not in the
// slice the caller passed.
func TestArgsKeepCallersSlice(t *testing.T) {
	t.Parallel()
	in := []any{"x", true, false}
	out := postgresDialect.args(in)
	if out[1] != 1 || out[2] != 0 || out[0] != "x" {
		t.Errorf("args: got %v, want [x 1 0]", out)
	}
	if in[1] != true || in[2] != false {
		t.Errorf("caller's args after the call: got %v, want [x true false]", in)
	}
}
