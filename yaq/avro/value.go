package avro

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"

	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/ndarray"
)

// Limits on decoding values from a daemon or client, beyond the bytes
// there are. Items that take no bytes (nulls, empty records) cannot vouch
// for their count with bytes: a whole value may hold maxZeroSizeItems of
// them, however they are spread over its arrays. Recursive records could
// nest without end. And a byte may decode into far more Go memory than
// itself (a one-byte record into a map of some 300 bytes): the Go values
// of a value of n bytes are estimated as they are made and may take
// decodedPerByte*n + decodedSlack bytes.
const (
	maxZeroSizeItems = 1 << 16
	maxValueDepth    = 512
	decodedPerByte   = 32
	decodedSlack     = 16 << 20
)

// Estimates of the Go memory decoded values take, for the budget above:
// a slot of []any, an entry of a map (with its share of the map's growth),
// a boxed number, a string or slice header in an interface, a record's
// map of up to 8 fields, an *ndarray.Array.
const (
	costSlot     = 16
	costMapEntry = 80
	costNumber   = 8
	costHeader   = 24
	costGroup    = 48 + 288
	costArray    = 160
)

// Decode decodes one value of schema s at the start of b, in Avro's binary
// encoding, and returns it and the number of bytes it took. Records become
// map[string]any, except the YEP-113 ndarray record, which becomes an
// *ndarray.Array whose Data aliases b; a union becomes the value of its
// branch; arrays []any; maps map[string]any; int int32; long int64; float
// float32; double float64; bytes []byte (aliasing b); enums their symbol.
// Every count and length is checked against the bytes that remain before
// anything is sized from it, whatever its sign; the items that take no
// bytes are bounded for the whole value, and so is the Go memory it
// decodes to, a small multiple of len(b) (an error wrapping ndarray.ErrTooLarge past
// either). A count or length that claims more bytes than remain is
// ndarray.ErrTruncated: more bytes may complete it.
func (s *Schema) Decode(b []byte) (any, int, error) {
	d := valueDecoder{r: reader{b: b}, memMax: int64(len(b))*decodedPerByte + decodedSlack}
	v, err := d.value(s, 0)
	return v, d.r.off, err
}

type valueDecoder struct {
	r      reader
	zero   int   // items of no bytes so far, in all the value's arrays
	mem    int64 // the estimated Go memory of what is decoded so far
	memMax int64
}

// spend adds n bytes to the memory the value is estimated to take, and
// fails when that is over the budget; it is called before the memory is
// taken.
func (d *valueDecoder) spend(n int64, at int) error {
	d.mem += n
	if d.mem > d.memMax {
		return errAt(ndarray.ErrTooLarge, at, "the value would take more than %d bytes of memory, decoded from %d bytes (at most %d per byte and %d more)",
			d.memMax, len(d.r.b), decodedPerByte, decodedSlack)
	}
	return nil
}

// boxCost is what storing an integer in an interface allocates: nothing
// for 0 to 255, which Go keeps ready.
func boxCost(v int64) int64 {
	if v >= 0 && v < 256 {
		return 0
	}
	return costNumber
}

// recordCost estimates a map[string]any of k entries: a group of 8 slots
// per 8 entries, and the map's header.
func recordCost(k int) int64 {
	if k == 0 {
		return 48
	}
	return int64(costGroup) * int64((k+7)/8)
}

func (d *valueDecoder) value(s *Schema, depth int) (any, error) {
	if depth > maxValueDepth {
		return nil, errAt(ndarray.ErrTooDeep, d.r.off, "values nested more than %d deep", maxValueDepth)
	}
	switch s.Type {
	case "union":
		at := d.r.off
		i, err := d.r.varint("union branch")
		if err != nil {
			return nil, err
		}
		if i < 0 || i >= int64(len(s.Branches)) {
			return nil, errAt(errMalformed, at, "union branch %d of %s is out of range", i, s)
		}
		return d.value(s.Branches[i], depth+1)
	case "record":
		return d.record(s, depth)
	case "array", "map":
		return d.items(s, depth)
	}
	return d.primitive(s)
}

// primitive decodes a value of a type that holds no other values.
func (d *valueDecoder) primitive(s *Schema) (any, error) {
	r := &d.r
	at := r.off
	switch s.Type {
	case "null":
		return nil, nil
	case "boolean":
		if r.off >= len(r.b) {
			return nil, errAt(ndarray.ErrTruncated, at, "the input ends inside a boolean")
		}
		c := r.b[r.off]
		r.off++
		if c > 1 {
			return nil, errAt(errMalformed, at, "boolean byte %d is not 0 or 1", c)
		}
		return c == 1, nil
	case "int":
		v, err := r.varint("int")
		if err != nil {
			return nil, err
		}
		if v < math.MinInt32 || v > math.MaxInt32 {
			return nil, errAt(errMalformed, at, "int %d is out of range", v)
		}
		if err := d.spend(boxCost(v), at); err != nil {
			return nil, err
		}
		return int32(v), nil
	case "long":
		v, err := r.varint("long")
		if err != nil {
			return nil, err
		}
		if err := d.spend(boxCost(v), at); err != nil {
			return nil, err
		}
		return v, nil
	case "float":
		if len(r.b)-r.off < 4 {
			return nil, errAt(ndarray.ErrTruncated, at, "the input ends inside a float")
		}
		if err := d.spend(costNumber, at); err != nil {
			return nil, err
		}
		r.off += 4
		return math.Float32frombits(binary.LittleEndian.Uint32(r.b[at:])), nil
	case "double":
		if len(r.b)-r.off < 8 {
			return nil, errAt(ndarray.ErrTruncated, at, "the input ends inside a double")
		}
		if err := d.spend(costNumber, at); err != nil {
			return nil, err
		}
		r.off += 8
		return math.Float64frombits(binary.LittleEndian.Uint64(r.b[at:])), nil
	case "bytes":
		b, err := r.bytes("bytes")
		if err != nil {
			return nil, err
		}
		if err := d.spend(costHeader, at); err != nil {
			return nil, err
		}
		return b, nil
	case "string":
		b, err := r.bytes("string")
		if err != nil {
			return nil, err
		}
		if len(b) > 0 {
			if err := d.spend(costHeader+int64(len(b)), at); err != nil {
				return nil, err
			}
		}
		return string(b), nil
	case "fixed":
		if s.Size < 0 || len(r.b)-r.off < s.Size {
			return nil, errAt(ndarray.ErrTruncated, at, "the input ends inside fixed %s of %d bytes", s.Name, s.Size)
		}
		if err := d.spend(costHeader, at); err != nil {
			return nil, err
		}
		r.off += s.Size
		return r.b[at:r.off:r.off], nil
	case "enum":
		i, err := r.varint("enum")
		if err != nil {
			return nil, err
		}
		if i < 0 || i >= int64(len(s.Symbols)) {
			return nil, errAt(errMalformed, at, "enum index %d of %s is out of range", i, s.Name)
		}
		if err := d.spend(costHeader, at); err != nil {
			return nil, err
		}
		return s.Symbols[i], nil
	}
	return nil, errAt(ErrSchema, at, "cannot decode type %q", s.Type)
}

// record decodes a record: the YEP-113 ndarray record as an
// *ndarray.Array aliasing the input, any other as a map of its fields.
func (d *valueDecoder) record(s *Schema, depth int) (any, error) {
	r := &d.r
	at := r.off
	if s.isArray() {
		a, n, err := DecodeArray(r.b[r.off:])
		if err != nil {
			return nil, shift(err, r.off)
		}
		if err := d.spend(costArray+costSlot*int64(len(a.Shape)), at); err != nil {
			return nil, err
		}
		r.off += n
		return a, nil
	}
	if err := d.spend(recordCost(len(s.Fields)), at); err != nil {
		return nil, err
	}
	m := make(map[string]any, len(s.Fields))
	for _, f := range s.Fields {
		v, err := d.value(f.Type, depth+1)
		if err != nil {
			return nil, err
		}
		m[f.Name] = v
	}
	return m, nil
}

// items decodes an array or a map: blocks of items, each block a count
// (negative: then followed by the block's size in bytes) until a count of
// 0.
func (d *valueDecoder) items(s *Schema, depth int) (any, error) {
	r := &d.r
	elem := s.Items
	if s.Type == "map" {
		elem = s.Values
	}
	// A map entry takes at least its key's length byte; an array item at
	// least a byte, unless its type takes none.
	zero := s.Type == "array" && elem.TakesNoBytes()
	var list []any
	var m map[string]any
	if s.Type == "array" {
		// The []any is returned boxed in an interface: a slice header of
		// its own, whatever the items.
		if err := d.spend(costHeader, r.off); err != nil {
			return nil, err
		}
	}
	if s.Type == "map" {
		if err := d.spend(48, r.off); err != nil {
			return nil, err
		}
		m = map[string]any{}
	}
	for {
		blockAt := r.off
		n, err := r.blockCount(s.Type, -1)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			break
		}
		if zero {
			if n > int64(maxZeroSizeItems-d.zero) {
				return nil, errAt(ndarray.ErrTooLarge, blockAt, "%s block claims %d items of %s, which take no bytes; a value may hold %d such items in all, and %d came before",
					s.Type, n, elem, maxZeroSizeItems, d.zero)
			}
			d.zero += int(n)
		} else if n > int64(len(r.b)-r.off) {
			return nil, errAt(ndarray.ErrTruncated, blockAt, "%s block claims %s, %s", s.Type, codecerr.Count(n, "item"), codecerr.Remain(len(r.b)-r.off, "byte"))
		}
		if m == nil {
			if err := d.spend(costSlot*n, blockAt); err != nil {
				return nil, err
			}
			if list == nil {
				list = make([]any, 0, n) // n is within the bytes, or the cap
			}
		}
		for i := int64(0); i < n; i++ {
			var key string
			if m != nil {
				keyAt := r.off
				kb, err := r.bytes("map key")
				if err != nil {
					return nil, err
				}
				if err := d.spend(costMapEntry+int64(len(kb)), keyAt); err != nil {
					return nil, err
				}
				key = string(kb)
			}
			v, err := d.value(elem, depth+1)
			if err != nil {
				return nil, err
			}
			if m != nil {
				m[key] = v
			} else {
				list = append(list, v)
			}
		}
	}
	if m != nil {
		return m, nil
	}
	if list == nil {
		list = []any{}
	}
	return list, nil
}

// shift adds base to the offset of a codec error found in a sub-slice.
func shift(err error, base int) error {
	if e, ok := err.(*ndarray.Error); ok && e.Offset >= 0 {
		c := *e
		c.Offset += int64(base)
		return &c
	}
	return err
}

// Append appends the Avro binary encoding of v as a value of schema s to
// dst. v is checked against the schema as it is encoded; an error names the
// path to the value that does not fit ("[2].gain: a string is not a
// double"). See Decode for the Go types of each Avro type; encoding also
// takes any Go integer for int and long (within range), any number for
// float and double, slices and maps of any element type, and *ndarray.Array
// or ndarray.Array for the ndarray record. A union takes the first branch
// the value fits.
func (s *Schema) Append(dst []byte, v any) ([]byte, error) {
	return appendValue(dst, s, v, "", 0, nil)
}

// gatherMin is the size from which appendPieces sends an array's data from
// where it lies rather than copying it.
const gatherMin = 64 << 10

// gather collects an encoding in pieces, for a vectored write: the encoded
// bytes, and between them the data of large arrays, referenced in place.
type gather struct {
	pieces [][]byte
	mark   int // where the encoded bytes not yet in pieces start
}

// AppendPieces encodes v as Append does, appended to pieces as pieces whose
// concatenation is the encoding, for a vectored write (net.Buffers, as
// yaq's frames go out): the data of an array of 64 KiB or more is one of the
// pieces, referring to the array's own memory rather than a copy, so it
// must not change until the pieces are written. The other pieces are new
// memory.
// It fails as Append does (an *ndarray.Error wrapping ErrDoesNotFit, naming the path
// to the value, or ndarray.ErrMalformed for an invalid array), and then returns
// pieces unchanged.
func (s *Schema) AppendPieces(pieces [][]byte, v any) ([][]byte, error) {
	g := gather{pieces: pieces}
	dst, err := appendValue(nil, s, v, "", 0, &g)
	if err != nil {
		return pieces, err
	}
	if len(dst) > g.mark {
		g.pieces = append(g.pieces, dst[g.mark:])
	}
	return g.pieces, nil
}

func fitErr(path string, v any, s *Schema) error {
	where := ""
	if path != "" {
		where = path + ": "
	}
	return errAt(ErrDoesNotFit, -1, "%s%s is not a %s", where, valueKind(v), s)
}

// valueKind names what a Go value would be on the wire, in Avro's words
// (an array, a map, a long), not Go's ([]interface {}): the reader of
// the error knows the protocol, not this package's types.
func valueKind(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case int8, int16, int32, uint8, uint16:
		return "an int"
	case int, int64, uint, uint32, uint64:
		return "a long"
	case float32:
		return "a float"
	case float64:
		return "a double"
	case string:
		return "a string"
	case []byte:
		return "bytes"
	case *ndarray.Array, ndarray.Array:
		return "an ndarray"
	case []any:
		return "an array of " + codecerr.Count(len(x), "item")
	case map[string]any:
		return "a map of " + codecerr.Count(len(x), "entry")
	}
	switch reflect.ValueOf(v).Kind() {
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map:
		return "a map"
	case reflect.Struct, reflect.Pointer:
		return "a record"
	}
	return fmt.Sprintf("a %T", v)
}

func appendValue(dst []byte, s *Schema, v any, path string, depth int, g *gather) ([]byte, error) {
	if depth > maxValueDepth {
		return dst, errAt(ndarray.ErrTooDeep, -1, "%s: values nested more than %d deep", path, maxValueDepth)
	}
	switch s.Type {
	case "union":
		for i, br := range s.Branches {
			if fits(br, v) {
				return appendValue(appendVarint(dst, int64(i)), br, v, path, depth+1, g)
			}
		}
		return dst, fitErr(path, v, s)
	case "record":
		return appendRecord(dst, s, v, path, depth, g)
	case "array":
		return appendItems(dst, s, v, path, depth, g)
	case "map":
		return appendEntries(dst, s, v, path, depth, g)
	}
	return appendPrimitive(dst, s, v, path)
}

// appendPrimitive encodes a value of a type that holds no other values.
func appendPrimitive(dst []byte, s *Schema, v any, path string) ([]byte, error) {
	switch s.Type {
	case "null":
		if v != nil {
			return dst, fitErr(path, v, s)
		}
		return dst, nil
	case "boolean":
		b, ok := v.(bool)
		if !ok {
			return dst, fitErr(path, v, s)
		}
		if b {
			return append(dst, 1), nil
		}
		return append(dst, 0), nil
	case "int", "long":
		i, ok := asInt(v)
		if !ok || (s.Type == "int" && (i < math.MinInt32 || i > math.MaxInt32)) {
			return dst, fitErr(path, v, s)
		}
		return appendVarint(dst, i), nil
	case "float":
		f, ok := asFloat(v)
		if !ok {
			return dst, fitErr(path, v, s)
		}
		return binary.LittleEndian.AppendUint32(dst, math.Float32bits(float32(f))), nil
	case "double":
		f, ok := asFloat(v)
		if !ok {
			return dst, fitErr(path, v, s)
		}
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(f)), nil
	case "bytes", "fixed":
		b, ok := v.([]byte)
		if !ok || (s.Type == "fixed" && len(b) != s.Size) {
			return dst, fitErr(path, v, s)
		}
		if s.Type == "bytes" {
			dst = appendVarint(dst, int64(len(b)))
		}
		return append(dst, b...), nil
	case "string":
		str, ok := v.(string)
		if !ok {
			return dst, fitErr(path, v, s)
		}
		return append(appendVarint(dst, int64(len(str))), str...), nil
	case "enum":
		str, ok := v.(string)
		if ok {
			for i, sym := range s.Symbols {
				if sym == str {
					return appendVarint(dst, int64(i)), nil
				}
			}
		}
		return dst, fitErr(path, v, s)
	}
	return dst, errAt(ErrSchema, -1, "cannot encode type %q", s.Type)
}

// appendRecord encodes a record: an *ndarray.Array as the YEP-113 ndarray
// record (its data gathered where it lies when g collects pieces), any
// other from a map of its fields.
func appendRecord(dst []byte, s *Schema, v any, path string, depth int, g *gather) ([]byte, error) {
	if s.isArray() {
		a, ok := asArray(v)
		if !ok {
			return dst, fitErr(path, v, s)
		}
		var out []byte
		var err error
		if g != nil && a != nil && len(a.Data) >= gatherMin {
			// Everything up to the data, the data where it lies, then
			// the version.
			if out, err = (ArrayOptions{AllowNonstandard: true}).appendArrayHead(dst, a, 1); err == nil {
				g.pieces = append(g.pieces, out[g.mark:], a.Data)
				g.mark = len(out)
				out = appendVarint(out, arrayVersion)
			}
		} else {
			out, err = ArrayOptions{AllowNonstandard: true}.AppendArray(dst, a)
		}
		if err != nil && path != "" {
			return dst, fmt.Errorf("%s: %w", path, err)
		}
		return out, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return dst, fitErr(path, v, s)
	}
	for _, f := range s.Fields {
		fv, present := m[f.Name]
		if !present && !fits(f.Type, nil) {
			return dst, errAt(ErrDoesNotFit, -1, "%s: the record lacks field %q", pathOr(path), f.Name)
		}
		var err error
		if dst, err = appendValue(dst, f.Type, fv, path+"."+f.Name, depth+1, g); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// appendItems encodes an Avro array from a Go slice or array, in one block.
func appendItems(dst []byte, s *Schema, v any, path string, depth int, g *gather) ([]byte, error) {
	rv := reflect.ValueOf(v)
	if v == nil || (rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array) {
		return dst, fitErr(path, v, s)
	}
	if rv.Len() > 0 {
		dst = appendVarint(dst, int64(rv.Len()))
		for i := 0; i < rv.Len(); i++ {
			var err error
			if dst, err = appendValue(dst, s.Items, rv.Index(i).Interface(), fmt.Sprintf("%s[%d]", path, i), depth+1, g); err != nil {
				return dst, err
			}
		}
	}
	return append(dst, 0), nil
}

// appendEntries encodes an Avro map from a Go map with string keys, in one
// block, its keys sorted so that the bytes do not depend on Go's map order.
func appendEntries(dst []byte, s *Schema, v any, path string, depth int, g *gather) ([]byte, error) {
	rv := reflect.ValueOf(v)
	if v == nil || rv.Kind() != reflect.Map || rv.Type().Key().Kind() != reflect.String {
		return dst, fitErr(path, v, s)
	}
	keys := rv.MapKeys()
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	if len(keys) > 0 {
		dst = appendVarint(dst, int64(len(keys)))
		for _, k := range keys {
			dst = append(appendVarint(dst, int64(len(k.String()))), k.String()...)
			var err error
			if dst, err = appendValue(dst, s.Values, rv.MapIndex(k).Interface(), path+"."+k.String(), depth+1, g); err != nil {
				return dst, err
			}
		}
	}
	return append(dst, 0), nil
}

func pathOr(path string) string {
	if path == "" {
		return "the value"
	}
	return path
}

// fits reports whether v can be encoded as s without looking inside
// containers: how a union picks its branch.
func fits(s *Schema, v any) bool {
	switch s.Type {
	case "null":
		return v == nil
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "int":
		i, ok := asInt(v)
		return ok && i >= math.MinInt32 && i <= math.MaxInt32 && !isFloat(v)
	case "long":
		_, ok := asInt(v)
		return ok && !isFloat(v)
	case "float", "double":
		_, ok := asFloat(v)
		return ok
	case "bytes":
		_, ok := v.([]byte)
		return ok
	case "fixed":
		b, ok := v.([]byte)
		return ok && len(b) == s.Size
	case "string":
		_, ok := v.(string)
		return ok
	case "enum":
		str, ok := v.(string)
		if ok {
			for _, sym := range s.Symbols {
				if sym == str {
					return true
				}
			}
		}
		return false
	case "record":
		if s.isArray() {
			_, ok := asArray(v)
			return ok
		}
		_, ok := v.(map[string]any)
		return ok
	case "array":
		rv := reflect.ValueOf(v)
		return v != nil && (rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array) && !isBytes(v)
	case "map":
		rv := reflect.ValueOf(v)
		return v != nil && rv.Kind() == reflect.Map && rv.Type().Key().Kind() == reflect.String
	case "union":
		for _, br := range s.Branches {
			if fits(br, v) {
				return true
			}
		}
	}
	return false
}

func isBytes(v any) bool { _, ok := v.([]byte); return ok }

// isFloat reports a floating-point value: a float, or a JSON number written
// with a fraction or exponent (json.Number keeps how it was written, which
// is how a union tells 2 from 2.0, as Python does).
func isFloat(v any) bool {
	switch x := v.(type) {
	case float32, float64:
		return true
	case json.Number:
		return strings.ContainsAny(string(x), ".eE")
	}
	return false
}

// asInt returns an integer value of any Go integer type, or a float that is
// a whole number (as JSON decodes numbers).
func asInt(v any) (int64, bool) {
	if n, ok := v.(json.Number); ok {
		if i, err := n.Int64(); err == nil {
			return i, true
		}
		f, err := n.Float64()
		return int64(f), err == nil && f == math.Trunc(f) && f >= math.MinInt64 && f < math.MaxInt64
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int(), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u := rv.Uint()
		return int64(u), u <= math.MaxInt64
	case reflect.Float32, reflect.Float64:
		f := rv.Float()
		return int64(f), f == math.Trunc(f) && f >= math.MinInt64 && f < math.MaxInt64
	}
	return 0, false
}

func asFloat(v any) (float64, bool) {
	if n, ok := v.(json.Number); ok {
		f, err := n.Float64()
		return f, err == nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Float32, reflect.Float64:
		return rv.Float(), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(rv.Uint()), true
	}
	return 0, false
}

func asArray(v any) (*ndarray.Array, bool) {
	switch a := v.(type) {
	case *ndarray.Array:
		return a, a != nil
	case ndarray.Array:
		return &a, true
	}
	return nil, false
}
