package install

import "testing"

func TestOperatorImage(t *testing.T) {
	tests := []struct {
		name   string
		values map[string]any
		want   string
	}{
		{"chart defaults", nil, "oplab.dev/pg-operator:0.1.0"},
		{"tag set", map[string]any{"image": map[string]any{"tag": "dev"}}, "oplab.dev/pg-operator:dev"},
		{"repository set", map[string]any{"image": map[string]any{"repository": "example.com/op"}}, "example.com/op:0.1.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := OperatorImage(Options{Values: tt.values})
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
