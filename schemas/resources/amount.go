package resources

import (
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Amount is one parsed quantity: absolute, relative, or unset when both
// fields are zero. An absolute amount has Value in the resource's base unit
// (millicores for CPU, bytes for memory and disk, bytes per second for
// memory bandwidth); a relative one has Percent of the host's capacity,
// above 0 and at most 100. At most one of the two is set.
type Amount struct {
	Value   int64
	Percent float64
}

// IsZero reports whether a is unset.
func (a Amount) IsZero() bool { return a.Value == 0 && a.Percent == 0 }

// IsRelative reports whether a is a percentage of the host.
func (a Amount) IsRelative() bool { return a.Percent > 0 }

// Resolve returns a in base units on a host with capacity base units: the
// Value of an absolute amount, or Percent of capacity rounded to the
// nearest unit, at least 1 and at most capacity, so that a relative amount
// never resolves to 0 (no limit). It returns 0 for an unset amount and for a
// relative amount when capacity is not positive (unknown).
func (a Amount) Resolve(capacity int64) int64 {
	if !a.IsRelative() {
		return a.Value
	}
	if capacity <= 0 {
		return 0
	}
	v := math.Round(float64(capacity) * a.Percent / 100)
	switch {
	case v < 1:
		return 1
	case v >= float64(capacity):
		return capacity
	}
	return int64(v)
}

// format returns a as it is written in a request: "25%" for a relative
// amount, format(Value) for an absolute one.
func (a Amount) format(format func(int64) string) string {
	if a.IsRelative() {
		return strconv.FormatFloat(a.Percent, 'f', -1, 64) + "%"
	}
	return format(a.Value)
}

// maxAmountLen bounds the length of an amount string, so that no request
// can make the parser work on megabytes of digits.
const maxAmountLen = 64

var (
	errNotNumber = errors.New("not a number")
	errNotAbove0 = errors.New("must be above zero")
	errTooLarge  = errors.New("too large")
)

// number is a non-negative decimal number as written: mant / 10^places.
type number struct {
	mant   *big.Int
	places int
}

// parseNumber parses digits with an optional fraction ("2", "0.5"): no
// sign, no exponent, a digit on each side of the point.
func parseNumber(s string) (number, bool) {
	whole, frac, point := strings.Cut(s, ".")
	if !isDigits(whole) || (point && !isDigits(frac)) {
		return number{}, false
	}
	mant, ok := new(big.Int).SetString(whole+frac, 10)
	return number{mant: mant, places: len(frac)}, ok
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// scaled returns n * factor with any fraction dropped, and whether it fits
// in an int64.
func (n number) scaled(factor int64) (int64, bool) {
	v := new(big.Int).Mul(n.mant, big.NewInt(factor))
	v.Quo(v, pow10(n.places))
	return v.Int64(), v.IsInt64()
}

func (n number) float() float64 {
	f, _ := new(big.Rat).SetFrac(n.mant, pow10(n.places)).Float64()
	return f
}

func pow10(n int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

// split parses s as a number and a unit, either of them followed by
// spaces: "1.5GiB", "1.5 GiB", "25 %", "2".
func split(s string) (number, string, error) {
	s = strings.TrimSpace(s)
	if len(s) > maxAmountLen {
		return number{}, "", errTooLarge
	}
	if strings.HasPrefix(s, "-") {
		return number{}, "", errNotAbove0
	}
	end := strings.IndexFunc(s, func(r rune) bool { return r != '.' && (r < '0' || r > '9') })
	if end < 0 {
		end = len(s)
	}
	n, ok := parseNumber(s[:end])
	if !ok {
		return number{}, "", errNotNumber
	}
	return n, strings.TrimSpace(s[end:]), nil
}

// percent turns n, read before a "%", into a relative amount.
func percent(n number) (Amount, error) {
	p := n.float()
	if p <= 0 || p > 100 {
		return Amount{}, errors.New("a percentage must be above 0 and at most 100")
	}
	return Amount{Percent: p}, nil
}
