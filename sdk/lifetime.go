package sdk

import (
	"fmt"
	"time"
)

// lifetimeSeconds returns a lifetime setting (a TTL or an idle timeout) as
// the wire carries it, in seconds: 0 is no limit. A negative duration is
// refused, naming the setting.
func lifetimeSeconds(name string, d time.Duration) (float64, error) {
	if d < 0 {
		return 0, fmt.Errorf("%s %v: want 0 (no limit) or more", name, d)
	}
	return d.Seconds(), nil
}
