package store

import "testing"

// TestMigrateFromVersion1 opens a database written by an oplab that knew only
// the first schema step: it is migrated in place, and its rows survive.
func TestMigrateFromVersion1(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		where := b.fresh(t)
		old := b.raw(t, where)
		for _, stmt := range []string{
			`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`,
			migrations[0],
			`INSERT INTO schema_migrations VALUES (1, 0)`,
			`INSERT INTO sessions (id, learner, lab, cluster, provider, state, created_at, updated_at) VALUES ('old', 'alice', 'rbac', 'c', 'embedded', 'ready', 1, 1)`,
		} {
			if _, err := old.ExecContext(ctx, b.d.schema(stmt)); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
		old.Close()

		s := b.openStore(t, where)
		if v, _ := s.Version(ctx); v != SchemaVersion() {
			t.Errorf("schema version after open: got %d, want %d", v, SchemaVersion())
		}
		got, err := s.Session(ctx, "old")
		if err != nil {
			t.Fatal(err)
		}
		if got.State != "ready" || got.Lab != "rbac" || string(got.Data) != "{}" {
			t.Errorf("old session: got %+v, want state ready, lab rbac, data {}", got)
		}
		got.Data = []byte(`{"hints":2}`)
		if err := s.UpdateSession(ctx, &got); err != nil {
			t.Fatal(err)
		}
		if again, _ := s.Session(ctx, "old"); string(again.Data) != `{"hints":2}` {
			t.Errorf("data after update: got %s", again.Data)
		}
	})
}
