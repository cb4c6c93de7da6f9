package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// This file is how numpy writes datetime64 and timedelta64 values: the
// ISO 8601 text of np.datetime_as_string, numpy's str of a timedelta64
// scalar, and the fitted formats of its array printing
// (DatetimeFormat, TimedeltaFormat). numpy computes in 64-bit integers
// that wrap where a value times its unit's count passes 2^63, and so does
// this, so that even the extremes print as numpy prints them.

// nat is numpy's not-a-time, the smallest int64.
const nat = math.MinInt64

// splitUnit splits a unit as ndarray.DType holds it ("10s", "ms", "")
// into numpy's metadata: a count and a base unit ("" for generic).
func splitUnit(unit string) (int64, string) {
	i := 0
	for i < len(unit) && unit[i] >= '0' && unit[i] <= '9' {
		i++
	}
	n := int64(1)
	if i > 0 {
		n, _ = strconv.ParseInt(unit[:i], 10, 64)
	}
	return n, unit[i:]
}

// floorSplit divides *v by unit rounding down, leaves the remainder
// (0 <= r < unit) in *v, and returns the quotient.
func floorSplit(v *int64, unit int64) int64 {
	q := *v / unit
	if *v%unit < 0 {
		q--
	}
	*v -= q * unit
	return q
}

// dateTime is a datetime64's fields, numpy's npy_datetimestruct.
type dateTime struct {
	year                 int64
	month, day           int64
	hour, min, sec       int64
	us, ps, as           int64 // micro-, pico- and attoseconds within their next larger unit
	fracDigits, dateOnly int   // digits after the second; 1 date only, 2 year-month, 3 year
	timeParts            int   // 0 none, 1 hour, 2 hour:minute, 3 hour:minute:second
}

// subDay is, for the units below a day, how many make a day (0: a span
// numpy splits otherwise), the parts of the time they print, and the
// fraction digits after the second.
var subDay = map[string]struct {
	perDay     int64
	parts, sub int
	perSecond  int64
}{
	"h":  {24, 1, 0, 0},
	"m":  {24 * 60, 2, 0, 0},
	"s":  {86400, 3, 0, 1},
	"ms": {86400 * 1e3, 3, 3, 1e3},
	"us": {86400 * 1e6, 3, 6, 1e6},
	"ns": {86400 * 1e9, 3, 9, 1e9},
	"ps": {86400 * 1e12, 3, 12, 1e12},
	"fs": {0, 3, 15, 1e15},
	"as": {0, 3, 18, 1e18},
}

// datetimeString is numpy's np.datetime_as_string of the datetime64 v
// of unit, in the unit's base ("2024-02-29", "2020-01-01T10:00",
// "1970-01-01T00:00:00.000000005"); false for NaT's absence of a base
// unit (numpy cannot print a generic datetime other than NaT).
func datetimeString(v int64, unit string) (string, bool) {
	if v == nat {
		return "NaT", true
	}
	num, base := splitUnit(unit)
	if base == "" {
		return "", false
	}
	t := dateTime{month: 1, day: 1}
	v *= num // wraps as numpy's int64 does
	switch base {
	case "Y":
		t.year, t.dateOnly = 1970+v, 3
	case "M":
		t.year = 1970 + floorSplit(&v, 12)
		t.month, t.dateOnly = v+1, 2
	case "W":
		t.setDays(v * 7)
		t.dateOnly = 1
	case "D":
		t.setDays(v)
		t.dateOnly = 1
	default:
		u, ok := subDay[base]
		if !ok {
			return "", false
		}
		t.timeParts, t.fracDigits = u.parts, u.sub
		t.setTime(v, base)
	}
	return t.String(), true
}

// setDays sets the date of days since 1970-01-01 in the proleptic
// Gregorian calendar, counting 400-year cycles from 2000 as numpy does.
func (t *dateTime) setDays(days int64) {
	d := days - (365*30 + 7) // days since 2000-01-01; wraps as numpy's does
	t.year = 2000 + 400*floorSplit(&d, 400*365+97)
	// d is now the day within a 400-year cycle that starts on a leap year.
	if d >= 366 {
		t.year += 100 * ((d - 1) / (100*365 + 24))
		d = (d - 1) % (100*365 + 24)
		if d >= 365 {
			t.year += 4 * ((d + 1) / (4*365 + 1))
			d = (d + 1) % (4*365 + 1)
			if d >= 366 {
				t.year += (d - 1) / 365
				d = (d - 1) % 365
			}
		}
	}
	months := monthDays(t.year)
	for i, n := range months {
		if d < n {
			t.month, t.day = int64(i+1), d+1
			return
		}
		d -= n
	}
}

func monthDays(year int64) [12]int64 {
	feb := int64(28)
	if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
		feb = 29
	}
	return [12]int64{31, feb, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}
}

// setTime sets the date and time of v units (a base below a day) since
// the epoch.
func (t *dateTime) setTime(v int64, base string) {
	u := subDay[base]
	switch base {
	case "fs": // numpy's whole span is 2.6 hours either side of the epoch
		t.hour = floorSplit(&v, 3600*1e15)
		if t.hour < 0 {
			t.year, t.month, t.day, t.hour = 1969, 12, 31, t.hour+24
		} else {
			t.year = 1970
		}
	case "as": // and 9.2 seconds
		t.sec = floorSplit(&v, 1e18)
		if t.sec < 0 {
			t.year, t.month, t.day, t.hour, t.min, t.sec = 1969, 12, 31, 23, 59, t.sec+60
		} else {
			t.year = 1970
		}
		t.fraction(v, u.perSecond)
		return
	default:
		t.setDays(floorSplit(&v, u.perDay))
		perHour := u.perDay / 24
		t.hour = floorSplit(&v, perHour)
	}
	if u.parts == 1 {
		return
	}
	perMinute := max(u.perSecond, 1) * 60
	if base == "m" {
		perMinute = 1
	}
	t.min = floorSplit(&v, perMinute)
	if u.parts == 2 {
		return
	}
	t.sec = floorSplit(&v, u.perSecond)
	t.fraction(v, u.perSecond)
}

// fraction sets the part of a second, v of perSecond, as micro-, pico-
// and attoseconds.
func (t *dateTime) fraction(v, perSecond int64) {
	if perSecond <= 1 {
		return
	}
	// Scale the fraction to attoseconds in three 6-digit parts.
	digits := 0
	for p := perSecond; p > 1; p /= 10 {
		digits++
	}
	parts := [3]int64{}
	s := fmt.Sprintf("%0*d", digits, v) + strings.Repeat("0", 18-digits)
	for i := range parts {
		parts[i], _ = strconv.ParseInt(s[6*i:6*i+6], 10, 64)
	}
	t.us, t.ps, t.as = parts[0], parts[1], parts[2]
}

// String writes t as numpy's ISO 8601 text to its unit.
func (t dateTime) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%04d", t.year)
	if t.dateOnly == 3 {
		return b.String()
	}
	fmt.Fprintf(&b, "-%02d", t.month)
	if t.dateOnly == 2 {
		return b.String()
	}
	fmt.Fprintf(&b, "-%02d", t.day)
	if t.dateOnly == 1 {
		return b.String()
	}
	fmt.Fprintf(&b, "T%02d", t.hour)
	if t.timeParts >= 2 {
		fmt.Fprintf(&b, ":%02d", t.min)
	}
	if t.timeParts >= 3 {
		fmt.Fprintf(&b, ":%02d", t.sec)
	}
	if t.fracDigits > 0 {
		frac := fmt.Sprintf("%06d%06d%06d", t.us, t.ps, t.as)
		b.WriteString("." + frac[:t.fracDigits])
	}
	return b.String()
}

// timeUnitNames are numpy's words for the base units in a timedelta64's
// str.
var timeUnitNames = map[string]string{
	"Y": "years", "M": "months", "W": "weeks", "D": "days", "h": "hours", "m": "minutes", "s": "seconds",
	"ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds", "ps": "picoseconds", "fs": "femtoseconds", "as": "attoseconds",
	"": "generic time units",
}

// timedeltaString is numpy's str of a timedelta64 scalar: the count
// times the unit's count, in the base unit ("50 seconds" for 5 of
// [10s]), "NaT".
func timedeltaString(v int64, unit string) string {
	if v == nat {
		return "NaT"
	}
	num, base := splitUnit(unit)
	return strconv.FormatInt(v*num, 10) + " " + timeUnitNames[base]
}

// timeFormat is numpy's fitted format of datetime64 (quoted ISO text) or
// timedelta64 (the bare count) items in an array: right-aligned to the
// width of the smallest and the largest value, NaT as 'NaT'.
func timeFormat(kind byte, unit string, n int, value func(int) int64) func(int64) string {
	text := func(v int64) string {
		if kind == 'm' {
			return strconv.FormatInt(v, 10)
		}
		s, ok := datetimeString(v, unit)
		if !ok {
			s = strconv.FormatInt(v, 10)
		}
		return "'" + s + "'"
	}
	width, seen, hasNaT := 0, false, false
	lo, hi := int64(0), int64(0)
	for i := range n {
		v := value(i)
		if v == nat {
			hasNaT = true
			continue
		}
		if !seen {
			lo, hi, seen = v, v, true
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	if seen {
		width = max(len(text(lo)), len(text(hi)))
	}
	if hasNaT {
		width = max(width, 5)
	}
	return func(v int64) string {
		s := "'NaT'"
		if v != nat {
			s = text(v)
		}
		return strings.Repeat(" ", max(0, width-len(s))) + s
	}
}
