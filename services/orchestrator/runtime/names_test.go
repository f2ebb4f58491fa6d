package runtime

import "testing"

func TestNames(t *testing.T) {
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"container", ContainerName("sb-1"), "sandox-sb-sb-1"},
		{"volume", VolumeName("sb-1"), "sandox-ws-sb-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %q, want %q", tt.got, tt.want)
			}
		})
	}
}
