package analysis

import (
	"encoding/json"
	"math"
	"strconv"
)

// RatioState says how a Ratio came about.
type RatioState uint8

const (
	// RatioValue is an ordinary quotient.
	RatioValue RatioState = iota
	// RatioZeroOverZero is 0/0, defined as 1 (nothing changed); printed "1".
	RatioZeroOverZero
	// RatioInf is x/0 with x > 0: +Inf, printed "inf".
	RatioInf
	// RatioMissing means the numerator or the denominator was not measured.
	RatioMissing
	// RatioInvalid means one of them was measured but the quality gate
	// marked it invalid (results.Quality): not a value, so no ratio;
	// printed "invalid".
	RatioInvalid
)

// Ratio is a quotient of two measurements under the reports' rules: 0/0 is
// 1, x/0 is +Inf, and a missing operand gives a missing ratio (never 0).
type Ratio struct {
	Value float64
	State RatioState
}

// Divide applies the rules to two measured values.
func Divide(num, den float64) Ratio {
	switch {
	case den == 0 && num == 0:
		return Ratio{Value: 1, State: RatioZeroOverZero}
	case den == 0:
		return Ratio{Value: math.Inf(1), State: RatioInf}
	}
	return Ratio{Value: num / den}
}

// DivideOpt is Divide for optional values: a nil operand gives a missing
// ratio.
func DivideOpt(num, den *float64) Ratio {
	if num == nil || den == nil {
		return Missing()
	}
	return Divide(*num, *den)
}

// Missing returns a missing ratio.
func Missing() Ratio { return Ratio{Value: math.NaN(), State: RatioMissing} }

// Invalid returns the ratio of an invalid value.
func Invalid() Ratio { return Ratio{Value: math.NaN(), State: RatioInvalid} }

// IsMissing reports whether the ratio has no value: missing, or of an
// invalid value.
func (r Ratio) IsMissing() bool { return r.State == RatioMissing || r.State == RatioInvalid }

// String prints the ratio as text tables do: 2 decimals, "1" for 0/0, "inf"
// for x/0, "missing" for a missing operand and "invalid" for an invalid
// one.
func (r Ratio) String() string { return r.Format(2) }

// Format prints the ratio with the given decimals.
func (r Ratio) Format(decimals int) string {
	switch r.State {
	case RatioZeroOverZero:
		return "1"
	case RatioInf:
		return "inf"
	case RatioMissing:
		return "missing"
	case RatioInvalid:
		return "invalid"
	}
	return FormatFloat(r.Value, decimals)
}

// MarshalJSON writes the quotient as a number, x/0 as the string "inf", an
// invalid value's ratio as the string "invalid" and a missing ratio as null
// (JSON has no infinity).
func (r Ratio) MarshalJSON() ([]byte, error) {
	switch r.State {
	case RatioInf:
		return []byte(`"inf"`), nil
	case RatioInvalid:
		return []byte(`"invalid"`), nil
	case RatioMissing:
		return []byte("null"), nil
	}
	return json.Marshal(r.Value)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *Ratio) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case "null":
		*r = Missing()
		return nil
	case `"inf"`:
		*r = Ratio{Value: math.Inf(1), State: RatioInf}
		return nil
	case `"invalid"`:
		*r = Invalid()
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*r = Ratio{Value: v}
	return nil
}

// Num is a statistic that may be infinite (a group holding an x/0 ratio) or
// undefined (the stddev of one value): JSON gets "inf" or null, text "inf"
// or "n/a".
type Num float64

// MarshalJSON writes finite values as numbers, +Inf as "inf", -Inf as
// "-inf", NaN as null.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	switch {
	case math.IsNaN(f):
		return []byte("null"), nil
	case math.IsInf(f, 1):
		return []byte(`"inf"`), nil
	case math.IsInf(f, -1):
		return []byte(`"-inf"`), nil
	}
	return json.Marshal(f)
}

// Format prints n with the given decimals.
func (n Num) Format(decimals int) string {
	f := float64(n)
	switch {
	case math.IsNaN(f):
		return "n/a"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return FormatFloat(f, decimals)
}

// formatFloat is strconv's correctly rounded fixed notation (the binary value
// is rounded, like printf's %.2f), with "-0.00" shown as "0.00".
func FormatFloat(v float64, decimals int) string {
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	if len(s) > 0 && s[0] == '-' {
		z := true
		for _, c := range s[1:] {
			if c != '0' && c != '.' {
				z = false
				break
			}
		}
		if z {
			s = s[1:]
		}
	}
	return s
}
