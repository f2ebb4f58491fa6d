// Package buildctx names a Docker build context by its content, so that an
// image built from the same files on the same base gets the same tag and is
// reused instead of rebuilt.
package buildctx

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
)

// Hash returns the hex SHA-256 of a build context and the id of the image
// it builds on: the base id, then every file's name, length and content in
// name order. It does not depend on map order.
func Hash(files map[string][]byte, base string) string {
	h := sha256.New()
	fmt.Fprintf(h, "base %s\n", base)
	for _, n := range slices.Sorted(maps.Keys(files)) {
		fmt.Fprintf(h, "%s %d\n", n, len(files[n]))
		h.Write(files[n])
	}
	return hex.EncodeToString(h.Sum(nil))
}
