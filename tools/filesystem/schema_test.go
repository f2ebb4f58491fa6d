package filesystem

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestToolParameters(t *testing.T) {
	tests := []struct {
		name     string
		required []string
	}{
		{"read_file", []string{"path"}},
		{"create_file", []string{"path", "content"}},
		{"write_file", []string{"path", "content"}},
		{"append_file", []string{"path", "content"}},
		{"insert_lines", []string{"path", "line", "content"}},
		{"replace_in_file", []string{"path", "old_string", "new_string"}},
		{"delete_path", []string{"path"}},
		{"move_path", []string{"source", "destination"}},
		{"copy_path", []string{"source", "destination"}},
		{"make_directory", []string{"path"}},
		{"list_directory", nil},
		{"stat_path", []string{"path"}},
		{"find_files", []string{"pattern"}},
		{"search_files", []string{"pattern"}},
		{"upload_file", []string{"path", "content_base64"}},
		{"download_file", []string{"path"}},
	}
	all := Tools(Config{})
	if len(all) != len(tests) {
		t.Fatalf("got %d tools, want %d", len(all), len(tests))
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tl := all[i]
			if tl.Module != Module || tl.Name != tt.name || tl.Source != "builtin" || tl.Description == "" {
				t.Fatalf("got %s (source %q), want %s.%s built in and described", tl.FullName(), tl.Source, Module, tt.name)
			}
			var s struct {
				Type                 string   `json:"type"`
				Required             []string `json:"required"`
				AdditionalProperties *bool    `json:"additionalProperties"`
				Properties           map[string]struct {
					Type        string `json:"type"`
					Description string `json:"description"`
				} `json:"properties"`
			}
			if err := json.Unmarshal(tl.Parameters, &s); err != nil {
				t.Fatalf("got invalid JSON %s: %v", tl.Parameters, err)
			}
			if s.Type != "object" {
				t.Fatalf("got type %q, want object", s.Type)
			}
			if s.AdditionalProperties == nil || *s.AdditionalProperties {
				t.Fatalf("got additionalProperties %v, want false", s.AdditionalProperties)
			}
			if !slices.Equal(s.Required, tt.required) {
				t.Fatalf("got required %v, want %v", s.Required, tt.required)
			}
			for name, p := range s.Properties {
				if p.Type == "" || p.Description == "" {
					t.Fatalf("got property %q with type %q and description %q, want both", name, p.Type, p.Description)
				}
			}
			for _, r := range tt.required {
				if _, ok := s.Properties[r]; !ok {
					t.Fatalf("got no property %q, want the required one described", r)
				}
			}
		})
	}
}
