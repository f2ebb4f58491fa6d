package resources

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseCPU(t *testing.T) {
	tests := []struct {
		name, in string
		want     Amount
		wantErr  string
	}{
		{"whole cores", "2", Amount{Value: 2000}, ""},
		{"half a core", "0.5", Amount{Value: 500}, ""},
		{"three decimals", "1.125", Amount{Value: 1125}, ""},
		{"millicores", "1500m", Amount{Value: 1500}, ""},
		{"millicores with a space", "250 m", Amount{Value: 250}, ""},
		{"minimum", "10m", Amount{Value: 10}, ""},
		{"percent", "25%", Amount{Percent: 25}, ""},
		{"fractional percent", "12.5 %", Amount{Percent: 12.5}, ""},
		{"all of it", "100%", Amount{Percent: 100}, ""},
		{"spaces around", "  4 ", Amount{Value: 4000}, ""},
		{"zero", "0", Amount{}, "must be above zero"},
		{"zero millicores", "0m", Amount{}, "must be above zero"},
		{"negative", "-1", Amount{}, "must be above zero"},
		{"four decimals", "0.0005", Amount{}, "more than 3 decimals"},
		{"fractional millicores", "1.5m", Amount{}, "millicores must be a whole number"},
		{"below minimum", "0.005", Amount{}, "below the minimum of 0.01 core"},
		{"below minimum in millicores", "9m", Amount{}, "below the minimum of 0.01 core"},
		{"letters", "abc", Amount{}, "not a number"},
		{"empty number", "m", Amount{}, "not a number"},
		{"trailing point", "1.", Amount{}, "not a number"},
		{"leading point", ".5", Amount{}, "not a number"},
		{"two points", "1.2.3", Amount{}, "not a number"},
		{"exponent", "1e3", Amount{}, `unknown unit "e3"`},
		{"unknown unit", "2 cores", Amount{}, `unknown unit "cores" (want cores as in 2 or 0.5, millicores as in 1500m, or a percentage)`},
		{"zero percent", "0%", Amount{}, "a percentage must be above 0 and at most 100"},
		{"over 100 percent", "101%", Amount{}, "a percentage must be above 0 and at most 100"},
		{"too many cores", "9223372036854775807", Amount{}, "too large"},
		{"just too many cores", "9223372036855", Amount{}, "too large"},
		{"too long", strings.Repeat("1", 65), Amount{}, "too large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseCPU(tt.in)
			checkAmount(t, tt.in, got, err, tt.want, tt.wantErr)
		})
	}
}

func TestParseMemoryAndDisk(t *testing.T) {
	const want = "(want B, KB, MB, GB, TB, KiB, MiB, GiB or TiB or a percentage)"
	tests := []struct {
		name, in string
		want     Amount
		wantErr  string
	}{
		{"plain bytes", "1073741824", Amount{Value: 1 << 30}, ""},
		{"bytes", "7000000B", Amount{Value: 7e6}, ""},
		{"KB", "8000KB", Amount{Value: 8e6}, ""},
		{"kB", "8000kB", Amount{Value: 8e6}, ""},
		{"MB", "512MB", Amount{Value: 512e6}, ""},
		{"GB", "2GB", Amount{Value: 2e9}, ""},
		{"TB", "1TB", Amount{Value: 1e12}, ""},
		{"KiB", "8192KiB", Amount{Value: 8 << 20}, ""},
		{"MiB", "512MiB", Amount{Value: 512 << 20}, ""},
		{"GiB", "2GiB", Amount{Value: 2 << 30}, ""},
		{"TiB", "1TiB", Amount{Value: 1 << 40}, ""},
		{"fraction", "1.5GiB", Amount{Value: 3 << 29}, ""},
		{"space before the unit", "1.5 GiB", Amount{Value: 3 << 29}, ""},
		{"fraction of a byte dropped", "0.0073KiB", Amount{}, "below the minimum of 6 MiB"},
		{"fraction of a byte dropped, large", "6.0000001MiB", Amount{Value: 6 << 20}, ""},
		{"percent", "25%", Amount{Percent: 25}, ""},
		{"minimum", "6MiB", Amount{Value: 6 << 20}, ""},
		{"below minimum", "5MiB", Amount{}, "below the minimum of 6 MiB (Docker's smallest memory limit)"},
		{"zero", "0", Amount{}, "must be above zero"},
		{"zero with unit", "0GiB", Amount{}, "must be above zero"},
		{"negative", "-1GiB", Amount{}, "must be above zero"},
		{"unknown unit", "12XB", Amount{}, `unknown unit "XB" ` + want},
		{"PiB", "1PiB", Amount{}, `unknown unit "PiB" ` + want},
		{"wrong case", "2gib", Amount{}, `unknown unit "gib" (units are case-sensitive: did you mean GiB?)`},
		{"bits", "2Gb", Amount{}, `did you mean GB?`},
		{"Docker's g", "2g", Amount{}, `unknown unit "g" (write GB for 1000^3 or GiB for 1024^3 bytes)`},
		{"Kubernetes' Mi", "512Mi", Amount{}, `unknown unit "Mi" (write MB for 1000^2 or MiB for 1024^2 bytes)`},
		{"Kubernetes' k", "8000k", Amount{}, `unknown unit "k" (write KB for 1000^1 or KiB for 1024^1 bytes)`},
		{"letters", "lots", Amount{}, "not a number"},
		{"over 100 percent", "100.1%", Amount{}, "a percentage must be above 0 and at most 100"},
		{"overflow", "9TiB9", Amount{}, `unknown unit "TiB9"`},
		{"too large", "9000000TiB", Amount{}, "too large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseMemory(tt.in)
			checkAmount(t, tt.in, got, err, tt.want, tt.wantErr)
		})
	}
	// Disk has no minimum.
	got, err := parseBytes("1KiB")
	require.NoError(t, err)
	assert.Equal(t, int64(1024), got.Value, "disk 1KiB")
	got, err = parseBytes("1.5")
	require.NoError(t, err)
	assert.Equal(t, int64(1), got.Value, "disk 1.5: want the fraction dropped")
}

func TestParseBandwidth(t *testing.T) {
	tests := []struct {
		name, in string
		want     Amount
		wantErr  string
	}{
		{"GB/s", "2GB/s", Amount{Value: 2e9}, ""},
		{"MiB/s", "500MiB/s", Amount{Value: 500 << 20}, ""},
		{"spaced", "1.5 GB/s", Amount{Value: 15e8}, ""},
		{"B/s", "1000B/s", Amount{Value: 1000}, ""},
		{"percent", "25%", Amount{Percent: 25}, ""},
		{"not per second", "2GB", Amount{}, `a bandwidth is per second: write a unit ending in "/s" (as in 2GB/s) or a percentage`},
		{"plain number", "2000", Amount{}, "a bandwidth is per second"},
		{"unknown unit", "2XB/s", Amount{}, `unknown unit "XB/s" (want B/s, KB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s or TiB/s or a percentage)`},
		{"wrong case", "2gb/s", Amount{}, `unknown unit "gb/s" (units are case-sensitive: did you mean GB/s?)`},
		{"ambiguous", "2G/s", Amount{}, `unknown unit "G/s" (write GB/s for 1000^3 or GiB/s for 1024^3 bytes)`},
		{"zero", "0GB/s", Amount{}, "must be above zero"},
		{"negative", "-2GB/s", Amount{}, "must be above zero"},
		{"zero percent", "0%", Amount{}, "a percentage must be above 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseBandwidth(tt.in)
			checkAmount(t, tt.in, got, err, tt.want, tt.wantErr)
		})
	}
}

func checkAmount(t *testing.T, in string, got Amount, err error, want Amount, wantErr string) {
	t.Helper()
	if wantErr != "" {
		require.ErrorContains(t, err, wantErr, "%q: got %+v", in, got)
		return
	}
	require.NoError(t, err, "%q", in)
	assert.Equal(t, want, got, "%q", in)
}

func TestAmountResolve(t *testing.T) {
	tests := []struct {
		name     string
		a        Amount
		capacity int64
		want     int64
	}{
		{"unset", Amount{}, 100, 0},
		{"absolute", Amount{Value: 1500}, 8000, 1500},
		{"absolute above capacity stays", Amount{Value: 9000}, 8000, 9000},
		{"quarter of 8 cores", Amount{Percent: 25}, 8000, 2000},
		{"quarter of 16 GiB", Amount{Percent: 25}, 16 << 30, 4 << 30},
		{"a third rounds", Amount{Percent: 100.0 / 3}, 8000, 2667},
		{"all", Amount{Percent: 100}, 8000, 8000},
		{"tiny is at least 1", Amount{Percent: 0.0001}, 100, 1},
		{"unknown capacity", Amount{Percent: 25}, 0, 0},
		{"huge capacity", Amount{Percent: 100}, math.MaxInt64, math.MaxInt64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.a.Resolve(tt.capacity))
		})
	}
}

func TestIsZero(t *testing.T) {
	assert.True(t, (Amount{}).IsZero(), "unset amount")
	assert.False(t, (Amount{Value: 1}).IsZero(), "an amount in bytes")
	assert.False(t, (Amount{Percent: 1}).IsZero(), "a percent")
}

func TestFormatBytes(t *testing.T) {
	tests := []struct {
		in   int64
		want string
	}{
		{0, "0 B"},
		{512, "512 B"},
		{1023, "1023 B"},
		{1024, "1.0 KiB"},
		{1536, "1.5 KiB"},
		{6 << 20, "6.0 MiB"},
		{3 << 29, "1.5 GiB"},
		{16 << 30, "16.0 GiB"},
		{1<<20 - 1, "1.0 MiB"},
		{3 << 40, "3.0 TiB"},
		{2048 << 40, "2048.0 TiB"},
		{-2048, "-2.0 KiB"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, FormatBytes(tt.in), "FormatBytes(%d)", tt.in)
		})
	}
}

func TestFormatBandwidth(t *testing.T) {
	tests := []struct {
		in   int64
		want string
	}{
		{999, "999 B/s"},
		{1000, "1.0 KB/s"},
		{2e9, "2.0 GB/s"},
		{999_960_000, "1.0 GB/s"},
		{5e12, "5.0 TB/s"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, formatBandwidth(tt.in), "formatBandwidth(%d)", tt.in)
		})
	}
}

// FuzzParseBytes checks that parseBytes never panics and that what it
// accepts is well formed and survives being written out again.
func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"1073741824", "512MiB", "1.5 GB", "25%", "12XB", "-1", "0.5", "9000000TiB", "100.0%", " 2 KiB "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := parseBytes(s)
		if err != nil {
			require.True(t, a.IsZero(), "%q: got %+v with error %v, want a zero amount", s, a, err)
			return
		}
		if a.IsRelative() {
			require.Zero(t, a.Value, "%q: got %+v, want only a percent in (0, 100]", s, a)
			require.LessOrEqual(t, a.Percent, 100.0, "%q: got %+v, want only a percent in (0, 100]", s, a)
			return
		}
		require.Greater(t, a.Value, int64(0), "%q: got %+v, want a positive value", s, a)
		// The same amount in plain bytes, spaced, parses to the same value.
		for _, again := range []string{strconv.FormatInt(a.Value, 10), " " + s + " ", strconv.FormatInt(a.Value, 10) + " B"} {
			b, err := parseBytes(again)
			require.NoError(t, err, "%q", again)
			require.Equal(t, a, b, "%q, as for %q", again, s)
		}
		// What FormatBytes writes parses back to within 5%.
		if a.Value < 1<<62 {
			text := FormatBytes(a.Value)
			b, err := parseBytes(text)
			require.NoError(t, err, "FormatBytes(%d) = %q", a.Value, text)
			require.InEpsilon(t, a.Value, b.Value, 0.05, "FormatBytes(%d) = %q", a.Value, text)
		}
	})
}
