package resources

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The limits that Parse and Resolve enforce.
const (
	// MinMilliCPU is the smallest CPU limit, 0.01 core: the kernel's
	// smallest CFS quota (1ms) in Docker's period (100ms).
	MinMilliCPU = 10
	// MinMemoryBytes is the smallest memory limit Docker accepts, 6 MiB.
	MinMemoryBytes = 6 << 20
	// DefaultPIDs bounds the processes and threads of a sandbox that asks
	// for no bound, so that a fork bomb stays inside its sandbox.
	DefaultPIDs = 512
	// MaxPIDs is the kernel's largest pid_max.
	MaxPIDs = 1 << 22

	// maxMilliCPU keeps NanoCPUs (millicores * 1e6) inside an int64.
	maxMilliCPU = math.MaxInt64 / 1_000_000
)

// byteUnits are the units of memory, disk and (before "/s") memory
// bandwidth, in the order error messages list them. Units are
// case-sensitive; "kB" is the SI spelling of "KB".
var byteUnits = []struct {
	name   string
	factor int64
}{
	{"B", 1},
	{"KB", 1e3}, {"kB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
}

// byteFactor returns the size of unit in bytes; a number without a unit is
// bytes. perSecond ("" or "/s") is only for the error message.
func byteFactor(unit, perSecond string) (int64, error) {
	if unit == "" {
		return 1, nil
	}
	for _, u := range byteUnits {
		if u.name == unit {
			return u.factor, nil
		}
	}
	for _, u := range byteUnits {
		if strings.EqualFold(u.name, unit) {
			return 0, fmt.Errorf("unknown unit %q (units are case-sensitive: did you mean %s%s?)", unit+perSecond, u.name, perSecond)
		}
	}
	// K, M, G, T, with or without an i: Docker reads "2g" as GiB, Kubernetes
	// reads "2G" as GB. Ask which one.
	if i := strings.Index("KMGT", strings.ToUpper(unit[:1])); i >= 0 && (len(unit) == 1 || strings.EqualFold(unit[1:], "i")) {
		p := "KMGT"[i : i+1]
		return 0, fmt.Errorf("unknown unit %q (write %sB%s for 1000^%d or %siB%s for 1024^%d bytes)", unit+perSecond, p, perSecond, i+1, p, perSecond, i+1)
	}
	names := make([]string, 0, len(byteUnits))
	for _, u := range byteUnits {
		if u.name != "kB" {
			names = append(names, u.name+perSecond)
		}
	}
	last := len(names) - 1
	return 0, fmt.Errorf("unknown unit %q (want %s or %s or a percentage)", unit+perSecond, strings.Join(names[:last], ", "), names[last])
}

// parseBytes parses a memory or disk amount: "1073741824", "512MiB",
// "1.5 GB", "25%". A fraction of a byte is dropped.
func parseBytes(s string) (Amount, error) {
	n, unit, err := split(s)
	if err != nil {
		return Amount{}, err
	}
	if unit == "%" {
		return percent(n)
	}
	factor, err := byteFactor(unit, "")
	if err != nil {
		return Amount{}, err
	}
	return bytesAmount(n, factor)
}

func bytesAmount(n number, factor int64) (Amount, error) {
	v, ok := n.scaled(factor)
	switch {
	case !ok:
		return Amount{}, errTooLarge
	case v <= 0:
		return Amount{}, errNotAbove0
	}
	return Amount{Value: v}, nil
}

// parseMemory is parseBytes with Docker's minimum.
func parseMemory(s string) (Amount, error) {
	a, err := parseBytes(s)
	if err == nil && !a.IsRelative() && a.Value < MinMemoryBytes {
		return Amount{}, errors.New("below the minimum of 6 MiB (Docker's smallest memory limit)")
	}
	return a, err
}

// parseBandwidth parses a memory bandwidth: "2GB/s", "500 MiB/s", "25%".
func parseBandwidth(s string) (Amount, error) {
	n, unit, err := split(s)
	if err != nil {
		return Amount{}, err
	}
	if unit == "%" {
		return percent(n)
	}
	unit, ok := strings.CutSuffix(unit, "/s")
	if !ok {
		return Amount{}, errors.New(`a bandwidth is per second: write a unit ending in "/s" (as in 2GB/s) or a percentage`)
	}
	factor, err := byteFactor(unit, "/s")
	if err != nil {
		return Amount{}, err
	}
	return bytesAmount(n, factor)
}

// parseCPU parses cores into millicores: "2", "0.5", "1500m", "25%".
func parseCPU(s string) (Amount, error) {
	n, unit, err := split(s)
	if err != nil {
		return Amount{}, err
	}
	var (
		v  int64
		ok bool
	)
	switch unit {
	case "%":
		return percent(n)
	case "":
		if n.places > 3 {
			return Amount{}, errors.New("more than 3 decimals (the smallest step is 0.001 core, 1m)")
		}
		v, ok = n.scaled(1000)
	case "m":
		if n.places > 0 {
			return Amount{}, errors.New("millicores must be a whole number")
		}
		v, ok = n.scaled(1)
	default:
		return Amount{}, fmt.Errorf("unknown unit %q (want cores as in 2 or 0.5, millicores as in 1500m, or a percentage)", unit)
	}
	switch {
	case !ok || v > maxMilliCPU:
		return Amount{}, errTooLarge
	case v <= 0:
		return Amount{}, errNotAbove0
	case v < MinMilliCPU:
		return Amount{}, errors.New("below the minimum of 0.01 core (10m)")
	}
	return Amount{Value: v}, nil
}

// FormatBytes formats n bytes for people, in binary units up to TiB with one
// decimal: "512 B", "1.5 GiB", "16.0 GiB". It rounds, so it is for messages;
// what it returns parses back to within 5%.
func FormatBytes(n int64) string {
	return formatScaled(n, 1024, "B", "KiB", "MiB", "GiB", "TiB")
}

// formatBandwidth formats bytes per second in decimal units, as memory
// bandwidth is usually given: "2.0 GB/s".
func formatBandwidth(n int64) string {
	return formatScaled(n, 1000, "B/s", "KB/s", "MB/s", "GB/s", "TB/s")
}

// formatScaled writes n in the largest of units (each base times the one
// before) that keeps it below base, with one decimal after the first unit.
func formatScaled(n int64, base float64, units ...string) string {
	if n > -int64(base) && n < int64(base) {
		return strconv.FormatInt(n, 10) + " " + units[0]
	}
	f, i := float64(n)/base, 1
	for math.Abs(f) >= base-0.05 && i < len(units)-1 {
		f, i = f/base, i+1
	}
	return strconv.FormatFloat(f, 'f', 1, 64) + " " + units[i]
}

// formatCores formats millicores as cores: "2", "0.5".
func formatCores(millis int64) string {
	return strconv.FormatFloat(float64(millis)/1000, 'f', -1, 64)
}
