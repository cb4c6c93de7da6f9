package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ndpack/ndpack/dialect"
	"github.com/ndpack/ndpack/internal/mpwalk"
	"github.com/ndpack/ndpack/internal/mpwire"
	"github.com/ndpack/ndpack/internal/msgarrays"
)

// shortValueLen is how long shortValue's text may grow before it is cut.
const shortValueLen = 72

// msgValueJSONLen is about how long msgValueJSON's text may grow: past it,
// strings are cut and lists and maps end early.
const msgValueJSONLen = firstWidth

// shortValue is the msgpack value b as jq -c prints JSON: compact, map
// keys as strings, nothing HTML-escaped, bytes as "<N bytes>", ext values
// as "<ext T, N bytes>" and the arrays of a dialect's maps as "<DIALECT
// array, N bytes>", cut with "..." past shortValueLen characters. It reads no
// further than it prints, so a huge value costs no more than a short one.
func shortValue(b []byte) string {
	w := valueWriter{limit: shortValueLen}
	_, ok := w.one(b, 0)
	if s := w.sb.String(); !ok || len(s) > shortValueLen {
		return strings.ToValidUTF8(s[:min(len(s), shortValueLen)], "") + "..."
	}
	return w.sb.String()
}

// msgValueJSON is the msgpack value b as a JSON value, as shortValue writes
// it but valid JSON: the placeholders are strings, NaN and infinities are
// the strings "NaN", "+Inf" and "-Inf". A long value is cut where JSON
// allows (a string ends with "...", a list or map ends early) and cut
// says so.
func msgValueJSON(b []byte) (v json.RawMessage, cut bool) {
	w := valueWriter{limit: msgValueJSONLen, json: true}
	if _, ok := w.one(b, 0); !ok && !w.cut {
		return json.RawMessage(`null`), true // measured before: does not happen
	}
	return json.RawMessage(w.sb.String()), w.cut
}

// valueWriter writes msgpack values as shortValue and msgValueJSON do.
type valueWriter struct {
	sb    strings.Builder
	limit int
	json  bool // valid JSON: placeholders quoted, cut where JSON allows
	cut   bool // something was left out (json)
}

// full reports whether the text has reached the limit: shortValue stops
// there, msgValueJSON ends its lists and maps.
func (w *valueWriter) full() bool {
	if w.sb.Len() > w.limit {
		w.cut = true
		return true
	}
	return false
}

// quote writes s as a JSON string, nothing HTML-escaped.
func (w *valueWriter) quote(s string) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	w.sb.Write(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// placeholder writes the text standing for bytes or an array.
func (w *valueWriter) placeholder(s string) {
	if w.json {
		w.quote(s)
		return
	}
	w.sb.WriteString(s)
}

// float writes a float of bits bits as JSON writes it.
func (w *valueWriter) float(v float64, bits int) {
	s := strconv.FormatFloat(v, 'g', -1, bits)
	if w.json && (s == "NaN" || s == "+Inf" || s == "-Inf") {
		w.quote(s)
		return
	}
	w.sb.WriteString(s)
}

// one writes the value b starts with and returns the rest; false when the
// text is long enough (shortValue), the value too deep, or b malformed
// (it was measured before, so that does not happen).
func (w *valueWriter) one(b []byte, depth int) ([]byte, bool) {
	if (!w.json && w.full()) || depth > 64 {
		w.cut = true
		return nil, false
	}
	switch mpwire.NextType(b) {
	case mpwire.NilType:
		rest, err := mpwire.ReadNilBytes(b)
		w.sb.WriteString("null")
		return rest, err == nil
	case mpwire.BoolType:
		v, rest, err := mpwire.ReadBoolBytes(b)
		w.sb.WriteString(strconv.FormatBool(v))
		return rest, err == nil
	case mpwire.IntType:
		v, rest, err := mpwire.ReadIntBytes(b)
		w.sb.WriteString(strconv.FormatInt(v, 10))
		return rest, err == nil
	case mpwire.UintType:
		v, rest, err := mpwire.ReadUintBytes(b)
		w.sb.WriteString(strconv.FormatUint(v, 10))
		return rest, err == nil
	case mpwire.Float32Type, mpwire.Float64Type:
		bits := map[bool]int{true: 32, false: 64}[mpwire.NextType(b) == mpwire.Float32Type]
		v, rest, err := mpwire.ReadFloat64Bytes(b)
		w.float(v, bits) // a float32 as its shortest float32 text
		return rest, err == nil
	case mpwire.StrType:
		v, rest, err := mpwire.ReadStringZC(b)
		w.str(v)
		return rest, err == nil
	case mpwire.BinType:
		v, rest, err := mpwire.ReadBytesZC(b)
		w.placeholder("<" + strconv.Itoa(len(v)) + " bytes>")
		return rest, err == nil
	case mpwire.ExtType:
		typ, n, rest, err := mpwire.ReadExtHeaderBytes(b)
		if err != nil || n > len(rest) {
			return nil, false
		}
		w.placeholder("<ext " + strconv.Itoa(int(typ)) + ", " + strconv.Itoa(n) + " bytes>")
		return rest[n:], true
	case mpwire.ArrayType:
		return w.list(b, depth)
	case mpwire.MapType:
		if rest, ok := w.dialectArray(b); ok {
			return rest, true
		}
		return w.dict(b, depth)
	}
	return nil, false
}

// str writes a str value, cut when long.
func (w *valueWriter) str(v []byte) {
	if !w.json {
		w.quote(string(v[:min(len(v), shortValueLen+1)]))
		return
	}
	if utf8.RuneCount(v) > w.limit {
		r := []rune(string(v))
		w.quote(string(r[:w.limit]) + "...")
		w.cut = true
		return
	}
	w.quote(string(v))
}

// dialectArray writes the map at b as "<DIALECT array, N bytes>" when it is an
// array of a dialect (msgpack-numpy, OpenPI, GR00T), an object array of
// msgpack-numpy's included, and returns the rest.
func (w *valueWriter) dialectArray(b []byte) ([]byte, bool) {
	h, ok, err := msgarrays.All.At(b)
	if errors.Is(err, dialect.ErrPickle) {
		n, err := mpwalk.Len(b, mpwalk.Limits{MaxDepth: mpwalk.DefaultMaxDepth})
		if err != nil {
			return nil, false
		}
		w.placeholder("<" + dialect.MsgpackNumpy.String() + " object array, " + strconv.Itoa(n) + " bytes>")
		return b[n:], true
	}
	if err != nil || !ok || h.Len > len(b) {
		return nil, false
	}
	w.placeholder("<" + h.Encoding.String() + " array, " + strconv.Itoa(h.Len) + " bytes>")
	return b[h.Len:], true
}

// list writes a msgpack array as a JSON list.
func (w *valueWriter) list(b []byte, depth int) ([]byte, bool) {
	n, rest, err := mpwire.ReadArrayHeaderBytes(b)
	if err != nil {
		return nil, false
	}
	w.sb.WriteByte('[')
	for i := range n {
		if w.json && w.full() {
			break
		}
		if i > 0 {
			w.sb.WriteByte(',')
		}
		var ok bool
		if rest, ok = w.one(rest, depth+1); !ok {
			if !w.json || !w.cut {
				return nil, false
			}
			break
		}
	}
	w.sb.WriteByte(']')
	return rest, true
}

// dict writes a msgpack map as a JSON object, its keys as strings.
func (w *valueWriter) dict(b []byte, depth int) ([]byte, bool) {
	n, rest, err := mpwire.ReadMapHeaderBytes(b)
	if err != nil {
		return nil, false
	}
	w.sb.WriteByte('{')
	for i := range n {
		if w.json && w.full() {
			break
		}
		if i > 0 {
			w.sb.WriteByte(',')
		}
		key := valueWriter{limit: w.limit}
		var ok bool
		if rest, ok = key.one(rest, depth+1); !ok {
			return nil, false
		}
		if k := key.sb.String(); strings.HasPrefix(k, `"`) {
			w.sb.WriteString(k)
		} else {
			w.quote(k) // jq's keys are strings
		}
		w.sb.WriteByte(':')
		if rest, ok = w.one(rest, depth+1); !ok {
			if !w.json || !w.cut {
				return nil, false
			}
			break
		}
	}
	w.sb.WriteByte('}')
	return rest, true
}
