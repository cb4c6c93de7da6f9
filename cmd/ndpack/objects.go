package main

import (
	"errors"
	"fmt"
	"github.com/ndpack/ndpack/internal/peertext"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/ndpack/ndpack/internal/mpwalk"
	"github.com/ndpack/ndpack/internal/mpwire"
	"github.com/ndpack/ndpack/internal/pickle"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// Object arrays (numpy dtype O) hold Python values as a pickle. With
// --objects, inspect and convert read them through internal/pickle, which
// builds data and runs nothing; they leave as an object .npy/.npz member,
// or as plain msgpack values nested by the array's shape.

// pickledObjects describes the msgpack-numpy map at b (kind b'O', its data a
// pickle of the object array) as an object array source, read within
// maxSize bytes (0: npybridge's default for a pickle of its size; -1: not
// read, only listed, as without --objects). why is the dialect's refusal,
// which commands without --objects report.
func pickledObjects(name string, b []byte, why error, maxSize int64) (arraySource, int, error) {
	n, err := mpwalk.Len(b, mpwalk.Limits{MaxDepth: mpwalk.DefaultMaxDepth})
	if err != nil {
		return arraySource{}, 0, err
	}
	if maxSize < 0 {
		// Listed as not read, as an npz member of objects is.
		return arraySource{name: name, err: why}, n, nil
	}
	data, ok := mapBytes(b[:n], "data")
	if !ok {
		return arraySource{}, 0, why
	}
	return arraySource{name: name, err: why, objects: func() (*npybridge.ObjectArray, error) {
		limit := maxSize
		if limit <= 0 {
			limit = npybridge.DefaultObjectsFactor*int64(len(data)) + npybridge.DefaultObjectsSlack
		}
		v, err := pickle.Decode(data, pickle.Options{
			MaxAlloc:    limit,
			MaxSize:     limit,
			ObjectArray: func(shape []int, values []any) any { return &npybridge.ObjectArray{Shape: shape, Values: values} },
		})
		var pe *pickle.Error
		if errors.As(err, &pe) && pe.Option != "" {
			pe.Option = "--max-objects-size" // the bound set here, by its flag
		}
		if err != nil {
			return nil, err
		}
		a, ok := v.(*npybridge.ObjectArray)
		if !ok {
			return nil, fmt.Errorf("msgpack-numpy: the pickle of an object array holds %s", pythonType(v))
		}
		return a, nil
	}}, n, nil
}

// mapBytes returns the bin or str value of key in the msgpack map b.
func mapBytes(b []byte, key string) ([]byte, bool) {
	n, rest, err := mpwire.ReadMapHeaderBytes(b)
	if err != nil {
		return nil, false
	}
	for range n {
		var k []byte
		if k, rest, err = mpwire.ReadStringOrBinZC(rest); err != nil {
			return nil, false
		}
		if string(k) == key {
			v, _, err := mpwire.ReadStringOrBinZC(rest)
			return v, err == nil
		}
		l, err := mpwalk.Len(rest, mpwalk.Limits{MaxDepth: mpwalk.DefaultMaxDepth})
		if err != nil {
			return nil, false
		}
		rest = rest[l:]
	}
	return nil, false
}

// objectsReport is what inspect says about an object array's elements:
// how many of each Python type, and the first few as Python prints them.
type objectsReport struct {
	Types map[string]int `json:"types"`
	First []string       `json:"first"`
}

// inspectObjects reads the object array of src and reports it.
func inspectObjects(src arraySource) arrayReport {
	r := arrayReport{Name: src.name, First: []*number{}}
	a, err := src.objects()
	if err != nil {
		r.Error = describe("", err)
		return r
	}
	r.DType, r.Kind, r.ByteOrder = "|O", "object", "not applicable"
	r.Shape, r.Elements = append([]int{}, a.Shape...), len(a.Values)
	o := &objectsReport{Types: map[string]int{}, First: []string{}}
	for i, v := range a.Values {
		o.Types[pythonType(v)]++
		if i < firstCount {
			o.First = append(o.First, pythonRepr(v, 3))
		}
	}
	r.Objects = o
	return r
}

// printObjects prints an object array's element types and first values.
func printObjects(w interface{ Write([]byte) (int, error) }, indent string, o *objectsReport, elements int) {
	types := make([]string, 0, len(o.Types))
	for t := range o.Types {
		types = append(types, t)
	}
	sort.Slice(types, func(i, j int) bool {
		if o.Types[types[i]] != o.Types[types[j]] {
			return o.Types[types[i]] > o.Types[types[j]]
		}
		return types[i] < types[j]
	})
	parts := make([]string, len(types))
	for i, t := range types {
		parts[i] = fmt.Sprintf("%s %d", t, o.Types[t])
	}
	more := ""
	if elements > len(o.First) {
		more = ", ..."
	}
	fmt.Fprintf(w, "%stypes     %s\n%sfirst     [%s%s]\n", indent, peertext.Line(strings.Join(parts, ", ")), indent, peertext.Line(strings.Join(o.First, ", ")), more)
}

// pythonType names a value's Python type, as type(v).__name__ does.
func pythonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case int64, *big.Int:
		return "int"
	case float64:
		return "float"
	case complex128:
		return "complex"
	case string:
		return "str"
	case []byte:
		return "bytes"
	case []any:
		return "list"
	case npybridge.Tuple:
		return "tuple"
	case npybridge.Dict:
		return "dict"
	case npybridge.Set:
		return "set"
	case *npybridge.ObjectArray:
		return "ndarray[object]"
	case *ndarray.Array:
		if len(x.Shape) == 0 {
			return "numpy scalar " + x.DType.String()
		}
		return "ndarray " + x.DType.String()
	}
	return fmt.Sprintf("%T", v)
}

// pythonRepr shows v roughly as Python's repr does, nested containers to
// depth levels, long texts cut.
func pythonRepr(v any, depth int) string {
	list := func(open, close string, items []any) string {
		if depth <= 0 {
			return open + "..." + close
		}
		var parts []string
		for i, e := range items {
			if i == 4 {
				parts = append(parts, "...")
				break
			}
			parts = append(parts, pythonRepr(e, depth-1))
		}
		return open + strings.Join(parts, ", ") + close
	}
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case int64:
		return strconv.FormatInt(x, 10)
	case *big.Int:
		return pyInt(x)
	case float64:
		switch {
		case math.IsNaN(x):
			return "nan"
		case math.IsInf(x, 0):
			return map[bool]string{true: "inf", false: "-inf"}[x > 0]
		}
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eE") {
			s += ".0"
		}
		return s
	case complex128:
		return fmt.Sprintf("(%g%+gj)", real(x), imag(x))
	case string:
		if len(x) > 40 {
			return pyQuote(x[:40]) + "..."
		}
		return pyQuote(x)
	case []byte:
		if len(x) > 40 {
			return "b" + pyQuote(string(x[:40])) + "..."
		}
		return "b" + pyQuote(string(x))
	case []any:
		return list("[", "]", x)
	case npybridge.Tuple:
		return list("(", ")", x)
	case npybridge.Set:
		return list("{", "}", x)
	case npybridge.Dict:
		items := make([]any, 0, len(x))
		for _, it := range x {
			items = append(items, dictItem{it.Key, it.Value})
		}
		return list("{", "}", items)
	case dictItem:
		return pythonRepr(x.k, depth) + ": " + pythonRepr(x.v, depth)
	case *npybridge.ObjectArray:
		return "array(" + list("[", "]", x.Values) + ", dtype=object)"
	case *ndarray.Array:
		if t, ok := numpyText(x); ok {
			return pythonRepr(t, depth) // np.str_ and np.bytes_, as str() and bytes() print them
		}
		return "array(" + x.DType.String() + " " + ndarray.FormatShape(x.Shape) + ")"
	}
	return fmt.Sprint(v)
}

type dictItem struct{ k, v any }

// pyQuote quotes s as Python's repr does: in single quotes unless it
// holds one and no double quote.
func pyQuote(s string) string {
	q := strconv.Quote(s)
	inner := strings.ReplaceAll(q[1:len(q)-1], `\"`, `"`)
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		return `"` + inner + `"`
	}
	return "'" + strings.ReplaceAll(inner, "'", `\'`) + "'"
}

// objectsFlags are --objects and --max-objects-size.
type objectsFlags struct {
	read    bool
	maxSize int64
}

// byteSize is a flag of a size in bytes: a number, or one with the suffix
// K, M, G or T (KiB, MiB, GiB, TiB; "KiB" and "KB" are read the same).
type byteSize int64

func (b *byteSize) String() string { return strconv.FormatInt(int64(*b), 10) }

func (b *byteSize) Set(s string) error {
	t := strings.ToUpper(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "I")
	shift := 0
	if t != "" {
		if i := strings.IndexByte("KMGT", t[len(t)-1]); i >= 0 {
			shift, t = 10*(i+1), t[:len(t)-1]
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt64>>shift {
		return fmt.Errorf("%q is not a size in bytes (a positive number, or one with K, M, G or T)", s)
	}
	*b = byteSize(n << shift)
	return nil
}
