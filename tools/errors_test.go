package tools

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/sandox/sandox/schemas"
)

// TestErrorClassesWrapCodes checks the tool error classes across the
// layers that see them: the tool wraps a class, errors.Is finds both the
// class and its code, and ErrorCode gives the code the executor sends,
// while the text stays the class's own words.
func TestErrorClassesWrapCodes(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		is       []error
		isNot    []error
		code     schemas.ErrorCode
		wantText string
	}{
		{
			name:     "a missing file",
			err:      fmt.Errorf("read_file %q: %w", "a.txt", ErrNotFound),
			is:       []error{ErrNotFound, schemas.CodeToolError},
			isNot:    []error{schemas.CodeNotFound, ErrTooLarge},
			code:     schemas.CodeToolError,
			wantText: `read_file "a.txt": not found`,
		},
		{
			name:     "a file over the limit",
			err:      fmt.Errorf("read_file %q: %w: the file is 2 MiB", "a.txt", ErrTooLarge),
			is:       []error{ErrTooLarge, schemas.CodeToolError},
			isNot:    []error{ErrNotFound, schemas.CodeResourceExhausted},
			code:     schemas.CodeToolError,
			wantText: `read_file "a.txt": too large: the file is 2 MiB`,
		},
		{
			name:     "a wire error around a class keeps its code",
			err:      schemas.Errorf(schemas.CodeNotFound, "job %q: %w", "j1", ErrNotFound),
			is:       []error{ErrNotFound, schemas.CodeNotFound},
			code:     schemas.CodeNotFound,
			wantText: `not_found: job "j1": not found`,
		},
		{
			name:     "a code beside a class wins",
			err:      fmt.Errorf("cd: %w: %w", schemas.CodeAccessDenied, ErrNotFound),
			is:       []error{ErrNotFound, schemas.CodeAccessDenied},
			code:     schemas.CodeAccessDenied,
			wantText: "cd: access denied: not found",
		},
		{
			name:     "a deadline passed while looking",
			err:      fmt.Errorf("no element after 1s: %w: %w", ErrNotFound, context.DeadlineExceeded),
			is:       []error{ErrNotFound, context.DeadlineExceeded},
			code:     schemas.CodeTimeout,
			wantText: "no element after 1s: not found: context deadline exceeded",
		},
		{
			name:     "an unclassified error",
			err:      errors.New("boom"),
			isNot:    []error{ErrNotFound, schemas.CodeToolError},
			code:     schemas.CodeToolError,
			wantText: "boom",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.wantText {
				t.Errorf("got text %q, want %q", got, tt.wantText)
			}
			for _, target := range tt.is {
				if !errors.Is(tt.err, target) {
					t.Errorf("errors.Is(%v, %v) is false, want true", tt.err, target)
				}
			}
			for _, target := range tt.isNot {
				if errors.Is(tt.err, target) {
					t.Errorf("errors.Is(%v, %v) is true, want false", tt.err, target)
				}
			}
			if got := ErrorCode(tt.err); got != tt.code {
				t.Errorf("got code %s, want %s", got, tt.code)
			}
		})
	}
	if ErrNotFound.Error() != "not found" || ErrTooLarge.Error() != "too large" {
		t.Errorf("got classes %q and %q, want \"not found\" and \"too large\"", ErrNotFound, ErrTooLarge)
	}
}
