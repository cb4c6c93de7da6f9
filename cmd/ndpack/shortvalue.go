package main

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/ndpack/ndpack/internal/mpwire"
)

// shortValueLen is how long shortValue's text may grow before it is cut.
const shortValueLen = 72

// shortValue is the msgpack value b as jq -c prints JSON: compact, map
// keys as strings, bytes as "<N bytes>" and ext values (arrays inside) as
// "<ext T, N bytes>", cut with "..." past shortValueLen characters. It
// reads no further than it prints, so a huge value costs no more than a
// short one.
func shortValue(b []byte) string {
	var sb strings.Builder
	ok := writeShort(&sb, b, 0)
	if s := sb.String(); !ok || len(s) > shortValueLen {
		return strings.ToValidUTF8(s[:min(len(s), shortValueLen)], "") + "..."
	}
	return sb.String()
}

// writeShort writes the value b starts with and returns the rest, or
// false once the text is long enough (or b is malformed: it was measured
// before, so that does not happen).
func writeShort(sb *strings.Builder, b []byte, depth int) bool {
	_, ok := shortOne(sb, b, depth)
	return ok
}

func shortOne(sb *strings.Builder, b []byte, depth int) ([]byte, bool) {
	if sb.Len() > shortValueLen || depth > 64 {
		return nil, false
	}
	quote := func(s string) {
		q, _ := json.Marshal(s)
		sb.Write(q)
	}
	switch mpwire.NextType(b) {
	case mpwire.NilType:
		rest, err := mpwire.ReadNilBytes(b)
		sb.WriteString("null")
		return rest, err == nil
	case mpwire.BoolType:
		v, rest, err := mpwire.ReadBoolBytes(b)
		sb.WriteString(strconv.FormatBool(v))
		return rest, err == nil
	case mpwire.IntType:
		v, rest, err := mpwire.ReadIntBytes(b)
		sb.WriteString(strconv.FormatInt(v, 10))
		return rest, err == nil
	case mpwire.UintType:
		v, rest, err := mpwire.ReadUintBytes(b)
		sb.WriteString(strconv.FormatUint(v, 10))
		return rest, err == nil
	case mpwire.Float32Type, mpwire.Float64Type:
		v, rest, err := mpwire.ReadFloat64Bytes(b)
		sb.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		return rest, err == nil
	case mpwire.StrType:
		v, rest, err := mpwire.ReadStringZC(b)
		quote(string(v[:min(len(v), shortValueLen+1)]))
		return rest, err == nil
	case mpwire.BinType:
		v, rest, err := mpwire.ReadBytesZC(b)
		sb.WriteString("<" + strconv.Itoa(len(v)) + " bytes>")
		return rest, err == nil
	case mpwire.ExtType:
		typ, n, rest, err := mpwire.ReadExtHeaderBytes(b)
		if err != nil || n > len(rest) {
			return nil, false
		}
		sb.WriteString("<ext " + strconv.Itoa(int(typ)) + ", " + strconv.Itoa(n) + " bytes>")
		return rest[n:], true
	case mpwire.ArrayType:
		n, rest, err := mpwire.ReadArrayHeaderBytes(b)
		if err != nil {
			return nil, false
		}
		sb.WriteByte('[')
		for i := range n {
			if i > 0 {
				sb.WriteByte(',')
			}
			var ok bool
			if rest, ok = shortOne(sb, rest, depth+1); !ok {
				return nil, false
			}
		}
		sb.WriteByte(']')
		return rest, true
	case mpwire.MapType:
		n, rest, err := mpwire.ReadMapHeaderBytes(b)
		if err != nil {
			return nil, false
		}
		sb.WriteByte('{')
		for i := range n {
			if i > 0 {
				sb.WriteByte(',')
			}
			var key strings.Builder
			var ok bool
			if rest, ok = shortOne(&key, rest, depth+1); !ok {
				return nil, false
			}
			if k := key.String(); strings.HasPrefix(k, `"`) {
				sb.WriteString(k)
			} else {
				quote(k) // jq's keys are strings
			}
			sb.WriteByte(':')
			if rest, ok = shortOne(sb, rest, depth+1); !ok {
				return nil, false
			}
		}
		sb.WriteByte('}')
		return rest, true
	}
	return nil, false
}
