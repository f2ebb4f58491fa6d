package filesystem

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
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
	require.Len(t, all, len(tests), "tools")
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tl := all[i]
			require.Equal(t, Family, tl.Module)
			require.Equal(t, tt.name, tl.Name)
			require.Equal(t, "builtin", tl.Source)
			require.NotEmpty(t, tl.Description, "want %s described", tl.FullName())
			var s struct {
				Type                 string   `json:"type"`
				Required             []string `json:"required"`
				AdditionalProperties *bool    `json:"additionalProperties"`
				Properties           map[string]struct {
					Type        string `json:"type"`
					Description string `json:"description"`
				} `json:"properties"`
			}
			require.NoError(t, json.Unmarshal(tl.Schema(), &s), "parameters %s", tl.Schema())
			require.Equal(t, "object", s.Type)
			require.NotNil(t, s.AdditionalProperties, "additionalProperties, want false")
			require.False(t, *s.AdditionalProperties, "additionalProperties")
			require.Equal(t, tt.required, s.Required, "required")
			for name, p := range s.Properties {
				require.NotEmpty(t, p.Type, "type of property %q", name)
				require.NotEmpty(t, p.Description, "description of property %q", name)
			}
			for _, r := range tt.required {
				require.Contains(t, s.Properties, r, "want the required property described")
			}
		})
	}
}
