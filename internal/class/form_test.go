package class

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestFormSpec(t *testing.T) {
	t.Parallel()
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skipf("no time zone data: %v", err) // tzdata is part of every supported system
	}
	tests := []struct {
		name    string
		f       Form
		want    Spec
		wantErr string
	}{
		{"all empty is no bounds", Form{Name: " morning ", Labs: []string{"rbac"}}, Spec{Name: "morning", Labs: []string{"rbac"}}, ""},
		{"every field", Form{Name: "m", Labs: []string{"failover", "rbac"}, Capacity: "30", Opens: "2026-12-07T09:00", Closes: "2026-12-07 17:30",
			TimeLimit: "1h30m", Zone: paris},
			Spec{Name: "m", Labs: []string{"failover", "rbac"}, Capacity: 30, Opens: time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC),
				Closes: time.Date(2026, 12, 7, 16, 30, 0, 0, time.UTC), TimeLimit: 90 * time.Minute}, ""},
		{"rfc 3339 keeps its offset", Form{Opens: "2026-12-07T09:00:00Z", Zone: paris}, Spec{Opens: time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)}, ""},
		{"none and zero", Form{Opens: "none", Closes: "", TimeLimit: "0", Capacity: "0"}, Spec{}, ""},
		{"bad capacity", Form{Capacity: "thirty"}, Spec{}, `capacity "thirty"`},
		{"negative capacity", Form{Capacity: "-3"}, Spec{}, `capacity "-3"`},
		{"bad time", Form{Opens: "monday"}, Spec{}, `opens "monday"`},
		{"bad closing time", Form{Closes: "2026-13-07 09:00"}, Spec{}, `closes "2026-13-07 09:00"`},
		{"bad time limit", Form{TimeLimit: "90"}, Spec{}, `time limit "90"`},
		{"negative time limit", Form{TimeLimit: "-5m"}, Spec{}, `time limit "-5m"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.f.Spec()
			if tt.wantErr != "" {
				if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("got error %v, want ErrInvalid naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Name != tt.want.Name || !reflect.DeepEqual(got.Labs, tt.want.Labs) || got.Capacity != tt.want.Capacity ||
				!got.Opens.Equal(tt.want.Opens) || !got.Closes.Equal(tt.want.Closes) || got.TimeLimit != tt.want.TimeLimit {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestEditFromForm: an edit form sets every field, an empty one removes
// a bound; an edit made from an older version is refused, not applied.
func TestEditFromForm(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	ctx := t.Context()
	c := f.create(t, ada, Spec{Name: "morning", Capacity: 5, Closes: monday9.Add(8 * time.Hour), TimeLimit: time.Hour})
	ch, err := Form{Name: "morning", Labs: []string{"rbac", "failover"}, Capacity: "", TimeLimit: "45m", Zone: time.UTC}.Changes()
	if err != nil {
		t.Fatal(err)
	}
	ch.Version = c.Version
	got, err := f.svc.Edit(ctx, ada, "morning", ch)
	if err != nil {
		t.Fatal(err)
	}
	if got.Capacity != 0 || !got.Closes.IsZero() || got.TimeLimit != 45*time.Minute || !reflect.DeepEqual(got.Labs, []string{"rbac", "failover"}) {
		t.Errorf("edited: got %+v, want no cap, no closing time, 45m, labs [rbac failover]", got)
	}
	stale := ch
	stale.TimeLimit = new(time.Duration)
	if _, err := f.svc.Edit(ctx, ada, "morning", stale); !errors.Is(err, ErrChanged) {
		t.Errorf("edit made from version %d after another edit: got %v, want ErrChanged", stale.Version, err)
	}
	if now, _ := f.svc.Get(ctx, ada, "morning"); now.TimeLimit != 45*time.Minute {
		t.Errorf("after the refused edit: time limit %v, want 45m kept", now.TimeLimit)
	}
}

// TestWarmFromForm: a form shows a warm field for every lab; the zeros of
// labs the class does not run are dropped, a number for one is refused,
// and an edit's zero removes a lab's warm sessions.
func TestWarmFromForm(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	ctx := t.Context()
	sp, err := Form{Name: "warmed", Labs: []string{"failover"}, Warm: map[string]string{"failover": "3", "rbac": "0", "quota": ""}}.Spec()
	if err != nil {
		t.Fatal(err)
	}
	c, err := f.svc.Create(ctx, ada, sp)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Warm, map[string]int{"failover": 3}) {
		t.Errorf("created: warm %v, want failover 3 only", c.Warm)
	}
	sp, err = Form{Name: "other", Labs: []string{"failover"}, Warm: map[string]string{"rbac": "2"}}.Spec()
	if err == nil {
		_, err = f.svc.Create(ctx, ada, sp)
	}
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("warm sessions of a lab the class does not run: got %v, want ErrInvalid", err)
	}
	if _, err := (Form{Name: "other", Labs: []string{"failover"}, Warm: map[string]string{"failover": "many"}}).Spec(); !errors.Is(err, ErrInvalid) {
		t.Errorf("warm \"many\": got %v, want ErrInvalid", err)
	}
	ch, err := Form{Name: "warmed", Labs: []string{"failover"}, Warm: map[string]string{"failover": "0", "rbac": "0"}}.Changes()
	if err != nil {
		t.Fatal(err)
	}
	ch.Version = c.Version
	got, err := f.svc.Edit(ctx, ada, "warmed", ch)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Warm) != 0 {
		t.Errorf("edited to 0: warm %v, want none", got.Warm)
	}
}
