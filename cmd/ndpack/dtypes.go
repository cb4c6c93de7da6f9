package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ndpack/ndpack/ndarray"
)

// parseDTypeFlag reads a dtype given on the command line (--dtype,
// --astype): what numpy's np.dtype takes, as ndarray.ParseDType reads it
// ("float64", "<i2", "f4,i2", "(3,)f4", "[('x', '<f4')]", dict specs),
// with the spaces a shell leaves around it ignored, or the command line's
// own shorthand for a record, NAME:DTYPE fields separated by commas
// ("x:<f4,y:<f4,id:<u2"; a field's shape after its dtype: "pos:<f4(3)").
// Its errors quote the spec and say why, without a package prefix.
func parseDTypeFlag(s string) (ndarray.DType, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, ":") && s != "" && strings.IndexByte("[({", s[0]) < 0 {
		return parseFieldList(s)
	}
	dt, err := ndarray.ParseDType(s)
	return dt, dtypeDetail(err)
}

// dtypeDetail is an ndarray error's detail, which quotes the spec and says
// what is wrong with it.
func dtypeDetail(err error) error {
	var e *ndarray.Error
	if errors.As(err, &e) && e.Detail != "" {
		return errors.New(e.Detail)
	}
	return err
}

// parseFieldList reads NAME:DTYPE[(SHAPE)] fields separated by commas, one
// after another in each record.
func parseFieldList(s string) (ndarray.DType, error) {
	var fields []ndarray.Field
	off := 0
	for _, part := range splitOutsideParens(s) {
		name, spec, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok || name == "" {
			return ndarray.DType{}, fmt.Errorf("record field %q: want NAME:DTYPE", part)
		}
		spec = strings.TrimSpace(spec)
		var shape []int
		if i := strings.IndexByte(spec, '('); i > 0 && strings.HasSuffix(spec, ")") {
			var err error
			if shape, err = parseShape(spec[i:]); err != nil {
				return ndarray.DType{}, fmt.Errorf("record field %s: shape %s: %w", name, spec[i:], err)
			}
			spec = spec[:i]
		}
		dt, err := ndarray.ParseDType(spec)
		if err != nil {
			return ndarray.DType{}, fmt.Errorf("record field %s: %w", name, dtypeDetail(err))
		}
		size, err := ndarray.ByteSize(dt, shape)
		if err != nil {
			return ndarray.DType{}, fmt.Errorf("record field %s: %w", name, dtypeDetail(err))
		}
		fields = append(fields, ndarray.Field{Name: name, DType: dt, Shape: shape, Offset: off})
		off += size
	}
	dt, err := ndarray.NewRecord(fields, off)
	return dt, dtypeDetail(err)
}

// splitOutsideParens splits s at the commas outside parentheses and
// brackets.
func splitOutsideParens(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}
