package zarr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ndpack/ndpack/internal/jsonscan"
	"github.com/ndpack/ndpack/ndarray"
)

// MaxMetadataSize bounds a .zarray, .zgroup or .zattrs read from a store,
// and MaxMetadataDepth how deep its JSON may nest (a record dtype's fields
// at every level, the attributes' values), checked before it is decoded.
const (
	MaxMetadataSize  = 16 << 20
	MaxMetadataDepth = 2*ndarray.MaxRecordDepth + 8
)

// Meta is an array's .zarray: what Zarr v2 says of its elements and how
// they are cut into chunks. The zero Meta is not valid; Validate says
// why.
type Meta struct {
	// Shape is the array's shape; Chunks the shape of each chunk, one
	// positive length per dimension. A chunk at the edge of the grid is
	// stored whole, its elements past the array's edge padding.
	Shape, Chunks []int
	// DType is the elements' type: a plain dtype or a record without
	// padding or titles.
	DType ndarray.DType
	// Fill is what a chunk that is not stored holds in every element:
	// one item's bytes, in DType's layout and byte order, or nil for
	// Zarr's null (zero bytes, to ndpack).
	Fill []byte
	// Order is the order of the elements in each chunk: 'C' (row-major)
	// or 'F' (column-major). The zero value means 'C'.
	Order byte
	// Compressor compresses each chunk: nil stores them as they are.
	Compressor *Compressor
	// DimensionSeparator joins a chunk's grid indices in its key: '.'
	// ("0.1") or '/' ("0/1"). The zero value means '.'.
	DimensionSeparator byte
}

// Compressor is the codec of an array's chunks, as numcodecs names it.
// ndpack reads and writes numcodecs' zlib: a zlib stream (RFC 1950, its
// header and Adler-32 included) of the chunk's bytes, at Level 0-9
// (numcodecs' default is 1; numpy's savez_compressed deflates at 6).
type Compressor struct {
	ID    string // "zlib"
	Level int
}

// Zlib is numcodecs' Zlib(level).
func Zlib(level int) *Compressor { return &Compressor{ID: "zlib", Level: level} }

// Validate checks that the metadata describes an array ndpack reads and
// writes: a dtype Zarr v2 carries, a shape and chunks of the same
// dimensions whose elements and bytes count in an int, chunks of at
// least one element a side, 'C' or 'F' order, the separator '.' or '/',
// no compressor or zlib at a level from -1 to 9, a fill value of one item.
// It fails with an *ndarray.Error wrapping errMetadata or ErrUnsupported.
func (m *Meta) Validate() error {
	if _, err := dtypeValue(m.DType); err != nil {
		return err
	}
	if len(m.Chunks) != len(m.Shape) {
		return errAt(errMetadata, -1, "chunks %s and shape %s differ in dimensions", ndarray.FormatShape(m.Chunks), ndarray.FormatShape(m.Shape))
	}
	if _, err := ndarray.ByteSize(m.DType, m.Shape); err != nil {
		return wrapErr(errMetadata, err, "shape")
	}
	for i, c := range m.Chunks {
		if c < 1 {
			return errAt(errMetadata, -1, "chunk dimension %d is %d; chunks are at least 1 a side", i, c)
		}
	}
	if _, err := ndarray.ByteSize(m.DType, m.Chunks); err != nil {
		return wrapErr(errMetadata, err, "chunks")
	}
	switch m.Order {
	case 0, 'C', 'F':
	default:
		return errAt(errMetadata, -1, "order %q; Zarr v2 has C and F", m.Order)
	}
	switch m.DimensionSeparator {
	case 0, '.', '/':
	default:
		return errAt(errMetadata, -1, "dimension_separator %q; Zarr v2 has \".\" and \"/\"", m.DimensionSeparator)
	}
	if c := m.Compressor; c != nil && (c.ID != "zlib" || c.Level < -1 || c.Level > 9) {
		return errAt(ErrUnsupported, -1, "the compressor %s; ndpack reads and writes none and zlib at levels -1 to 9", c)
	}
	if m.Fill != nil && len(m.Fill) != m.DType.ItemSize {
		return errAt(errMetadata, -1, "a fill value of %d bytes for %s", len(m.Fill), m.DType)
	}
	return nil
}

// String names the compressor as numcodecs' repr does: Zlib(level=6).
func (c *Compressor) String() string {
	if c == nil {
		return "None"
	}
	if c.ID == "zlib" {
		return fmt.Sprintf("Zlib(level=%d)", c.Level)
	}
	return strconv.Quote(c.ID)
}

func (m *Meta) order() byte {
	if m.Order == 0 {
		return 'C'
	}
	return m.Order
}

func (m *Meta) separator() byte {
	if m.DimensionSeparator == 0 {
		return '.'
	}
	return m.DimensionSeparator
}

// Marshal returns the .zarray as zarr-python 2.x writes it: JSON indented
// by four spaces, keys sorted, ASCII only. It fails as Validate does.
func (m *Meta) Marshal() ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	dt, _ := dtypeValue(m.DType)
	fill, err := fillValue(m.Fill, m.DType)
	if err != nil {
		return nil, err
	}
	var comp any
	if m.Compressor != nil {
		comp = object{{"id", m.Compressor.ID}, {"level", m.Compressor.Level}}
	}
	meta := object{
		{"chunks", ints(m.Chunks)},
		{"compressor", comp},
		{"dtype", dt},
		{"fill_value", fill},
		{"filters", nil},
		{"order", string(m.order())},
		{"shape", ints(m.Shape)},
		{"zarr_format", 2},
	}
	if m.DimensionSeparator == '/' {
		meta = append(meta, member{"dimension_separator", "/"})
	}
	return appendPyJSON(nil, meta, 0), nil
}

func ints(s []int) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// GroupMetadata is a .zgroup as zarr-python writes it.
var GroupMetadata = []byte("{\n    \"zarr_format\": 2\n}")

// checkJSON bounds metadata from a store before it is decoded.
func checkJSON(b []byte, what string) error {
	if err := jsonscan.Check(b, MaxMetadataSize, MaxMetadataDepth); err != nil {
		var je *jsonscan.Error
		errors.As(err, &je)
		class := ndarray.ErrTooDeep
		if je.TooLarge {
			class = ndarray.ErrTooLarge
		}
		return errAt(class, je.Offset, "%s: %s (MaxMetadataSize, MaxMetadataDepth)", what, je.Detail)
	}
	return nil
}

// ParseMeta reads a .zarray as zarr-python 2.x does. Every key
// zarr-python requires must be there (zarr_format 2, shape, chunks,
// dtype, compressor, fill_value, order, filters); dimension_separator may
// be; other keys are ignored. The JSON is bounded by MaxMetadataSize and
// MaxMetadataDepth before it is decoded, and the result is valid
// (Validate).
// It fails with an *ndarray.Error wrapping errMetadata (not such JSON),
// ErrUnsupported (a compressor other than zlib, filters, an object dtype,
// a zarr_format other than 2) or ndarray.ErrTooLarge.
func ParseMeta(b []byte) (*Meta, error) {
	if err := checkJSON(b, ".zarray"); err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return nil, wrapErr(errMetadata, err, ".zarray is not a JSON object")
	}
	for _, k := range []string{"zarr_format", "shape", "chunks", "dtype", "compressor", "fill_value", "order", "filters"} {
		if _, ok := fields[k]; !ok {
			return nil, errAt(errMetadata, -1, ".zarray has no %q", k)
		}
	}
	if f := string(bytes.TrimSpace(fields["zarr_format"])); f != "2" {
		return nil, errAt(ErrUnsupported, -1, "zarr_format %s; ndpack reads Zarr v2", quoteJSON([]byte(f)))
	}
	m := &Meta{}
	var err error
	if m.Shape, err = parseDims(fields["shape"], "shape"); err != nil {
		return nil, err
	}
	if m.Chunks, err = parseDims(fields["chunks"], "chunks"); err != nil {
		return nil, err
	}
	if m.DType, err = parseDType(fields["dtype"], 0); err != nil {
		return nil, err
	}
	if m.Fill, err = parseFill(fields["fill_value"], m.DType); err != nil {
		return nil, err
	}
	if err := m.parseCodecs(fields); err != nil {
		return nil, err
	}
	return m, m.Validate()
}

// parseCodecs reads order, compressor, filters and dimension_separator.
func (m *Meta) parseCodecs(fields map[string]json.RawMessage) error {
	var order string
	if json.Unmarshal(fields["order"], &order) != nil || order != "C" && order != "F" {
		return errAt(errMetadata, -1, "order is %s, not \"C\" or \"F\"", quoteJSON(fields["order"]))
	}
	m.Order = order[0]
	if sep, ok := fields["dimension_separator"]; ok && string(bytes.TrimSpace(sep)) != "null" {
		var s string
		if json.Unmarshal(sep, &s) != nil || s != "." && s != "/" {
			return errAt(errMetadata, -1, "dimension_separator is %s, not \".\" or \"/\"", quoteJSON(sep))
		}
		m.DimensionSeparator = s[0]
	}
	var filters []json.RawMessage
	if err := json.Unmarshal(fields["filters"], &filters); err != nil {
		return errAt(errMetadata, -1, "filters is %s, not null or a list", quoteJSON(fields["filters"]))
	}
	if len(filters) > 0 {
		return errAt(ErrUnsupported, -1, "filters %s; ndpack reads arrays without filters", quoteJSON(fields["filters"]))
	}
	comp := bytes.TrimSpace(fields["compressor"])
	if string(comp) == "null" {
		return nil
	}
	var c struct {
		ID    *string          `json:"id"`
		Level *json.RawMessage `json:"level"`
	}
	if json.Unmarshal(comp, &c) != nil || c.ID == nil {
		return errAt(errMetadata, -1, "compressor is %s, not null or a codec's {\"id\": ...}", quoteJSON(comp))
	}
	if *c.ID != "zlib" {
		return errAt(ErrUnsupported, -1, "the compressor %q; ndpack reads none and zlib (numcodecs' Zlib)", *c.ID)
	}
	m.Compressor = &Compressor{ID: "zlib", Level: 1}
	if c.Level != nil {
		l, err := strconv.Atoi(strings.TrimSpace(string(*c.Level)))
		if err != nil {
			return errAt(errMetadata, -1, "the zlib level is %s, not an integer", quoteJSON(*c.Level))
		}
		m.Compressor.Level = l
	}
	return nil
}

// ParseGroup checks a .zgroup: a JSON object whose zarr_format is 2.
// It fails with an *ndarray.Error wrapping errMetadata, ErrUnsupported or
// ndarray.ErrTooLarge.
func ParseGroup(b []byte) error {
	if err := checkJSON(b, ".zgroup"); err != nil {
		return err
	}
	var g map[string]json.RawMessage
	if err := json.Unmarshal(b, &g); err != nil {
		return wrapErr(errMetadata, err, ".zgroup is not a JSON object")
	}
	if f := string(bytes.TrimSpace(g["zarr_format"])); f != "2" {
		return errAt(ErrUnsupported, -1, ".zgroup: zarr_format %s; ndpack reads Zarr v2", quoteJSON([]byte(f)))
	}
	return nil
}

// MarshalAttrs returns .zattrs as zarr-python writes them: the
// attributes' JSON indented by four spaces, keys sorted, ASCII only. A
// value is a string, a number (int, int64, float64), a bool, nil, a
// []string or []any of such values, or a map[string]any.
func MarshalAttrs(attrs map[string]any) []byte {
	return appendPyJSON(nil, attrsValue(attrs), 0)
}

func attrsValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		o := make(object, 0, len(v))
		for k, e := range v {
			o = append(o, member{k, attrsValue(e)})
		}
		return o
	case []string:
		l := make([]any, len(v))
		for i, s := range v {
			l[i] = s
		}
		return l
	case []any:
		l := make([]any, len(v))
		for i, e := range v {
			l[i] = attrsValue(e)
		}
		return l
	}
	return v
}
