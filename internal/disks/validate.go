package disks

import "fmt"

// MinSize is the smallest disk a Pool makes: ext4 with a journal needs room
// for its metadata before any file fits.
const MinSize int64 = 16 << 20

// maxNameLen is the longest name a Pool accepts.
const maxNameLen = 63

// validateName reports an ErrInvalid error unless name is 1 to 63 letters,
// digits, '-' or '_'. This keeps path separators and dots out of file names.
func validateName(name string) error {
	if name == "" || len(name) > maxNameLen {
		return fmt.Errorf("disk name %q: must be 1 to %d characters: %w", name, maxNameLen, ErrInvalid)
	}
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_'
		if !ok {
			return fmt.Errorf("disk name %q: character %q not allowed (only letters, digits, '-' and '_'): %w", name, r, ErrInvalid)
		}
	}
	return nil
}

// validateSize reports an ErrInvalid error when size is below MinSize.
func validateSize(size int64) error {
	if size < MinSize {
		return fmt.Errorf("disk size %d bytes: below the minimum of %d bytes (16 MiB), which ext4 with a journal needs for its metadata: %w", size, MinSize, ErrInvalid)
	}
	return nil
}

// validateOwner reports an ErrInvalid error for a negative uid or gid.
func validateOwner(uid, gid int) error {
	if uid < 0 || gid < 0 {
		return fmt.Errorf("disk owner %d:%d: uid and gid must not be negative: %w", uid, gid, ErrInvalid)
	}
	return nil
}
